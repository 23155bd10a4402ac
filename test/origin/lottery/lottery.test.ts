/**
 * Lottery admission (docs/design.md §10) through the origin's signed internal API, on the real
 * Redis and MariaDB: entries inside the window, the draw at its close, polls, the published list,
 * FCFS afterwards, and a draw that survives its origin being SIGKILLed.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryIdOf } from '../../../contract/ids.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { commitmentOf, drawOrder, expectedOutcomes, orderByTickets } from '../../../origin/lottery/draw-rule.js';
import { DEV_SECRETS } from '../../../origin/platform/secret-rules.js';
import { seedOf } from '../../../origin/lottery/draw-rule.js';
import { runDraw, type DrawDeps } from '../../../origin/lottery/draw.js';
import { REDIS_URL, scalar } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  // A generous Redis timeout: 150 entries at once on a shared, busy machine are not an outage.
  t = await startTestOrigin({ DRAW_POLL_MS: '50', REDIS_COMMAND_TIMEOUT_MS: '2000' });
});
const created: { activityId: string; skuId: string }[] = [];
afterAll(async () => {
  for (const a of created) {
    const keys = await t.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
    if (keys.length) await t.redis.del(...keys);
  }
  await t.stop();
});

/** A lottery activity whose window opens now and closes after `windowMs`, warmed. */
/** What a draw run by hand uses, from the origin's pieces (as server.ts builds the draw job). */
function drawDeps(o: TestOrigin): DrawDeps {
  const { db, log, redis: stock, publisher } = o.origin.parts;
  return { db, log, entries: stock.lotteryEntries, sales: stock.sales, publisher };
}

async function lotterySale(
  o: TestOrigin,
  opts: {
    stock: number;
    maxPerUser?: number;
    windowMs: number;
    stockBuckets?: number;
    eligibility?: { claim: string; values: string[] };
  },
): Promise<{ activityId: string; skuId: string; closesAt: number }> {
  const activityId = uniqueId();
  const skuId = uniqueId();
  created.push({ activityId, skuId });
  const startsAt = Date.now();
  const answer = await o.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `lottery ${activityId}`,
    stock: opts.stock,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 3_600_000).toISOString(),
    maxPerUser: opts.maxPerUser ?? 1,
    admission: 'lottery',
    lotteryWindowMs: opts.windowMs,
    ...(opts.stockBuckets ? { stockBuckets: opts.stockBuckets } : {}),
    ...(opts.eligibility ? { eligibility: opts.eligibility } : {}),
  });
  expect(answer.status).toBe(201);
  expect((await o.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return { activityId, skuId, closesAt: startsAt + opts.windowMs };
}

async function purchase(
  o: TestOrigin,
  activityId: string,
  userId: string,
  quantity = 1,
  claims?: Record<string, string | string[]>,
) {
  const res = await o.internal('POST', '/internal/reserve', {
    activityId,
    userId,
    quantity,
    requestId: `r-${userId}-${Math.random().toString(36).slice(2, 8)}`,
    ...(claims ? { claims } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function poll(o: TestOrigin, id: string, userId: string) {
  const res = await o.internal('GET', `/internal/reservations/${id}?userId=${userId}`);
  return { status: res.status, body: (await res.json()) as any };
}

async function snapshot(o: TestOrigin, activityId: string) {
  return (await (await o.admin('GET', `/admin/activities/${activityId}`)).json()) as any;
}

const published = (o: TestOrigin, activityId: string, timeoutMs = 60_000) =>
  waitFor(
    () => snapshot(o, activityId),
    (s) => s.draw?.entrantsPublished === true,
    timeoutMs,
    100,
  );

async function entrantList(o: TestOrigin, activityId: string) {
  const all: { ticket: string; quantity: number; won: boolean; entry?: number; excluded?: boolean }[] = [];
  let after = '';
  for (;;) {
    const res = await o.internal('GET', `/internal/activities/${activityId}/draw/entrants?limit=40&after=${after}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as any;
    all.push(...page.entrants);
    if (!page.next) return all;
    after = page.next;
  }
}

/** Entries a few at a time: on a busy shared machine a burst of hundreds outlives the 5 s signature window. */
async function enterAll(o: TestOrigin, activityId: string, users: string[]) {
  const answers: Awaited<ReturnType<typeof purchase>>[] = [];
  for (let i = 0; i < users.length; i += 16)
    answers.push(...(await Promise.all(users.slice(i, i + 16).map((u) => purchase(o, activityId, u)))));
  return answers;
}

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

describe('a lottery of 150 entrants for 20 units', () => {
  it('exactly the 20 entrants the revealed seed picks win; the rest lose; the seed matches its commitment', async () => {
    const sale = await lotterySale(t, { stock: 20, windowMs: 8_000 });
    const before = await snapshot(t, sale.activityId);
    expect(before.draw.commitment).toMatch(/^[0-9a-f]{64}$/);
    expect(before.draw.seed).toBeUndefined();

    const users = Array.from({ length: 150 }, (_, i) => String(7_000_000 + i));
    const entries = await enterAll(t, sale.activityId, users);
    for (const [i, e] of entries.entries()) {
      expect(e.status).toBe(202);
      expect(e.body).toEqual({ status: 'entered', entryId: entryIdOf(sale.activityId, users[i]!) });
    }
    // Entering twice is one entry: same entry id, 200, the entrant count unchanged.
    const again = await purchase(t, sale.activityId, users[0]!);
    expect(again).toEqual({ status: 200, body: { status: 'entered', entryId: entryIdOf(sale.activityId, users[0]!) } });
    const keys = activityKeys(sale.activityId, sale.skuId);
    expect(await t.redis.hlen(keys.entrants)).toBe(150);
    // Nothing is reserved during the window; a poll says the draw is still to come.
    expect(await t.redis.get(keys.stock)).toBe('20');
    expect((await poll(t, entryIdOf(sale.activityId, users[3]!), users[3]!)).body).toEqual({ status: 'drawing' });
    // Someone else's entry is not readable; a made-up one is not found.
    expect((await poll(t, entryIdOf(sale.activityId, users[3]!), users[4]!)).status).toBe(403);
    expect((await poll(t, entryIdOf(sale.activityId, '99999999'), '99999999')).status).toBe(404);
    // Scheme 2: during the window MySQL holds no seed (a reader of it or of a backup cannot predict),
    // only the nonce and the commitment; no digest is public before the close.
    const [[stored]] = (await t.db.pool.query(
      'SELECT seed, seed_nonce, scheme, entrants_digest FROM seckill_draw WHERE activity_id = ?',
      [sale.activityId],
    )) as any;
    expect(stored).toMatchObject({ seed: null, scheme: 3, entrants_digest: null });
    expect(stored.seed_nonce).toMatch(/^[0-9a-f]{64}$/);
    expect((await snapshot(t, sale.activityId)).draw.entrantsDigest).toBeUndefined();

    await sleepUntil(sale.closesAt);
    const after = await published(t, sale.activityId);
    const seed: string = after.draw.seed;
    expect(commitmentOf(seed, 3)).toBe(before.draw.commitment);
    expect(after.draw).toMatchObject({ entrants: 150, winners: 20, units: 20, unitsWon: 20, excluded: 0, scheme: 3 });
    // The digest is the closed list's, in entry order (as Redis kept it), and the seed is now in MySQL.
    const closedList = (await t.redis.lrange(keys.entryList, 0, -1)).map((line) => {
      const [userId, quantity] = line.split(':');
      return { userId: userId!, quantity: Number(quantity) };
    });
    expect(closedList.map((e) => e.userId).sort()).toEqual([...users].sort());
    expect(after.draw.entrantsDigest).toBe(drawOrder(seed, closedList).digest);
    const [[revealed]] = (await t.db.pool.query('SELECT seed FROM seckill_draw WHERE activity_id = ?', [
      sale.activityId,
    ])) as any;
    expect(revealed.seed).toBe(seed);

    const expected = orderByTickets(
      seed,
      after.draw.entrantsDigest,
      users.map((userId) => ({ userId, quantity: 1 })),
    )
      .slice(0, 20)
      .map((e) => e.userId)
      .sort();
    expect(Object.keys(await t.redis.hgetall(keys.holders)).sort()).toEqual(expected);
    expect(await t.redis.get(keys.stock)).toBe('0');
    expect(await t.redis.xlen(keys.events)).toBe(20);

    for (const u of users) {
      const p = await poll(t, entryIdOf(sale.activityId, u), u);
      expect(p.status).toBe(200);
      if (expected.includes(u)) {
        expect(['queued', 'ordered']).toContain(p.body.status);
        expect(p.body.reservationId).toBe(await t.redis.hget(keys.holders, u));
      } else expect(p.body).toEqual({ status: 'lost' });
    }

    // Settled into MySQL: one order per winner, nobody else.
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [sale.activityId]),
      (n) => n === 20,
    );
    const [rows] = (await t.db.pool.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [
      sale.activityId,
    ])) as any;
    expect(rows.map((r: any) => String(r.user_id)).sort()).toEqual(expected);

    // The published list: 150 tickets in draw order, the rule's outcome, 20 won.
    const list = await entrantList(t, sale.activityId);
    expect(list).toHaveLength(150);
    expect(list.map((e) => e.ticket)).toEqual([...list.map((e) => e.ticket)].sort());
    expect(list.map((e) => e.won)).toEqual(expectedOutcomes(list, 20));
    expect(list.filter((e) => e.won)).toHaveLength(20);
    // A sold-out lottery is sold out afterwards.
    expect(after.soldOut).toBe(true);
  });
});

describe('the deny list and eligibility at the draw', () => {
  it('denied mid-window and eligibility switched mid-window: those entrants win nothing, their units go to the next in draw order', async () => {
    const sale = await lotterySale(t, { stock: 5, windowMs: 7_000, eligibility: { claim: 'tier', values: ['gold'] } });
    // 20 gold entrants; 8 of them are platinum as well.
    const users = Array.from({ length: 20 }, (_, i) => String(7_800_000 + i));
    const platinum = new Set(users.filter((_, i) => i % 5 < 2));
    for (const u of users) {
      const tier = platinum.has(u) ? ['gold', 'platinum'] : 'gold';
      expect((await purchase(t, sale.activityId, u, 1, { tier })).status).toBe(202);
    }
    // All entries are in. An insider with DRAW_SECRET and Redis (this test) can now compute the order
    // the draw will use, and flips both switches inside the window: the top-ranked platinum entrant is
    // denied, and the rule becomes platinum-only.
    const keys = activityKeys(sale.activityId, sale.skuId);
    const closedList = (await t.redis.lrange(keys.entryList, 0, -1)).map((line) => ({
      userId: line.split(':')[0]!,
      quantity: 1,
    }));
    const nonce = String(
      (
        (await t.db.pool.query('SELECT seed_nonce FROM seckill_draw WHERE activity_id = ?', [sale.activityId])) as any
      )[0][0].seed_nonce,
    );
    const seed = seedOf(DEV_SECRETS.DRAW_SECRET, sale.activityId, nonce);
    const { ordered } = drawOrder(seed, closedList);
    const denied = ordered.find((e) => platinum.has(e.userId))!.userId;
    expect((await t.admin('PUT', `/admin/deny/${denied}`)).status).toBe(200);
    expect(
      (
        await t.admin('PATCH', `/admin/activities/${sale.activityId}`, {
          eligibility: { claim: 'tier', values: ['platinum'] },
        })
      ).status,
    ).toBe(200);
    expect(Date.now()).toBeLessThan(sale.closesAt);

    await sleepUntil(sale.closesAt);
    const after = await published(t, sale.activityId);
    expect(after.draw.seed).toBe(seed);
    // The expected walk: excluded = denied or not platinum; the first 5 others win; nobody after them is walked.
    const excludedOf = (u: string) => u === denied || !platinum.has(u);
    const winners: string[] = [];
    const passedOver: string[] = [];
    for (const e of ordered) {
      if (winners.length === 5) break;
      if (excludedOf(e.userId)) passedOver.push(e.userId);
      else winners.push(e.userId);
    }
    expect(winners).toHaveLength(5);
    expect(passedOver).toContain(denied);
    expect(after.draw).toMatchObject({ entrants: 20, winners: 5, unitsWon: 5, excluded: passedOver.length });
    // Units conserved: the 5 units went to exactly these 5, in Redis and in MySQL; nothing stranded.
    expect(Object.keys(await t.redis.hgetall(keys.holders)).sort()).toEqual([...winners].sort());
    expect(await t.redis.get(keys.stock)).toBe('0');
    expect((await t.redis.smembers(keys.drawExcluded)).sort()).toEqual([...passedOver].sort());
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [sale.activityId]),
      (n) => n === 5,
    );
    const [rows] = (await t.db.pool.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [
      sale.activityId,
    ])) as any;
    expect(rows.map((r: any) => String(r.user_id)).sort()).toEqual([...winners].sort());
    expect((await poll(t, entryIdOf(sale.activityId, denied), denied)).body).toEqual({ status: 'lost' });
    // The published list marks exactly the passed-over entrants, and the rule replays to its won flags.
    const list = await entrantList(t, sale.activityId);
    expect(
      list
        .filter((e: any) => e.excluded)
        .map((e: any) => e.entry)
        .sort((a: number, b: number) => a - b),
    ).toEqual(
      ordered
        .filter((e) => passedOver.includes(e.userId))
        .map((e) => e.entry)
        .sort((a, b) => a - b),
    );
    expect(list.map((e) => e.won)).toEqual(expectedOutcomes(list, 5));
    await t.admin('DELETE', `/admin/deny/${denied}`);
  });

  it('a winner the reserve script refuses as denied (denied in Redis after the draw read the list) is passed over and flagged, the unit goes to the next', async () => {
    const sale = await lotterySale(t, { stock: 2, windowMs: 4_000 });
    const users = Array.from({ length: 6 }, (_, i) => String(7_900_000 + i));
    for (const u of users) expect((await purchase(t, sale.activityId, u)).status).toBe(202);
    const keys = activityKeys(sale.activityId, sale.skuId);
    const closedList = (await t.redis.lrange(keys.entryList, 0, -1)).map((line) => ({
      userId: line.split(':')[0]!,
      quantity: 1,
    }));
    const nonce = String(
      (
        (await t.db.pool.query('SELECT seed_nonce FROM seckill_draw WHERE activity_id = ?', [sale.activityId])) as any
      )[0][0].seed_nonce,
    );
    const { ordered } = drawOrder(seedOf(DEV_SECRETS.DRAW_SECRET, sale.activityId, nonce), closedList);
    // The bucket's deny hash only (lua/deny-1.lua's format), no MySQL row: the draw's one read of the
    // deny list misses this user, as it would a deny that lands while the draw runs.
    const top = ordered[0]!.userId;
    await t.redis.hset(keys.denied, top, 1);

    await sleepUntil(sale.closesAt);
    const after = await published(t, sale.activityId);
    const winners = [ordered[1]!.userId, ordered[2]!.userId];
    expect(after.draw).toMatchObject({ entrants: 6, winners: 2, unitsWon: 2, excluded: 1 });
    expect(Object.keys(await t.redis.hgetall(keys.holders)).sort()).toEqual([...winners].sort());
    expect(await t.redis.smembers(keys.drawExcluded)).toEqual([top]);
    const list = await entrantList(t, sale.activityId);
    expect(list.filter((e: any) => e.excluded).map((e: any) => e.entry)).toEqual([ordered[0]!.entry]);
    expect(list.map((e) => e.won)).toEqual(expectedOutcomes(list, 2));
  });
});

describe('DRAW_SECRET', () => {
  it('a draw whose seed from DRAW_SECRET does not match the published commitment refuses to run (secret changed)', async () => {
    // A second origin sharing the database with another DRAW_SECRET, and no draw job of its own.
    const other = await startTestOrigin({ DRAW_SECRET: 'another-draw-secret-0123456789', ORIGIN_ROLE: 'http' });
    try {
      const sale = await lotterySale(t, { stock: 2, windowMs: 60_000 });
      const settings = {
        owner: 'test',
        leaseMs: 5_000,
        reserveBatch: 10,
        publishBatch: 10,
        pageSize: 100,
        inFlight: 2,
        drawSecret: other.config.DRAW_SECRET,
        hashAnswerMs: other.config.DRAW_HASH_ANSWER_MS,
      };
      await expect(runDraw(drawDeps(t), sale.activityId, settings)).rejects.toThrow(/DRAW_SECRET changed/);
      // Nothing moved: still pending, no digest, no seed, entries still open.
      const [[row]] = (await t.db.pool.query(
        'SELECT state, seed, entrants_digest FROM seckill_draw WHERE activity_id = ?',
        [sale.activityId],
      )) as any;
      expect(row).toEqual({ state: 'pending', seed: null, entrants_digest: null });
      expect(await t.redis.exists(activityKeys(sale.activityId, sale.skuId).draw)).toBe(0);
    } finally {
      await other.stop();
    }
  });
});

describe('a lottery on bucketed stock', () => {
  it('entries in each home bucket, one draw over all buckets: exactly the units the seed picks, borrowed where needed', async () => {
    const sale = await lotterySale(t, { stock: 12, windowMs: 10_000, stockBuckets: 4 });
    const users = Array.from({ length: 40 }, (_, i) => String(7_500_000 + i));
    for (const u of users) expect((await purchase(t, sale.activityId, u)).body).toMatchObject({ status: 'entered' });
    const perBucket = await Promise.all(
      [0, 1, 2, 3].map((b) => t.redis.hlen(activityKeys(sale.activityId, sale.skuId, b, 4).entrants)),
    );
    expect(perBucket.reduce((a, b) => a + b, 0)).toBe(40);
    expect(perBucket.filter((n) => n > 0).length).toBeGreaterThan(1);
    await sleepUntil(sale.closesAt);
    const after = await published(t, sale.activityId);
    expect(after.draw).toMatchObject({ entrants: 40, winners: 12, unitsWon: 12 });
    const expected = orderByTickets(
      after.draw.seed,
      after.draw.entrantsDigest,
      users.map((userId) => ({ userId, quantity: 1 })),
    )
      .slice(0, 12)
      .map((e) => e.userId);
    for (const u of users) {
      const p = await poll(t, entryIdOf(sale.activityId, u), u);
      if (expected.includes(u)) expect(['queued', 'ordered']).toContain(p.body.status);
      else expect(p.body).toEqual({ status: 'lost' });
    }
    await waitFor(
      () => scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [sale.activityId]),
      (n) => n === 12,
    );
    const [rows] = (await t.db.pool.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [
      sale.activityId,
    ])) as any;
    expect(rows.map((r: any) => String(r.user_id)).sort()).toEqual([...expected].sort());
    for (let b = 0; b < 4; b++) {
      const k = activityKeys(sale.activityId, sale.skuId, b, 4);
      expect(await t.redis.get(k.stock)).toBe('0');
      created.push({ activityId: sale.activityId, skuId: `${sale.skuId}:${b}` });
    }
  });
});

describe('entrants asking for more than one unit', () => {
  it('each winner takes their quantity; one asking for more than is left loses and the next is tried', async () => {
    const sale = await lotterySale(t, { stock: 10, maxPerUser: 3, windowMs: 4_000 });
    const users = Array.from({ length: 12 }, (_, i) => ({ userId: String(8_000_000 + i), quantity: (i % 3) + 1 }));
    for (const u of users) expect((await purchase(t, sale.activityId, u.userId, u.quantity)).status).toBe(202);
    // Above maxPerUser: refused at entry, no entry made.
    const over = await purchase(t, sale.activityId, '8100000', 4);
    expect(over.status).toBe(409);
    expect(over.body.error).toBe('limit_exceeded');
    // A second entry with another quantity changes nothing: the first stands.
    expect((await purchase(t, sale.activityId, users[0]!.userId, 3)).status).toBe(200);

    await sleepUntil(sale.closesAt);
    const after = await published(t, sale.activityId);
    const ordered = orderByTickets(after.draw.seed, after.draw.entrantsDigest, users);
    const outcomes = expectedOutcomes(ordered, 10);
    const winners = ordered.filter((_, i) => outcomes[i]);
    const unitsWon = winners.reduce((n, e) => n + e.quantity, 0);
    expect(after.draw).toMatchObject({ entrants: 12, winners: winners.length, unitsWon });
    const keys = activityKeys(sale.activityId, sale.skuId);
    expect(Number(await t.redis.get(keys.stock))).toBe(10 - unitsWon);
    expect(Object.keys(await t.redis.hgetall(keys.holders)).sort()).toEqual(winners.map((w) => w.userId).sort());
    await waitFor(
      () =>
        scalar(t.db.pool, 'SELECT COALESCE(SUM(quantity), 0) FROM seckill_order WHERE activity_id = ?', [
          sale.activityId,
        ]),
      (n) => n === unitsWon,
    );
    const [rows] = (await t.db.pool.query('SELECT user_id, quantity FROM seckill_order WHERE activity_id = ?', [
      sale.activityId,
    ])) as any;
    expect(Object.fromEntries(rows.map((r: any) => [String(r.user_id), Number(r.quantity)]))).toEqual(
      Object.fromEntries(winners.map((w) => [w.userId, w.quantity])),
    );
  });
});

describe('after the window', () => {
  it('what the draw left is sold first come, first served; a winner buying again gets the same reservation', async () => {
    const sale = await lotterySale(t, { stock: 8, windowMs: 3_000 });
    const entrants = ['8200001', '8200002', '8200003'];
    for (const u of entrants) expect((await purchase(t, sale.activityId, u)).status).toBe(202);
    await sleepUntil(sale.closesAt);
    await published(t, sale.activityId);
    const keys = activityKeys(sale.activityId, sale.skuId);
    expect(await t.redis.get(keys.stock)).toBe('5');

    // FCFS: a purchase is a reservation now (202 queued), not an entry.
    const late = Array.from({ length: 7 }, (_, i) => String(8_300_000 + i));
    const answers = [];
    for (const u of late) answers.push(await purchase(t, sale.activityId, u));
    expect(answers.slice(0, 5).map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(answers[0]!.body.status).toBe('queued');
    expect(answers.slice(5).map((a) => a.body.error)).toEqual(['sold_out', 'sold_out']);
    // The first five, in arrival order, hold the units.
    for (const u of late.slice(0, 5)) expect(await t.redis.hget(keys.holders, u)).not.toBeNull();
    const again = await purchase(t, sale.activityId, entrants[0]!);
    expect(again.status).toBe(200);
    expect(again.body.reservationId).toBe(await t.redis.hget(keys.holders, entrants[0]!));
  });

  it('a purchase after the window but before the winners are final is turned away with busy', async () => {
    // Not warmed: the draw cannot begin, so the "drawing" phase lasts; warm-up then lets it finish.
    const activityId = uniqueId();
    const skuId = uniqueId();
    created.push({ activityId, skuId });
    const startsAt = Date.now() - 5_000;
    const answer = await t.admin('POST', '/admin/activities', {
      activityId,
      skuId,
      title: 'lottery not warmed',
      stock: 3,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3_600_000).toISOString(),
      admission: 'lottery',
      lotteryWindowMs: 1_000,
    });
    expect(answer.status).toBe(201);
    const res = await t.internal('POST', '/internal/reserve', {
      activityId,
      userId: '8400001',
      quantity: 1,
      requestId: 'busy-1',
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error).toBe('busy');
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
    const done = await published(t, activityId);
    expect(done.draw).toMatchObject({ entrants: 0, winners: 0 });
    expect((await purchase(t, activityId, '8400001')).status).toBe(202);
  });
});

describe('the admin create schema', () => {
  it('refuses a lottery window that does not close before endsAt, and an unknown admission', async () => {
    const now = Date.now();
    const base = {
      activityId: uniqueId(),
      skuId: uniqueId(),
      title: 'x',
      stock: 1,
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 2_000).toISOString(),
    };
    const long = await t.admin('POST', '/admin/activities', { ...base, admission: 'lottery', lotteryWindowMs: 5_000 });
    expect(long.status).toBe(400);
    expect(((await long.json()) as any).error).toBe('bad_request');
    const bad = await t.admin('POST', '/admin/activities', { ...base, admission: 'raffle' });
    expect(bad.status).toBe(400);
  });
});

describe('the origin SIGKILLed during the draw', () => {
  it('after a restart the draw completes once, with the same winners', async () => {
    const STOCK = 400;
    // A generous Redis timeout: 600 entries at once on a shared machine are not an outage.
    const writer = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '2000' });
    const drawer = (env: Record<string, string> = {}) =>
      spawn(process.execPath, ['--import', 'tsx', 'origin/main.ts'], {
        env: {
          ...process.env,
          ...TEST_SECRETS,
          ORIGIN_ROLE: 'consumers',
          MYSQL_URL: writer.db.url,
          REDIS_URL,
          LOG_LEVEL: 'silent',
          SETTLE_WORKERS: '1',
          SETTLE_DISCOVERY_MS: '100',
          DRAW_POLL_MS: '20',
          DRAW_LEASE_MS: '1000',
          // One reservation per batch, a round trip each: a draw slow enough to kill mid-way.
          DRAW_RESERVE_BATCH: '1',
          ...env,
        },
        stdio: 'ignore',
      });
    try {
      const sale = await lotterySale(writer, { stock: STOCK, windowMs: 20_000 });
      const keys = activityKeys(sale.activityId, sale.skuId);
      const users = Array.from({ length: 600 }, (_, i) => String(9_000_000 + i));
      const entries = await enterAll(writer, sale.activityId, users);
      expect(entries.filter((e) => e.status !== 202).map((e) => e.body)).toEqual([]);

      const first = drawer();
      await sleepUntil(sale.closesAt);
      // Kill it with part of the winners reserved and the draw not finished.
      const atKill = await waitFor(
        () => writer.redis.hlen(keys.holders),
        (n) => n >= 20,
        30_000,
        2,
      );
      first.kill('SIGKILL');
      await once(first, 'exit');
      expect(atKill).toBeLessThan(STOCK);
      expect(
        await scalar(writer.db.pool, 'SELECT COUNT(*) FROM seckill_draw WHERE activity_id = ? AND state = ?', [
          sale.activityId,
          'drawing',
        ]),
      ).toBe(1);

      const second = drawer();
      try {
        const after = await published(writer, sale.activityId, 90_000);
        const expected = orderByTickets(
          after.draw.seed,
          after.draw.entrantsDigest,
          users.map((userId) => ({ userId, quantity: 1 })),
        )
          .slice(0, STOCK)
          .map((e) => e.userId)
          .sort();
        expect(after.draw).toMatchObject({ entrants: 600, winners: STOCK, unitsWon: STOCK });
        expect(Object.keys(await writer.redis.hgetall(keys.holders)).sort()).toEqual(expected);
        expect(Object.keys(await writer.redis.hgetall(keys.winners)).sort()).toEqual(expected);
        // Once: one reservation event per winner, stock exactly used up, one order per winner.
        expect(await writer.redis.xlen(keys.events)).toBe(STOCK);
        expect(await writer.redis.get(keys.stock)).toBe('0');
        await waitFor(
          () => scalar(writer.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [sale.activityId]),
          (n) => n === STOCK,
          60_000,
        );
        const [rows] = (await writer.db.pool.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [
          sale.activityId,
        ])) as any;
        expect(rows.map((r: any) => String(r.user_id)).sort()).toEqual(expected);
        const list = await entrantList(writer, sale.activityId);
        expect(list).toHaveLength(600);
        expect(list.filter((e) => e.won)).toHaveLength(STOCK);
      } finally {
        second.kill('SIGTERM');
        await once(second, 'exit');
      }
    } finally {
      await writer.stop();
    }
  });
});
