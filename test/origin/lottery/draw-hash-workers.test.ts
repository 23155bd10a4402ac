/**
 * The draw's hashing workers (DRAW_HASH_WORKERS, origin/lottery/draw-hash-threads.ts) on the real Redis
 * and MariaDB: the same closed list under the same seed gives the same outcome — digest, winners,
 * exclusions, published list — whether the main thread hashes alone or workers hash pages beside it;
 * a worker that fails fails the draw with nothing recorded from the failed pass, its threads stopped,
 * and the retry draws exactly the same.
 *
 * The same seed for several activities: each is set up as a draw of the first scheme (seed stored at
 * creation), which the current draw runs exactly like a scheme-2 draw once it has the seed (digest,
 * tickets over the digest, the same walk). The entries are written as lua/enter-6.lua leaves them (the
 * entrant hash, the claims, the entry list), so every activity has the same list in the same order.
 */
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDraw, type DrawDeps, type DrawSettings } from '../../../origin/lottery/draw.js';
import { expectedOutcomes } from '../../../origin/lottery/draw-rule.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

const SEED = 'ab'.repeat(32);
const ENTRANTS = 3_000;
const UNITS = 200;

let t: TestOrigin;
const created: { activityId: string; skuId: string }[] = [];
beforeAll(async () => {
  // No draw job of its own: every draw here is run by hand.
  t = await startTestOrigin({ ORIGIN_ROLE: 'http', REDIS_COMMAND_TIMEOUT_MS: '5000' });
});
afterAll(async () => {
  for (const a of created) {
    const keys = await t.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
    if (keys.length) await t.redis.del(...keys);
  }
  await t.stop();
});

function drawDeps(): DrawDeps {
  const { db, log, redis: stock, publisher } = t.origin.parts;
  return { db, log, entries: stock.lotteryEntries, sales: stock.sales, publisher };
}

/** Small pages, so that a pass has 30 of them to share out. One owner, as the DrawJob retries with its own. */
const OWNER = `test-${uniqueId()}`;
const settings = (more: Partial<DrawSettings>): DrawSettings => ({
  owner: OWNER,
  leaseMs: 10_000,
  reserveBatch: 50,
  publishBatch: 500,
  pageSize: 100,
  inFlight: 2,
  drawSecret: t.config.DRAW_SECRET,
  hashAnswerMs: t.config.DRAW_HASH_ANSWER_MS,
  ...more,
});

/**
 * A lottery with the shared seed and the shared list: 3,000 entrants asking 1 or 2 units, only every
 * third with the claim the eligibility rule wants (the others are excluded at the draw, so the walk
 * needs more than one selection pass of units + 100 candidates).
 */
async function lotteryWithTheList(): Promise<{ activityId: string; skuId: string }> {
  const activityId = uniqueId();
  const skuId = uniqueId();
  created.push({ activityId, skuId });
  const startsAt = Date.now();
  const answer = await t.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `draw workers ${activityId}`,
    stock: UNITS,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 3_600_000).toISOString(),
    maxPerUser: 2,
    admission: 'lottery',
    lotteryWindowMs: 600_000,
    eligibility: { claim: 'tier', values: ['gold'] },
  });
  expect(answer.status).toBe(201);
  expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  await t.db.pool.query('UPDATE seckill_draw SET scheme = 1, seed = ?, seed_nonce = NULL WHERE activity_id = ?', [
    SEED,
    activityId,
  ]);
  const keys = activityKeys(activityId, skuId);
  const fields: string[] = [];
  const claims: string[] = [];
  const lines: string[] = [];
  for (let i = 0; i < ENTRANTS; i++) {
    const userId = String(30_000_000 + i * 7);
    const quantity = i % 5 === 0 ? 2 : 1;
    fields.push(userId, String(quantity));
    claims.push(userId, JSON.stringify({ tier: i % 3 === 0 ? 'gold' : 'silver' }));
    lines.push(`${userId}:${quantity}`);
  }
  await t.redis
    .multi()
    .hset(keys.entrants, ...fields)
    .hset(keys.entrantClaims, ...claims)
    .rpush(keys.entryList, ...lines)
    .exec();
  return { activityId, skuId };
}

/** Everything a draw decides and records, without the activity's own ids. */
async function outcomeOf(sale: { activityId: string; skuId: string }) {
  const [[record]] = (await t.db.pool.query(
    `SELECT state, seed, entrants_digest AS digest, units, entrants, excluded, winners, units_won AS unitsWon
       FROM seckill_draw WHERE activity_id = ?`,
    [sale.activityId],
  )) as any;
  const [list] = (await t.db.pool.query(
    `SELECT entrant, entry, ticket, quantity, won, excluded FROM seckill_draw_entrant
      WHERE activity_id = ? ORDER BY ticket`,
    [sale.activityId],
  )) as any;
  const keys = activityKeys(sale.activityId, sale.skuId);
  return {
    record,
    list,
    winners: Object.keys(await t.redis.hgetall(keys.winners)).sort(),
    excluded: (await t.redis.smembers(keys.drawExcluded)).sort(),
    stock: await t.redis.get(keys.stock),
  };
}

/** Counts the pages each pass's workers hashed, and whether every worker has stopped. */
function watchWorkers() {
  const workers: Worker[] = [];
  const seen = { digestPages: 0, selectionPages: 0, running: 0 };
  return {
    seen,
    workers,
    onHashWorker: (w: Worker) => {
      workers.push(w);
      seen.running++;
      w.on('message', (m: { kind: string }) => {
        if (m.kind === 'lines') seen.digestPages++;
        if (m.kind === 'picked') seen.selectionPages++;
      });
      w.once('exit', () => seen.running--);
    },
  };
}

let expected: Awaited<ReturnType<typeof outcomeOf>>;

describe('the draw with hashing workers', () => {
  it('gives exactly the outcome of the main thread alone on the same list: digest, winners, exclusions, published list', async () => {
    const alone = await lotteryWithTheList();
    expect(await runDraw(drawDeps(), alone.activityId, settings({ hashWorkers: 0 }))).toBe('published');
    expected = await outcomeOf(alone);
    expect(expected.record).toMatchObject({ state: 'published', seed: SEED, entrants: ENTRANTS });
    expect(expected.record.excluded).toBeGreaterThan(0);
    expect(expected.record.unitsWon).toBe(UNITS);
    expect(expected.list).toHaveLength(ENTRANTS);
    // More candidates were walked than one selection pass holds (units + 100): a second pass ran.
    const lastWinner = expected.list.findLastIndex((r: { won: number }) => r.won);
    expect(lastWinner + 1).toBeGreaterThan(UNITS + 100);

    const shared = await lotteryWithTheList();
    const watch = watchWorkers();
    const drawn = await runDraw(
      drawDeps(),
      shared.activityId,
      settings({ hashWorkers: 2, onHashWorker: watch.onHashWorker }),
    );
    expect(drawn).toBe('published');
    expect(await outcomeOf(shared)).toEqual(expected);
    // The workers did hash pages in both passes, and none outlived the draw.
    expect(watch.workers).toHaveLength(2);
    expect(watch.seen.digestPages).toBeGreaterThan(0);
    expect(watch.seen.selectionPages).toBeGreaterThan(0);
    expect(watch.seen.running).toBe(0);
  });

  it('a worker failing during the digest fails the draw before anything is recorded; the retry draws the same', async () => {
    const sale = await lotteryWithTheList();
    const watch = watchWorkers();
    // A request the worker does not understand: it throws, as a worker crashing mid-pass would.
    const crashing = (w: Worker) => {
      watch.onHashWorker(w);
      w.once('message', () => w.postMessage({ kind: 'not-a-request' }));
    };
    await expect(
      runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 1, onHashWorker: crashing })),
    ).rejects.toThrow(/unknown request/);
    expect(watch.seen.running).toBe(0);
    const failed = await outcomeOf(sale);
    expect(failed.record).toMatchObject({ state: 'pending', digest: null, entrants: null, winners: null });
    expect(failed).toMatchObject({ list: [], winners: [], excluded: [], stock: String(UNITS) });

    expect(await runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 1 }))).toBe('published');
    expect(await outcomeOf(sale)).toEqual(expected);
  });

  it('a worker whose answers never come fails the draw after DRAW_HASH_ANSWER_MS, not never; the retry draws the same', async () => {
    const sale = await lotteryWithTheList();
    const watch = watchWorkers();
    // The worker thread runs, but its answers are lost on the way back (as from a hung worker).
    const silent = (w: Worker) => {
      watch.onHashWorker(w);
      setImmediate(() => w.removeAllListeners('message'));
    };
    const started = Date.now();
    await expect(
      runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 1, hashAnswerMs: 300, onHashWorker: silent })),
    ).rejects.toThrow(/did not answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(watch.seen.running).toBe(0);
    const failed = await outcomeOf(sale);
    expect(failed.record).toMatchObject({ state: 'pending', digest: null, winners: null });
    expect(failed).toMatchObject({ list: [], winners: [], excluded: [], stock: String(UNITS) });

    expect(await runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 1 }))).toBe('published');
    expect(await outcomeOf(sale)).toEqual(expected);
  });

  it('a worker stopped between the passes fails the draw before any winner is drawn; the retry draws the same', async () => {
    const sale = await lotteryWithTheList();
    const watch = watchWorkers();
    const failing = settings({
      hashWorkers: 1,
      onHashWorker: watch.onHashWorker,
      onPhase: (phase) => {
        if (phase === 'digest') void watch.workers[0]!.terminate();
      },
    });
    await expect(runDraw(drawDeps(), sale.activityId, failing)).rejects.toThrow(/hashing worker stopped/);
    expect(watch.seen.running).toBe(0);
    const failed = await outcomeOf(sale);
    // The digest was recorded (pass 1 completed with the worker's pages), nothing after it.
    expect(failed.record).toMatchObject({
      state: 'drawing',
      seed: SEED,
      digest: expected.record.digest,
      winners: null,
    });
    expect(failed).toMatchObject({ list: [], winners: [], excluded: [], stock: String(UNITS) });

    expect(await runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 1 }))).toBe('published');
    expect(await outcomeOf(sale)).toEqual(expected);
  });
});

describe('the draw reserving one batch ahead', () => {
  it('sends the next batch before the last is answered while units cover both, and the outcome is the rule’s', async () => {
    const sale = await lotteryWithTheList();
    // The real reserve calls, counted as they go out and come back.
    const deps = drawDeps();
    const real = deps.entries;
    let inFlight = 0;
    let mostInFlight = 0;
    let calls = 0;
    deps.entries = Object.create(real, {
      reserveForDraw: {
        value: async (...args: Parameters<typeof real.reserveForDraw>) => {
          calls++;
          mostInFlight = Math.max(mostInFlight, ++inFlight);
          try {
            return await real.reserveForDraw(...args);
          } finally {
            inFlight--;
          }
        },
      },
    });
    // Batches of 7 on 200 units asking 1 or 2 each: dozens of calls, the last ones where units run out.
    expect(await runDraw(deps, sale.activityId, settings({ hashWorkers: 0, reserveBatch: 7 }))).toBe('published');
    expect(calls).toBeGreaterThan(20);
    expect(mostInFlight).toBe(2);
    const outcome = await outcomeOf(sale);
    const inTicketOrder = outcome.list.map((r: { quantity: number; excluded: number }) => ({
      quantity: r.quantity,
      excluded: r.excluded === 1,
    }));
    expect(outcome.list.map((r: { won: number }) => r.won === 1)).toEqual(expectedOutcomes(inTicketOrder, UNITS));
    expect(outcome.record).toMatchObject({ unitsWon: UNITS, winners: expected.record.winners });
    expect(outcome.stock).toBe('0');
    // The same list as the draw in batches of 50: batch size and calls ahead change nothing.
    expect(outcome.list).toEqual(expected.list);
  });

  it('a recording of winners that fails fails the walk before the winners are announced; the retry draws the same', async () => {
    const sale = await lotteryWithTheList();
    const deps = drawDeps();
    const real = deps.entries;
    let recordings = 0;
    deps.entries = Object.create(real, {
      recordWinners: {
        value: async (...args: Parameters<typeof real.recordWinners>) => {
          // The third batch's recording is refused, as by a Redis that went away for that one call.
          if (++recordings === 3) throw new Error('recording refused');
          return real.recordWinners(...args);
        },
      },
    });
    await expect(runDraw(deps, sale.activityId, settings({ hashWorkers: 0, reserveBatch: 7 }))).rejects.toThrow(
      /recording refused/,
    );
    const failed = await outcomeOf(sale);
    // Reservations were made and some winners recorded, but the draw is not announced.
    expect(failed.record).toMatchObject({ state: 'drawing', winners: null });
    expect(failed.list).toEqual([]);
    expect(failed.winners.length).toBeGreaterThan(0);

    expect(await runDraw(drawDeps(), sale.activityId, settings({ hashWorkers: 0, reserveBatch: 7 }))).toBe('published');
    expect(await outcomeOf(sale)).toEqual(expected);
  });
});
