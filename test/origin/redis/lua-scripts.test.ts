/** Every return code of every Lua script, against the real Redis; and each script's SHA pinned. */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { activityKeys, CONSUMER_GROUP, type ActivityKeys } from '../../../origin/redis/keys.js';
import { defineScripts, LUA_DIR, readScripts } from '../../../origin/redis/scripts/load.js';
import { isEligible } from '../../../contract/eligibility.js';
import { REDIS_URL } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';
import { ReplyCode } from '../../../origin/redis/scripts/reply-codes.js';

const redis = new Redis(REDIS_URL);
const scripts = defineScripts(redis);
let keys: ActivityKeys;

const warm = (stock: number, state = 'open', maxPerUser = 1) =>
  scripts.warmup([keys.stock, keys.holders, keys.events, keys.config], [stock, state, maxPerUser, CONSUMER_GROUP]);
const reserve = (
  userId: string,
  quantity = 1,
  reservationId = `r-${userId}-${uniqueId()}`,
  borrow = 0,
  claims = '{}',
  checkEligibility = 1,
) =>
  scripts.reserve(
    [keys.stock, keys.holders, keys.events, keys.config, keys.borrowing, keys.denied],
    [userId, quantity, reservationId, 'req-1', 'a'.repeat(32), 1700000000000, borrow, claims, checkEligibility],
  );
/** lua/deny-1.lua: pairs of userId, signed revision (+ denied, − allowed). */
const deny = (...pairs: (string | number)[]) => scripts.deny([keys.denied], pairs);
const release = (reservationId: string, userId: string, quantity: number, cap: number) =>
  scripts.release([keys.stock, keys.holders, keys.released], [reservationId, userId, quantity, cap]);

beforeEach(() => {
  keys = activityKeys(uniqueId(), uniqueId());
});
afterAll(async () => {
  await redis.quit();
});

describe('script SHAs are pinned (editing a script must update this test)', () => {
  it('matches the reviewed versions', () => {
    const shas = Object.fromEntries([...readScripts().values()].map((s) => [s.name, s.sha]));
    expect(shas).toEqual({
      abandon: '2b989b4b3acaaf566ad8e9f2f052fd6fc49695ae',
      confirm: '39e7853db705781ce21086218e3f7b5cbc70109b',
      deny: '43ae373dad66034f4992221f6bb64aabb60cf281',
      'draw-reserve': 'f6c209bcf73f8f7bd7246b830d7f7105536ff82e',
      'give-back': '646319f18254a407af81bc781a1cf5dba116e0f2',
      group: '2f9bfdccc68011f113db5e7fd136799064d55d49',
      primary: '953b21c456d753fb3b8ab274cb9a10b1d16514fc',
      replication: 'f502fba7d5d8378dbff0b52a67821621f41d133f',
      recover: '8befc69991555975cc9dac433d5756adc72a3e6a',
      enter: '48725ada91b3cb97892535a0707f621edfce8f97',
      'entry-page': 'a1f768d6cd47f894304bd50c9c4b376c62056ac2',
      refill: '08e91ecb556487126cb9d0edc75e27c05c514115',
      release: 'b8b18dc33efdeafb5795e043a0748b788c141460',
      requeue: 'bc7201d22d8e37554888e0021ea458aec6e17d4f',
      reserve: '1760850b8c7db772acb1f96707013726802a92a8',
      take: '48b71870e4832762bf7236e6e4d7998ce62cbdf5',
      warmup: 'd904595dbacf52d5437b2cc653cd30ce85a7f982',
    });
  });
});

describe('lua/deny-1.lua', () => {
  it('writes a user only when the revision is newer than the one held, whatever the sign', async () => {
    expect(await deny('7', 2, '8', -1)).toBe(2);
    expect(await deny('7', -1)).toBe(0); // an older "allowed" (a late write) does not undo the deny
    expect(await deny('7', -2)).toBe(0); // the same revision changes nothing either
    expect(await redis.hget(keys.denied, '7')).toBe('2');
    expect(await deny('7', -3, '8', 2)).toBe(2);
    expect(await redis.hgetall(keys.denied)).toEqual({ '7': '-3', '8': '2' });
  });
});

describe('includes', () => {
  it('the reply codes are one table (lua/includes/reply-codes.lua), mirrored once in TypeScript, one meaning per number', () => {
    const lua = readFileSync(`${LUA_DIR}/includes/reply-codes.lua`, 'utf8');
    const table = Object.fromEntries(
      [...lua.matchAll(/^ {2}([A-Z_]+) = (-?\d+),$/gm)].map((m) => [m[1]!, Number(m[2])]),
    );
    expect(table).toEqual(ReplyCode);
    expect(new Set(Object.values(ReplyCode)).size).toBe(Object.keys(ReplyCode).length);
  });

  it('every script that answers a code includes the one table and writes no code as a number', () => {
    for (const s of readScripts().values()) {
      const codes = [...s.source.matchAll(/return \{ (-?\d+|REPLY\.[A-Z_]+)/g)].map((m) => m[1]!);
      if (codes.length === 0) continue;
      expect(s.source.match(/^local REPLY = \{$/gm), s.name).toHaveLength(1);
      for (const code of codes) expect(code, s.name).toMatch(/^REPLY\./);
    }
  });

  it('the reservation event is written once (lua/includes) and expanded into every script that appends it', () => {
    const scripts = readScripts();
    for (const name of ['reserve', 'draw-reserve', 'requeue', 'confirm']) {
      const source = scripts.get(name)!.source;
      expect(source).not.toMatch(/^--- @include/m);
      expect(source.match(/local function addReservationEvent/g)).toHaveLength(1);
      expect(source.match(/'XADD'/g)).toHaveLength(1); // only inside the included function
    }
  });

  it('the reserve rule is written once (lua/includes/reserve-rule.lua) for the purchase and the draw', () => {
    const scripts = readScripts();
    for (const name of ['reserve', 'draw-reserve']) {
      const source = scripts.get(name)!.source;
      expect(source.match(/local function decide\(/g)).toHaveLength(1);
      // Each refusal code is returned by the rule alone (the draw's batch writes, it does not decide).
      const refusals = [
        'NOT_WARMED',
        'PAUSED',
        'ENDED',
        'SOLD_OUT',
        'LIMIT_EXCEEDED',
        'INSUFFICIENT_STOCK',
        'DENIED',
        'NOT_ELIGIBLE',
      ];
      for (const name of refusals) expect(source.split(`return REPLY.${name}\n`)).toHaveLength(2);
    }
  });
});

describe('lua/reserve-6.lua', () => {
  it('DENIED: a denied user gets no unit; a reservation held from before stands (a repeat)', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await deny('7', 2, '8', 1);
    expect(await reserve('8')).toEqual([ReplyCode.DENIED]);
    expect(await reserve('7', 1, 'res-2')).toEqual([ReplyCode.ALREADY, 'res-1']);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.xlen(keys.events)).toBe(1);
    await deny('8', -2); // allowed again
    expect((await reserve('8', 1, 'res-8'))[0]).toBe(ReplyCode.DONE);
  });

  it('NOT_ELIGIBLE: the rule in the config hash against the claims; "" = everyone; the draw (0) skips the rule, not the deny list', async () => {
    await warm(5, 'open', 1);
    await redis.hset(keys.config, 'eligibility', JSON.stringify({ claim: 'tier', values: ['gold'] }));
    expect(await reserve('7', 1, 'r7', 0, JSON.stringify({ tier: 'silver' }))).toEqual([ReplyCode.NOT_ELIGIBLE]);
    expect(await reserve('7', 1, 'r7', 0, '{}')).toEqual([ReplyCode.NOT_ELIGIBLE]);
    expect(await reserve('7', 1, 'r7', 0, JSON.stringify({ tier: 'gold' }))).toEqual([ReplyCode.DONE, 'r7', 4]);
    expect(await reserve('8', 1, 'r8', 0, '{}', 0)).toEqual([ReplyCode.DONE, 'r8', 3]);
    await deny('9', 1);
    expect(await reserve('9', 1, 'r9', 0, '{}', 0)).toEqual([ReplyCode.DENIED]);
    await redis.hset(keys.config, 'eligibility', '');
    expect(await reserve('10', 1, 'r10', 0, '{}')).toEqual([ReplyCode.DONE, 'r10', 2]);
  });

  it('eligibility in Lua says what contract/eligibility.ts isEligible says, case by case', async () => {
    await warm(1000, 'open', 1);
    const rules = [
      { claim: 'tier', values: ['gold'] },
      { claim: 'tier', values: ['gold', 'platinum'] },
      { claim: 'org:role', values: ['staff'] },
    ];
    const claimsCases: Record<string, unknown>[] = [
      {},
      { tier: 'gold' },
      { tier: 'silver' },
      { tier: ['silver', 'gold'] },
      { tier: ['silver'] },
      { tier: [] },
      { tier: 'platinum' },
      { 'org:role': 'staff' },
      { 'org:role': ['x', 'staff'] },
      { other: 'gold' },
    ];
    let n = 0;
    for (const rule of rules) {
      await redis.hset(keys.config, 'eligibility', JSON.stringify(rule));
      for (const claims of claimsCases) {
        const userId = String(++n);
        const code = (await reserve(userId, 1, `r${n}`, 0, JSON.stringify(claims)))[0];
        const expected = isEligible(rule, claims) ? ReplyCode.DONE : ReplyCode.NOT_ELIGIBLE;
        expect([JSON.stringify(rule), JSON.stringify(claims), code]).toEqual([
          JSON.stringify(rule),
          JSON.stringify(claims),
          expected,
        ]);
      }
    }
  });

  it('OK: decrements stock, records the holder and appends one event with every field', async () => {
    await warm(5);
    const reply = await reserve('7', 1, 'res-1');
    expect(reply).toEqual([ReplyCode.DONE, 'res-1', 4]);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.hget(keys.holders, '7')).toBe('res-1');
    const events = await redis.xrange(keys.events, '-', '+');
    expect(events).toHaveLength(1);
    expect(events[0]![1]).toEqual([
      'reservationId',
      'res-1',
      'requestId',
      'req-1',
      'userId',
      '7',
      'quantity',
      '1',
      'traceId',
      'a'.repeat(32),
      'ts',
      '1700000000000',
    ]);
  });

  it('EXISTS: a holder gets the same reservation back and nothing changes', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    expect(await reserve('7', 1, 'res-2')).toEqual([ReplyCode.ALREADY, 'res-1']);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.xlen(keys.events)).toBe(1);
  });

  it('NOT_WARMED: no stock key', async () => {
    expect(await reserve('7')).toEqual([ReplyCode.NOT_WARMED]);
    expect(await redis.exists(keys.events, keys.holders)).toBe(0);
  });

  it('NOT_WARMED: stock present but config lost', async () => {
    await redis.set(keys.stock, 5);
    expect(await reserve('7')).toEqual([ReplyCode.NOT_WARMED]);
    expect(await redis.get(keys.stock)).toBe('5');
  });

  it('PAUSED and ENDED come from the config hash', async () => {
    await warm(5, 'paused');
    expect(await reserve('7')).toEqual([ReplyCode.PAUSED]);
    await redis.hset(keys.config, 'state', 'stopped');
    expect(await reserve('7')).toEqual([ReplyCode.ENDED]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.hlen(keys.holders)).toBe(0);
  });

  it('INSUFFICIENT_STOCK: some units left but fewer than asked for; SOLD_OUT only at zero; nothing written', async () => {
    await warm(2, 'open', 3);
    expect(await reserve('7', 3)).toEqual([ReplyCode.INSUFFICIENT_STOCK]);
    expect(await redis.get(keys.stock)).toBe('2');
    expect((await reserve('8', 2))[0]).toBe(ReplyCode.DONE);
    expect(await reserve('9', 1)).toEqual([ReplyCode.SOLD_OUT]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.xlen(keys.events)).toBe(1);
  });

  it('LIMIT_EXCEEDED: quantity above maxPerUser', async () => {
    await warm(10, 'open', 2);
    expect(await reserve('7', 3)).toEqual([ReplyCode.LIMIT_EXCEEDED]);
    expect((await reserve('7', 2))[0]).toBe(ReplyCode.DONE);
    expect(await redis.get(keys.stock)).toBe('8');
  });
});

describe('lua/draw-reserve-6.lua', () => {
  const drawReserve = (...winners: [userId: string, quantity: number][]) =>
    scripts['draw-reserve'](
      [keys.stock, keys.holders, keys.events, keys.config, keys.borrowing, keys.denied],
      [1700000000000, ...winners.flatMap(([u, q]) => [u, q, `res-${u}`, `draw-${u}`, 'b'.repeat(32)])],
    );

  it('decides a batch in order as one reserve-6 call after another: every code, deny list checked, eligibility not', async () => {
    await warm(4, 'open', 2);
    await reserve('1', 1, 'res-held');
    await deny('2', 1);
    // The draw decides eligibility itself: a rule in the config hash does not refuse its winners.
    await redis.hset(keys.config, 'eligibility', JSON.stringify({ claim: 'tier', values: ['gold'] }));
    expect(await drawReserve(['1', 1], ['2', 1], ['3', 3], ['4', 2], ['5', 2], ['6', 1], ['7', 1])).toEqual([
      ...[ReplyCode.ALREADY, 'res-held', 0],
      ...[ReplyCode.DENIED, '', 0],
      ...[ReplyCode.LIMIT_EXCEEDED, '', 0],
      ...[ReplyCode.DONE, 'res-4', 1],
      ...[ReplyCode.INSUFFICIENT_STOCK, '', 0],
      ...[ReplyCode.DONE, 'res-6', 0],
      ...[ReplyCode.SOLD_OUT, '', 0],
    ]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.hgetall(keys.holders)).toEqual({ '1': 'res-held', '4': 'res-4', '6': 'res-6' });
    const events = await redis.xrange(keys.events, '-', '+');
    expect(events.map((e) => e[1])).toEqual([
      expect.arrayContaining(['res-held']),
      [
        'reservationId',
        'res-4',
        'requestId',
        'draw-4',
        'userId',
        '4',
        'quantity',
        '2',
        'traceId',
        'b'.repeat(32),
        'ts',
        '1700000000000',
      ],
      [
        'reservationId',
        'res-6',
        'requestId',
        'draw-6',
        'userId',
        '6',
        'quantity',
        '1',
        'traceId',
        'b'.repeat(32),
        'ts',
        '1700000000000',
      ],
    ]);
  });

  it('a user listed twice in one batch: the second finds the first grant (EXISTS), as a second reserve-6 call would', async () => {
    await warm(5, 'open', 2);
    expect(await drawReserve(['1', 1], ['2', 2], ['1', 1])).toEqual([
      ...[ReplyCode.DONE, 'res-1', 4],
      ...[ReplyCode.DONE, 'res-2', 2],
      ...[ReplyCode.ALREADY, 'res-1', 0],
    ]);
    expect(await redis.get(keys.stock)).toBe('2');
    expect(await redis.hgetall(keys.holders)).toEqual({ '1': 'res-1', '2': 'res-2' });
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('a batch larger than one unpack slice (2,500 winners): every grant written, in draw order', async () => {
    await warm(2_400);
    await deny('1000', 1);
    const winners = Array.from({ length: 2_500 }, (_, i) => [String(i + 1), 1] as [string, number]);
    const reply = await drawReserve(...winners);
    const codes = Array.from({ length: 2_500 }, (_, i) => reply[3 * i]);
    expect(codes.filter((c) => c === ReplyCode.DONE)).toHaveLength(2_400);
    expect(codes[999]).toBe(ReplyCode.DENIED);
    expect(codes.slice(2_401)).toEqual(Array(99).fill(ReplyCode.SOLD_OUT));
    expect(reply.slice(3 * 2_400, 3 * 2_401)).toEqual([ReplyCode.DONE, 'res-2401', 0]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.hlen(keys.holders)).toBe(2_400);
    expect(await redis.hexists(keys.holders, '1000')).toBe(0);
    const events = await redis.xrange(keys.events, '-', '+');
    expect(events.map((e) => e[1][5])).toEqual(
      winners.map(([u]) => u).filter((u) => u !== '1000' && Number(u) <= 2_401),
    );
  });

  it('NOT_WARMED, PAUSED, ENDED: every winner of the batch gets the code and nothing moves', async () => {
    expect(await drawReserve(['1', 1], ['2', 1])).toEqual([ReplyCode.NOT_WARMED, '', 0, ReplyCode.NOT_WARMED, '', 0]);
    await warm(5, 'paused');
    expect(await drawReserve(['1', 1])).toEqual([ReplyCode.PAUSED, '', 0]);
    await redis.hset(keys.config, 'state', 'stopped');
    expect(await drawReserve(['1', 1])).toEqual([ReplyCode.ENDED, '', 0]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.exists(keys.holders)).toBe(0);
    expect(await redis.xlen(keys.events)).toBe(0);
  });
});

describe('lua/entry-page-1.lua', () => {
  it('answers a range of the entry list as one string of lines joined by newlines, "" past the end', async () => {
    await redis.rpush(keys.entryList, '7:1', '42:2', '9:1');
    expect(await scripts['entry-page']([keys.entryList], [0, 1])).toBe('7:1\n42:2');
    expect(await scripts['entry-page']([keys.entryList], [1, 9])).toBe('42:2\n9:1');
    expect(await scripts['entry-page']([keys.entryList], [3, 5])).toBe('');
    await redis.del(keys.entryList);
  });
});

describe('lua/release-3.lua', () => {
  it('RELEASED: gives units back within the cap and frees the holder', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    expect(await release('res-1', '7', 1, 5)).toEqual([ReplyCode.DONE, 1]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.hget(keys.holders, '7')).toBeNull();
    expect(await redis.hget(keys.released, 'res-1')).toBe('1');
  });

  it('RELEASED without restock when MySQL does not have the unit (cap) or no cap is given', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await reserve('8', 1, 'res-2');
    expect(await release('res-1', '7', 1, 3)).toEqual([ReplyCode.DONE, 0]);
    expect(await release('res-2', '8', 1, -1)).toEqual([ReplyCode.DONE, 0]);
    expect(await redis.get(keys.stock)).toBe('3');
    expect(await redis.hlen(keys.holders)).toBe(0);
  });

  it('ALREADY: a second release changes nothing and reports the first one', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    expect(await release('res-1', '7', 1, 5)).toEqual([ReplyCode.ALREADY, 1]);
    expect(await redis.get(keys.stock)).toBe('5');
  });

  it('keeps the holder when it is a different reservation of the same user (surplus)', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    expect(await release('res-old', '7', 1, 10)).toEqual([ReplyCode.DONE, 1]);
    expect(await redis.hget(keys.holders, '7')).toBe('res-1');
  });

  it('NOT_WARMED: refuses without creating a stock key', async () => {
    expect(await release('res-1', '7', 1, 5)).toEqual([ReplyCode.NOT_WARMED]);
    expect(await redis.exists(keys.stock, keys.released)).toBe(0);
  });
});

describe('lua/warmup-4.lua', () => {
  it('LOADED: sets stock, config (with the primary that took the load) and the consumer group', async () => {
    expect(await warm(100, 'open', 2)).toEqual([ReplyCode.DONE, 100, 0]);
    expect(await redis.get(keys.stock)).toBe('100');
    const runId = /run_id:(\w+)/.exec(await redis.info('server'))![1];
    expect(await redis.hgetall(keys.config)).toEqual({ state: 'open', maxPerUser: '2', provenPrimary: runId });
    const groups = (await redis.xinfo('GROUPS', keys.events)) as unknown[][];
    expect(groups[0]).toContain(CONSUMER_GROUP);
  });

  it('ALREADY: a second warm-up never resets the stock of a sale in progress', async () => {
    await warm(100);
    await reserve('7');
    expect(await warm(100, 'paused')).toEqual([ReplyCode.ALREADY, 99, 1]);
    expect(await redis.get(keys.stock)).toBe('99');
    expect(await redis.hget(keys.config, 'state')).toBe('paused');
    // Not re-recorded: a primary that changed since the load has not been proven by this warm-up.
    await redis.hset(keys.config, 'provenPrimary', 'the-primary-at-the-load');
    await warm(100, 'open');
    expect(await redis.hget(keys.config, 'provenPrimary')).toBe('the-primary-at-the-load');
  });

  it('HAS_HISTORY: refuses when events exist but the stock key is gone (Redis lost data)', async () => {
    await warm(100);
    await reserve('7');
    await redis.del(keys.stock);
    expect(await warm(100)).toEqual([ReplyCode.HAS_HISTORY]);
    expect(await redis.exists(keys.stock)).toBe(0);
  });
});

const refill = (reservationId: string, quantity: number) =>
  scripts.refill([keys.stock, keys.refilled], [reservationId, quantity]);
const allKeys = () => [
  keys.stock,
  keys.holders,
  keys.events,
  keys.config,
  keys.released,
  keys.refilled,
  keys.borrowing,
  keys.lent,
  keys.tranches,
];
const recoverWith = (stock: number, holders: [string, string][] = [], released: [string, number][] = []) =>
  scripts.recover(allKeys(), [
    stock,
    'open',
    1,
    CONSUMER_GROUP,
    holders.length,
    ...holders.flat(),
    released.length,
    ...released.flat(),
    1,
    'res-refilled',
    2,
    1,
    'release:7',
    5,
  ]);
const requeue = (reservationId: string, userId: string, quantity = 1) =>
  scripts.requeue(
    [keys.stock, keys.holders, keys.events, keys.released, keys.denied],
    [reservationId, userId, quantity, 'req-9', 'b'.repeat(32), 1700000000001],
  );

describe('lua/refill-2.lua', () => {
  it('REFILLED: adds the units once and records the reservation', async () => {
    await warm(0);
    expect(await refill('res-1', 2)).toEqual([ReplyCode.DONE, 2]);
    expect(await redis.hget(keys.refilled, 'res-1')).toBe('2');
  });

  it('ALREADY: a second refill of the same reservation changes nothing', async () => {
    await warm(0);
    await refill('res-1', 1);
    expect(await refill('res-1', 1)).toEqual([ReplyCode.ALREADY, 1]);
    expect(await redis.get(keys.stock)).toBe('1');
  });

  it('NOT_WARMED: never creates a stock key when Redis lost it', async () => {
    expect(await refill('res-1', 1)).toEqual([ReplyCode.NOT_WARMED]);
    expect(await redis.exists(keys.stock, keys.refilled)).toBe(0);
  });
});

describe('lua/recover-9.lua', () => {
  it('RECOVERED: rewrites stock, holders, released, refilled, tranches and config in one step; clears borrows', async () => {
    await warm(10);
    await reserve('7', 1, 'res-7');
    await redis.del(keys.stock, keys.holders, keys.config);
    await redis.hset(keys.released, 'stale', 1);
    await redis.hset(keys.tranches, 'release:6', 3); // a release still pending in MySQL: not in the proven stock
    await redis.hset(keys.borrowing, 'res-lost', 'p|1|9|1');
    await redis.hset(keys.lent, 'res-lost', '1|0');
    const reply = await recoverWith(
      6,
      [
        ['7', 'res-7'],
        ['8', 'res-8'],
      ],
      [['res-x', 1]],
    );
    expect(reply).toEqual([ReplyCode.DONE, 6, 2]);
    expect(await redis.get(keys.stock)).toBe('6');
    expect(await redis.exists(keys.borrowing, keys.lent)).toBe(0); // in transit = unsettled: in the proven stock
    expect(await redis.hgetall(keys.holders)).toEqual({ '7': 'res-7', '8': 'res-8' });
    expect(await redis.hgetall(keys.released)).toEqual({ 'res-x': '1' });
    expect(await redis.hgetall(keys.refilled)).toEqual({ 'res-refilled': '2' });
    expect(await redis.hgetall(keys.tranches)).toEqual({ 'release:7': '5' });
    expect(await redis.hgetall(keys.config)).toEqual({ state: 'open', maxPerUser: '1' });
  });

  it('WARM: refuses while the stock key exists, nothing changed', async () => {
    await warm(10);
    expect(await recoverWith(3)).toEqual([ReplyCode.WARM]);
    expect(await redis.get(keys.stock)).toBe('10');
  });

  it('NO_STREAM: refuses when the Stream or its consumer group is gone', async () => {
    expect(await recoverWith(3)).toEqual([ReplyCode.NO_STREAM]);
    await redis.xadd(keys.events, '*', 'reservationId', 'r');
    expect(await recoverWith(3)).toEqual([ReplyCode.NO_STREAM]); // Stream without the group
    expect(await redis.exists(keys.stock, keys.holders)).toBe(0);
  });
});

describe('lua/requeue-5.lua', () => {
  it('REQUEUED: takes the given-back units again, restores the holder, appends the event', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.DONE, 4]);
    expect(await redis.hget(keys.holders, '7')).toBe('res-1');
    expect(await redis.hexists(keys.released, 'res-1')).toBe(0);
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('ALREADY: a second requeue changes nothing', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    await requeue('res-1', '7');
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.ALREADY]);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('NOT_WARMED, NOT_RELEASED, HOLDS_OTHER and SOLD_OUT change nothing', async () => {
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.NOT_WARMED]);
    await warm(1);
    await reserve('7', 1, 'res-1');
    expect(await requeue('res-1', '8')).toEqual([ReplyCode.NOT_RELEASED]);
    await release('res-1', '7', 1, 1);
    await reserve('7', 1, 'res-2'); // the user took the unit again with a new reservation
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.HOLDS_OTHER]);
    await release('res-2', '7', 1, -1); // gone without restock: stock stays 0
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.SOLD_OUT]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('DENIED: a user denied since the dead letter is not requeued; the units stay on sale', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    await deny('7', 2);
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.DENIED]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.hexists(keys.holders, '7')).toBe(0);
    expect(await redis.hget(keys.released, 'res-1')).toBe('1');
    expect(await redis.xlen(keys.events)).toBe(1);
    await deny('7', -3); // allowed again: the retry goes through
    expect(await requeue('res-1', '7')).toEqual([ReplyCode.DONE, 4]);
  });
});

describe('borrowing between buckets: reserve-6 BORROW/PENDING, take-3, confirm-3, abandon-2, give-back-2', () => {
  let donor: ActivityKeys;
  beforeEach(() => {
    donor = activityKeys(uniqueId(), uniqueId());
  });
  const warmDonor = (stock: number) =>
    scripts.warmup([donor.stock, donor.holders, donor.events, donor.config], [stock, 'open', 1, CONSUMER_GROUP]);
  const take = (rid: string, q = 1) => scripts.take([donor.stock, donor.lent, donor.config], [rid, q, 0]);
  const confirm = (userId: string, rid: string, q = 1) =>
    scripts.confirm(
      [keys.holders, keys.events, keys.borrowing],
      [userId, rid, q, 1, 'req-b', 'c'.repeat(32), 1700000000002],
    );
  const abandon = (rid: string, before = 0) => scripts.abandon([keys.holders, keys.borrowing], [rid, before]);
  const giveBack = (rid: string) => scripts['give-back']([donor.stock, donor.lent], [rid]);

  it('BORROW marks the user pending at home; PENDING answers a second click; without borrowing the old codes stand', async () => {
    await warm(0, 'open', 2);
    expect(await reserve('7', 1, 'res-b', 0)).toEqual([ReplyCode.SOLD_OUT]);
    expect(await reserve('7', 1, 'res-b', 1)).toEqual([ReplyCode.BORROW, 'res-b', 0]);
    expect(await redis.hget(keys.holders, '7')).toBe('~res-b');
    expect(await redis.hget(keys.borrowing, 'res-b')).toBe('p|1700000000000|7|1');
    expect(await reserve('7', 1, 'res-c', 1)).toEqual([ReplyCode.PENDING, 'res-b']);
    expect(await redis.xlen(keys.events)).toBe(0);
  });

  it('take → confirm: the donor lends, the home grants and appends the event; each step idempotent', async () => {
    await warm(0);
    await warmDonor(3);
    await reserve('7', 1, 'res-b', 1);
    expect(await take('res-b')).toEqual([ReplyCode.DONE, 2]);
    expect(await take('res-b')).toEqual([ReplyCode.ALREADY, 2]);
    expect(await redis.hget(donor.lent, 'res-b')).toBe('1|0');
    expect(await confirm('7', 'res-b')).toEqual([ReplyCode.DONE]);
    expect(await confirm('7', 'res-b')).toEqual([ReplyCode.ALREADY]);
    expect(await redis.hget(keys.holders, '7')).toBe('res-b');
    expect(await redis.xlen(keys.events)).toBe(1);
    expect(await abandon('res-b')).toEqual([ReplyCode.CONFIRMED]);
    expect(await reserve('7', 1, 'res-x', 1)).toEqual([ReplyCode.ALREADY, 'res-b']);
  });

  it('take refuses SHORT, CLOSED and NOT_WARMED without a change', async () => {
    expect(await take('r1')).toEqual([ReplyCode.NOT_WARMED]);
    await warmDonor(1);
    expect(await take('r1', 2)).toEqual([ReplyCode.SHORT, 1]);
    await redis.hset(donor.config, 'state', 'paused');
    expect(await take('r1')).toEqual([ReplyCode.NOT_OPEN]);
    expect(await redis.get(donor.stock)).toBe('1');
    expect(await redis.hlen(donor.lent)).toBe(0);
  });

  it('abandon frees the user and makes confirm refuse; give-back returns the lent units once', async () => {
    await warm(0);
    await warmDonor(2);
    await reserve('7', 1, 'res-b', 1);
    await take('res-b');
    expect(await abandon('res-b', 1700000000000)).toEqual([ReplyCode.TOO_FRESH]);
    expect(await abandon('res-b', 1700000000001)).toEqual([ReplyCode.DONE]);
    expect(await abandon('res-b')).toEqual([ReplyCode.ALREADY]);
    expect(await abandon('res-none')).toEqual([ReplyCode.UNKNOWN]);
    expect(await redis.hexists(keys.holders, '7')).toBe(0);
    expect(await confirm('7', 'res-b')).toEqual([ReplyCode.ABANDONED]);
    expect(await redis.xlen(keys.events)).toBe(0);
    expect(await giveBack('res-b')).toEqual([ReplyCode.DONE, 2]);
    expect(await giveBack('res-b')).toEqual([ReplyCode.NOTHING_LENT]);
    await redis.del(donor.stock);
    expect(await giveBack('res-b')).toEqual([ReplyCode.NOT_WARMED]);
  });
});

describe('lua/enter-6.lua', () => {
  const enter = (userId: string, quantity = 1, claims = '{}') =>
    scripts.enter(
      [keys.entrants, keys.config, keys.draw, keys.denied, keys.entryList, keys.entrantClaims],
      [userId, quantity, claims],
    );

  it('DENIED and NOT_ELIGIBLE: no entry; an entry made before the change stands (the draw decides it)', async () => {
    await warm(5, 'open', 2);
    expect(await enter('7')).toEqual([ReplyCode.DONE, 1]);
    await deny('7', 2, '8', 1);
    expect(await enter('8')).toEqual([ReplyCode.DENIED]);
    expect(await enter('7')).toEqual([ReplyCode.ALREADY, 1]);
    await redis.hset(keys.config, 'eligibility', JSON.stringify({ claim: 'tier', values: ['gold'] }));
    expect(await enter('9', 1, JSON.stringify({ tier: 'silver' }))).toEqual([ReplyCode.NOT_ELIGIBLE]);
    expect(await enter('9', 1, JSON.stringify({ tier: 'gold' }))).toEqual([ReplyCode.DONE, 2]);
    expect(await redis.hgetall(keys.entrants)).toEqual({ '7': '1', '9': '1' });
    expect(await redis.lrange(keys.entryList, 0, -1)).toEqual(['7:1', '9:1']);
    expect(await redis.hgetall(keys.entrantClaims)).toEqual({ '9': '{"tier":"gold"}' });
  });

  it('ENTERED: one entry per user in entry order, its claims kept, no stock moves; EXISTS: the first entry stands', async () => {
    await warm(5, 'open', 3);
    expect(await enter('7', 2, '{"tier":"gold"}')).toEqual([ReplyCode.DONE, 1]);
    expect(await enter('8', 1)).toEqual([ReplyCode.DONE, 2]);
    expect(await enter('7', 3, '{"tier":"silver"}')).toEqual([ReplyCode.ALREADY, 2]);
    expect(await redis.hgetall(keys.entrants)).toEqual({ '7': '2', '8': '1' });
    expect(await redis.lrange(keys.entryList, 0, -1)).toEqual(['7:2', '8:1']);
    expect(await redis.hgetall(keys.entrantClaims)).toEqual({ '7': '{"tier":"gold"}' });
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.xlen(keys.events)).toBe(0);
    await redis.del(keys.entrants, keys.entryList, keys.entrantClaims);
  });

  it('NOT_WARMED, PAUSED, ENDED, LIMIT_EXCEEDED, CLOSED: nothing entered', async () => {
    expect(await enter('7')).toEqual([ReplyCode.NOT_WARMED]);
    await warm(5, 'paused', 2);
    expect(await enter('7')).toEqual([ReplyCode.PAUSED]);
    await warm(5, 'stopped', 2);
    expect(await enter('7')).toEqual([ReplyCode.ENDED]);
    await warm(5, 'open', 2);
    expect(await enter('7', 3)).toEqual([ReplyCode.LIMIT_EXCEEDED]);
    await redis.set(keys.draw, 'closed');
    expect(await enter('7', 1)).toEqual([ReplyCode.CLOSED]);
    expect(await redis.exists(keys.entrants, keys.entryList, keys.entrantClaims)).toBe(0);
    await redis.del(keys.stock, keys.config, keys.events, keys.draw);
  });
});
