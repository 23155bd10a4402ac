/** Every return code of every Lua script, against the real Redis; and each script's SHA pinned. */
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { activityKeys, CONSUMER_GROUP, type ActivityKeys } from '../../origin/redis/keys.js';
import {
  defineScripts,
  readScripts,
  RecoverCode,
  RefillCode,
  ReleaseCode,
  RequeueCode,
  ReserveCode,
  WarmupCode,
} from '../../origin/redis/scripts.js';
import { REDIS_URL } from '../helpers/db.js';
import { uniqueId } from '../helpers/ids.js';

const redis = new Redis(REDIS_URL);
const scripts = defineScripts(redis);
let keys: ActivityKeys;

const warm = (stock: number, state = 'open', maxPerUser = 1) =>
  scripts.warmup([keys.stock, keys.holders, keys.events, keys.config], [stock, state, maxPerUser, CONSUMER_GROUP]);
const reserve = (userId: string, quantity = 1, reservationId = `r-${userId}-${uniqueId()}`) =>
  scripts.reserve(
    [keys.stock, keys.holders, keys.events, keys.config],
    [userId, quantity, reservationId, 'req-1', 'a'.repeat(32), 1700000000000],
  );
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
      recover: '594bd2f3ee7765c8908103a17f7b40367dbec098',
      refill: '41d1161e71acd6d4bc2e786fb26ac93f59b38fb9',
      release: '874d47d4c2ab94c047d092c17cba090876bc2e13',
      requeue: '951294367e051c6ad42b5b704ec99cfb33068ba5',
      reserve: '0b399a4b4175489ec3e7fcaa55f184f19f318731',
      warmup: '3f030f757e8f7bcbf6bbf1e72626f5d08cee6ce8',
    });
  });
});

describe('includes', () => {
  it('the reservation event is written once (lua/includes) and expanded into every script that appends it', () => {
    const scripts = readScripts();
    for (const name of ['reserve', 'requeue']) {
      const source = scripts.get(name)!.source;
      expect(source).not.toMatch(/^--- @include/m);
      expect(source.match(/local function addReservationEvent/g)).toHaveLength(1);
      expect(source.match(/'XADD'/g)).toHaveLength(1); // only inside the included function
    }
  });
});

describe('lua/reserve-4.lua', () => {
  it('OK: decrements stock, records the holder and appends one event with every field', async () => {
    await warm(5);
    const reply = await reserve('7', 1, 'res-1');
    expect(reply).toEqual([ReserveCode.OK, 'res-1', 4]);
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
    expect(await reserve('7', 1, 'res-2')).toEqual([ReserveCode.EXISTS, 'res-1']);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.xlen(keys.events)).toBe(1);
  });

  it('NOT_WARMED: no stock key', async () => {
    expect(await reserve('7')).toEqual([ReserveCode.NOT_WARMED]);
    expect(await redis.exists(keys.events, keys.holders)).toBe(0);
  });

  it('NOT_WARMED: stock present but config lost', async () => {
    await redis.set(keys.stock, 5);
    expect(await reserve('7')).toEqual([ReserveCode.NOT_WARMED]);
    expect(await redis.get(keys.stock)).toBe('5');
  });

  it('PAUSED and ENDED come from the config hash', async () => {
    await warm(5, 'paused');
    expect(await reserve('7')).toEqual([ReserveCode.PAUSED]);
    await redis.hset(keys.config, 'state', 'stopped');
    expect(await reserve('7')).toEqual([ReserveCode.ENDED]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.hlen(keys.holders)).toBe(0);
  });

  it('INSUFFICIENT_STOCK: some units left but fewer than asked for; SOLD_OUT only at zero; nothing written', async () => {
    await warm(2, 'open', 3);
    expect(await reserve('7', 3)).toEqual([ReserveCode.INSUFFICIENT_STOCK]);
    expect(await redis.get(keys.stock)).toBe('2');
    expect((await reserve('8', 2))[0]).toBe(ReserveCode.OK);
    expect(await reserve('9', 1)).toEqual([ReserveCode.SOLD_OUT]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.xlen(keys.events)).toBe(1);
  });

  it('LIMIT_EXCEEDED: quantity above maxPerUser', async () => {
    await warm(10, 'open', 2);
    expect(await reserve('7', 3)).toEqual([ReserveCode.LIMIT_EXCEEDED]);
    expect((await reserve('7', 2))[0]).toBe(ReserveCode.OK);
    expect(await redis.get(keys.stock)).toBe('8');
  });
});

describe('lua/release-3.lua', () => {
  it('RELEASED: gives units back within the cap and frees the holder', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    expect(await release('res-1', '7', 1, 5)).toEqual([ReleaseCode.RELEASED, 1]);
    expect(await redis.get(keys.stock)).toBe('5');
    expect(await redis.hget(keys.holders, '7')).toBeNull();
    expect(await redis.hget(keys.released, 'res-1')).toBe('1');
  });

  it('RELEASED without restock when MySQL does not have the unit (cap) or no cap is given', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await reserve('8', 1, 'res-2');
    expect(await release('res-1', '7', 1, 3)).toEqual([ReleaseCode.RELEASED, 0]);
    expect(await release('res-2', '8', 1, -1)).toEqual([ReleaseCode.RELEASED, 0]);
    expect(await redis.get(keys.stock)).toBe('3');
    expect(await redis.hlen(keys.holders)).toBe(0);
  });

  it('ALREADY: a second release changes nothing and reports the first one', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    expect(await release('res-1', '7', 1, 5)).toEqual([ReleaseCode.ALREADY, 1]);
    expect(await redis.get(keys.stock)).toBe('5');
  });

  it('keeps the holder when it is a different reservation of the same user (surplus)', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    expect(await release('res-old', '7', 1, 10)).toEqual([ReleaseCode.RELEASED, 1]);
    expect(await redis.hget(keys.holders, '7')).toBe('res-1');
  });

  it('NOT_WARMED: refuses without creating a stock key', async () => {
    expect(await release('res-1', '7', 1, 5)).toEqual([ReleaseCode.NOT_WARMED]);
    expect(await redis.exists(keys.stock, keys.released)).toBe(0);
  });
});

describe('lua/warmup-4.lua', () => {
  it('LOADED: sets stock, config and the consumer group', async () => {
    expect(await warm(100, 'open', 2)).toEqual([WarmupCode.LOADED, 100, 0]);
    expect(await redis.get(keys.stock)).toBe('100');
    expect(await redis.hgetall(keys.config)).toEqual({ state: 'open', maxPerUser: '2' });
    const groups = (await redis.xinfo('GROUPS', keys.events)) as unknown[][];
    expect(groups[0]).toContain(CONSUMER_GROUP);
  });

  it('ALREADY: a second warm-up never resets the stock of a sale in progress', async () => {
    await warm(100);
    await reserve('7');
    expect(await warm(100, 'paused')).toEqual([WarmupCode.ALREADY, 99, 1]);
    expect(await redis.get(keys.stock)).toBe('99');
    expect(await redis.hget(keys.config, 'state')).toBe('paused');
  });

  it('HAS_HISTORY: refuses when events exist but the stock key is gone (Redis lost data)', async () => {
    await warm(100);
    await reserve('7');
    await redis.del(keys.stock);
    expect(await warm(100)).toEqual([WarmupCode.HAS_HISTORY]);
    expect(await redis.exists(keys.stock)).toBe(0);
  });
});

const refill = (reservationId: string, quantity: number) =>
  scripts.refill([keys.stock, keys.refilled], [reservationId, quantity]);
const allKeys = () => [keys.stock, keys.holders, keys.events, keys.config, keys.released, keys.refilled];
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
  ]);
const requeue = (reservationId: string, userId: string, quantity = 1) =>
  scripts.requeue(
    [keys.stock, keys.holders, keys.events, keys.released],
    [reservationId, userId, quantity, 'req-9', 'b'.repeat(32), 1700000000001],
  );

describe('lua/refill-2.lua', () => {
  it('REFILLED: adds the units once and records the reservation', async () => {
    await warm(0);
    expect(await refill('res-1', 2)).toEqual([RefillCode.REFILLED, 2]);
    expect(await redis.hget(keys.refilled, 'res-1')).toBe('2');
  });

  it('ALREADY: a second refill of the same reservation changes nothing', async () => {
    await warm(0);
    await refill('res-1', 1);
    expect(await refill('res-1', 1)).toEqual([RefillCode.ALREADY, 1]);
    expect(await redis.get(keys.stock)).toBe('1');
  });

  it('NOT_WARMED: never creates a stock key when Redis lost it', async () => {
    expect(await refill('res-1', 1)).toEqual([RefillCode.NOT_WARMED]);
    expect(await redis.exists(keys.stock, keys.refilled)).toBe(0);
  });
});

describe('lua/recover-6.lua', () => {
  it('RECOVERED: rewrites stock, holders, released, refilled and config in one step', async () => {
    await warm(10);
    await reserve('7', 1, 'res-7');
    await redis.del(keys.stock, keys.holders, keys.config);
    await redis.hset(keys.released, 'stale', 1);
    const reply = await recoverWith(6, [['7', 'res-7'], ['8', 'res-8']], [['res-x', 1]]);
    expect(reply).toEqual([RecoverCode.RECOVERED, 6, 2]);
    expect(await redis.get(keys.stock)).toBe('6');
    expect(await redis.hgetall(keys.holders)).toEqual({ '7': 'res-7', '8': 'res-8' });
    expect(await redis.hgetall(keys.released)).toEqual({ 'res-x': '1' });
    expect(await redis.hgetall(keys.refilled)).toEqual({ 'res-refilled': '2' });
    expect(await redis.hgetall(keys.config)).toEqual({ state: 'open', maxPerUser: '1' });
  });

  it('WARM: refuses while the stock key exists, nothing changed', async () => {
    await warm(10);
    expect(await recoverWith(3)).toEqual([RecoverCode.WARM]);
    expect(await redis.get(keys.stock)).toBe('10');
  });

  it('NO_STREAM: refuses when the Stream or its consumer group is gone', async () => {
    expect(await recoverWith(3)).toEqual([RecoverCode.NO_STREAM]);
    await redis.xadd(keys.events, '*', 'reservationId', 'r');
    expect(await recoverWith(3)).toEqual([RecoverCode.NO_STREAM]); // Stream without the group
    expect(await redis.exists(keys.stock, keys.holders)).toBe(0);
  });
});

describe('lua/requeue-4.lua', () => {
  it('REQUEUED: takes the given-back units again, restores the holder, appends the event', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    expect(await requeue('res-1', '7')).toEqual([RequeueCode.REQUEUED, 4]);
    expect(await redis.hget(keys.holders, '7')).toBe('res-1');
    expect(await redis.hexists(keys.released, 'res-1')).toBe(0);
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('ALREADY: a second requeue changes nothing', async () => {
    await warm(5);
    await reserve('7', 1, 'res-1');
    await release('res-1', '7', 1, 5);
    await requeue('res-1', '7');
    expect(await requeue('res-1', '7')).toEqual([RequeueCode.ALREADY]);
    expect(await redis.get(keys.stock)).toBe('4');
    expect(await redis.xlen(keys.events)).toBe(2);
  });

  it('NOT_WARMED, NOT_RELEASED, HOLDS_OTHER and SOLD_OUT change nothing', async () => {
    expect(await requeue('res-1', '7')).toEqual([RequeueCode.NOT_WARMED]);
    await warm(1);
    await reserve('7', 1, 'res-1');
    expect(await requeue('res-1', '8')).toEqual([RequeueCode.NOT_RELEASED]);
    await release('res-1', '7', 1, 1);
    await reserve('7', 1, 'res-2'); // the user took the unit again with a new reservation
    expect(await requeue('res-1', '7')).toEqual([RequeueCode.HOLDS_OTHER]);
    await release('res-2', '7', 1, -1); // gone without restock: stock stays 0
    expect(await requeue('res-1', '7')).toEqual([RequeueCode.SOLD_OUT]);
    expect(await redis.get(keys.stock)).toBe('0');
    expect(await redis.xlen(keys.events)).toBe(2);
  });
});
