/**
 * Reconciliation reads one consistent state (origin/recovery/reconcile.ts): MySQL in one
 * consistent-snapshot transaction whatever the server's isolation default, Redis bracketed by a
 * re-read of its fingerprints. The periodic check runs every 200 ms while timed-out orders refill,
 * against a MySQL whose sessions default to READ COMMITTED (as a server configured with
 * `transaction-isolation = READ-COMMITTED`): no alarm; a unit taken from Redis by hand is alarmed
 * within one round.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../../../origin/platform/db/pool.js';
import { ReconcileJob } from '../../../origin/recovery/reconcile-job.js';
import { reconcile } from '../../../origin/recovery/reconcile.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { count, users } from '../../helpers/lifecycle.js';
import { failingChecks, readingRedisThen, reconcileDeps, reconcileJobDeps } from '../../helpers/reconcile.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';
const ORDERS = Number(process.env.RECONCILE_REFILLS ?? 2_000);
/**
 * The orders expire in this many slices, one just before each round reads: the refills stream over
 * at least that many rounds whatever the machine's speed, and each slice's refills land while the
 * round that follows reads.
 */
const SLICES = 20;
const SLICE = Math.ceil(ORDERS / SLICES);
/** Orders per timeout round and refills per outbox batch: small, so a slice refills in many small commits. */
const TIMEOUT_BATCH = Math.max(1, Math.round(SLICE / 5));
const OUTBOX_BATCH = Math.max(1, Math.round(SLICE / 10));

let t: TestOrigin;
/** A pool on the test database whose every session defaults to READ COMMITTED. */
let readCommitted: Db;
beforeAll(async () => {
  t = await startTestOrigin({
    RECONCILE_INTERVAL_MS: '3600000', // this origin's own job parked: the test runs its own
    TIMEOUT_SCAN_MS: '3600000', // woken by hand once the orders expired
    TIMEOUT_BATCH_SIZE: String(TIMEOUT_BATCH), // small batches: refills stream for as long as possible
    OUTBOX_POLL_MS: '20',
    OUTBOX_BATCH_SIZE: String(OUTBOX_BATCH),
  });
  readCommitted = createPool(t.db.url, 4);
  readCommitted.on('connection', (c) => {
    (c as unknown as { query(sql: string, cb: () => void): void }).query(
      'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
      () => {},
    );
  });
}, 120_000);
afterAll(async () => {
  await readCommitted?.end();
  await t?.stop();
});

/** The periodic job on the READ COMMITTED pool, every 200 ms, alarming on a single failing run. */
function watchingJob() {
  const alerts: { round: number; failing: string[] }[] = [];
  const skipped: number[] = [];
  let rounds = 0;
  /** Work done between two rounds, before the next one reads anything (then cleared). */
  let betweenRounds: (() => Promise<void>) | undefined;
  /** Work done before every round reads, and a reading of its own taken before and after the round. */
  let eachRound: { before: () => Promise<void>; gauge: () => Promise<number> } | undefined;
  /** Rounds during which the gauge moved: readings that other commits straddled. */
  let straddled = 0;
  const log = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { alert?: string; failing?: { name: string }[]; msg: string };
        if (entry.alert === 'reconciliation_mismatch')
          alerts.push({ round: rounds, failing: (entry.failing ?? []).map((c) => c.name) });
        if (entry.msg.startsWith('reconciliation unstable')) skipped.push(rounds);
      },
    },
  );
  const config = {
    ...t.origin.parts.config,
    RECONCILE_INTERVAL_MS: 200,
    RECONCILE_CONFIRM_RUNS: 1, // stricter than production: every run that fails is an alarm
  };
  const job = new (class extends ReconcileJob {
    override async round() {
      rounds++;
      const work = betweenRounds;
      betweenRounds = undefined;
      await work?.();
      if (!eachRound) return super.round();
      const { before, gauge } = eachRound;
      await before();
      const at = await gauge();
      const more = await super.round();
      if ((await gauge()) !== at) straddled++;
      return more;
    }
  })({ ...reconcileJobDeps(t), db: readCommitted, config, log });
  /** Runs `work` just before the next round reads; resolves with that round's number. */
  const beforeNextRound = (work: () => Promise<void>) =>
    new Promise<number>((resolve, reject) => {
      betweenRounds = () =>
        work().then(
          () => resolve(rounds),
          (err: unknown) => {
            reject(err as Error);
            throw err;
          },
        );
    });
  const everyRound = (next: typeof eachRound) => {
    eachRound = next;
  };
  return { job, alerts, skipped, rounds: () => rounds, straddled: () => straddled, beforeNextRound, everyRound };
}

describe('periodic reconciliation while refills stream in', () => {
  it(`no alarm while ${ORDERS} timed-out orders refill and the check runs every 200 ms; a unit taken from Redis is alarmed within one round`, async () => {
    const { activityId, skuId } = await t.sale({ stock: ORDERS });
    const queue = users(8_000_000, ORDERS);
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let u = queue.shift(); u; u = queue.shift())
          await t.internal('POST', '/internal/reserve', { activityId, userId: u, quantity: 1, requestId: `c-${u}` });
      }),
    );
    const orders = () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
    await waitFor(orders, (n) => n === ORDERS, 180_000, 200);

    const watch = watchingJob();
    const timeouts = t.origin.lifecycle!.timeouts;
    const refilled = () =>
      count(t, 'SELECT COUNT(*) FROM stock_sync_outbox WHERE activity_id = ? AND status <> 0', [activityId]);
    let slices = 0;
    let refillsStarted = 0;
    watch.everyRound({
      before: async () => {
        if (slices === SLICES) return;
        if (slices++ === 0) refillsStarted = watch.rounds();
        await t.db.pool.query(
          'UPDATE seckill_order SET expire_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND expire_at > NOW(3) ORDER BY id LIMIT ?',
          [activityId, SLICE],
        );
        timeouts.wake(); // the scan interval is parked: this slice times out now, while the round reads
      },
      gauge: refilled,
    });
    watch.job.start();
    await waitFor(refilled, (n) => n === ORDERS, 300_000, 100);
    watch.everyRound(undefined);
    const refillRounds = watch.rounds() - refillsStarted;
    expect(Number(await t.redis.get(activityKeys(activityId, skuId).stock))).toBe(ORDERS);

    // A unit taken from Redis by hand, between two rounds (never under a reading in progress, which
    // would make the round that alarms ambiguous): the round that follows alarms.
    const before = await watch.beforeNextRound(async () => {
      await t.redis.decr(activityKeys(activityId, skuId).stock);
    });
    await waitFor(
      async () => watch.alerts.length,
      (n) => n > 0,
      10_000,
      20,
    );
    await watch.job.stop();
    console.log(
      `reconcile while refilling: ${ORDERS} refills over ${refillRounds} rounds of the 200 ms check, ` +
        `${watch.straddled()} of them read while refills committed; ` +
        `alarms during refills ${watch.alerts.filter((a) => a.round < before).length}, skipped (unstable) ${watch.skipped.length}; ` +
        `unit taken before round ${before}, alarmed in round ${watch.alerts[0]?.round}`,
    );
    // The refills streamed over every slice's round, and readings were taken while they committed.
    expect(slices).toBe(SLICES);
    expect(refillRounds).toBeGreaterThanOrEqual(SLICES - 1);
    expect(watch.straddled()).toBeGreaterThanOrEqual(SLICES / 4);
    expect(watch.alerts.filter((a) => a.round < before)).toEqual([]);
    expect(watch.skipped).toEqual([]);
    expect(watch.alerts[0]!.round).toBe(before);
    expect(watch.alerts[0]!.failing).toContain(CROSS);
  }, 600_000);
});

describe('a reading Redis did not hold still across', () => {
  it('a Redis-side failure seen only while Redis moved is unstable (skipped), read RECONCILE_READ_ATTEMPTS times', async () => {
    const { activityId } = await t.sale({ stock: 10 });
    const sale = await t.origin.parts.catalog.resolve(activityId);
    // A refill MySQL never committed: a real surplus of one unit in Redis.
    await t.origin.parts.redis.sales.refill(sale, { reservationId: 'phantom', quantity: 1 });
    let n = 0;
    // Between each Redis reading and the MySQL read, another such refill lands: every reading fails,
    // and every reading also sees Redis move.
    const moving = readingRedisThen(t, async () => {
      await t.origin.parts.redis.sales.refill(sale, { reservationId: `moving-${++n}`, quantity: 1 });
    });
    const rec = await reconcile({ ...moving, config: { RECONCILE_READ_ATTEMPTS: 3 } }, activityId);
    expect(n).toBe(3);
    expect(rec).toMatchObject({ ok: false, unstable: true, readings: 3 });

    // Redis now holds still: the surplus (4 units) is proven on the first reading.
    const still = await reconcile({ ...reconcileDeps(t), config: { RECONCILE_READ_ATTEMPTS: 3 } }, activityId);
    expect(still).toMatchObject({ ok: false, unstable: false, readings: 1 });
    expect(failingChecks(still)).toContain(`${CROSS} 10/14`);
  });

  it('a reading that moved but fails once is read again, and the next (still) reading decides', async () => {
    const { activityId } = await t.sale({ stock: 10 });
    const sale = await t.origin.parts.catalog.resolve(activityId);
    await t.origin.parts.redis.sales.refill(sale, { reservationId: 'phantom', quantity: 1 });
    let n = 0;
    const once = readingRedisThen(t, async () => {
      if (n++ === 0) await t.origin.parts.redis.sales.refill(sale, { reservationId: 'moved-once', quantity: 2 });
    });
    const rec = await reconcile({ ...once, config: { RECONCILE_READ_ATTEMPTS: 3 } }, activityId);
    expect(rec).toMatchObject({ ok: false, unstable: false, readings: 2 });
    expect(failingChecks(rec)).toContain(`${CROSS} 10/13`);
  });
});
