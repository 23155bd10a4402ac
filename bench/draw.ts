/**
 * The lottery draw at scale (DESIGN §10): 200,000 entrants for 20,000 units by default, on the
 * real Redis and MySQL the draw uses. The entrant hash is filled directly (HSET, as lua/enter-4.lua
 * leaves it; bench/lottery.ts measures entering itself), then:
 *  1. read: every entry by HSCAN (StockStore.entrants), as the draw reads them;
 *  2. order, three ways on the same entrants (process CPU ms, each best of --rounds):
 *     - bare hash: one HMAC per entrant and nothing else — the floor any draw pays;
 *     - full sort: `drawOrder` (every ticket, then sort all) and its first k — the draw before;
 *     - selection: `DrawQueue` (every ticket, heapify, take k in the draw's batches) — the draw now;
 *     the selection's k must equal the sort's first k, entrant for entrant (else exit code 1);
 *  3. the real runDraw (origin/lottery/draw.ts): time to final winners and to the published list.
 * Ratios: full sort ÷ selection (order CPU) and selection ÷ bare hash.
 *
 *   npm run bench -- draw [-- --entrants 200000 --units 20000 --rounds 3]
 *   npx tsx bench/draw.ts --entrants 200000 --units 20000
 */
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createActivity, warmup } from '../origin/activity/operations.js';
import { loadConfig } from '../origin/config.js';
import { createOriginContext } from '../origin/context.js';
import { createLogger } from '../origin/logger.js';
import { runDraw } from '../origin/lottery/draw.js';
import { DrawQueue } from '../origin/lottery/draw-order.js';
import { drawOrder, type OrderedEntrant } from '../origin/lottery/draw-rule.js';
import { findDraw } from '../origin/lottery/draw-store.js';
import { activityKeys } from '../origin/redis/keys.js';
import { BENCH_SECRETS, benchDatabase } from './lib/stack.js';

export interface DrawBenchResult {
  entrants: number;
  units: number;
  readMs: number;
  bareHashCpuMs: number;
  fullSortCpuMs: number;
  selectionCpuMs: number;
  /** full sort ÷ selection. */
  ratio: number;
  /** selection ÷ bare hash. */
  overBareHash: number;
  winnersFinalMs: number;
  publishedMs: number;
  winners: number;
  sameOrder: boolean;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

/** Best (least) CPU ms of `rounds` runs of `fn`, and its last result. */
function bestOf<T>(rounds: number, fn: () => T): { ms: number; result: T } {
  let ms = Infinity;
  let result!: T;
  for (let r = 0; r < rounds; r++) {
    const t = process.cpuUsage();
    result = fn();
    ms = Math.min(ms, cpuMs(t));
  }
  return { ms, result };
}

export async function benchDraw(): Promise<DrawBenchResult> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      entrants: { type: 'string', default: '200000' },
      units: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '3' },
      'reserve-batch': { type: 'string', default: '100' },
      'publish-batch': { type: 'string', default: '1000' },
    },
    strict: false,
  });
  const N = Number(values.entrants);
  const UNITS = Number(values.units);
  const ROUNDS = Number(values.rounds);
  const reserveBatch = Number(values['reserve-batch']);
  const publishBatch = Number(values['publish-batch']);
  const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

  const db = await benchDatabase();
  const log = createLogger('warn');
  const ctx = await createOriginContext(
    loadConfig({ ...BENCH_SECRETS, MYSQL_URL: db.url, REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: '5000', LOG_LEVEL: 'warn' }),
    log,
  );
  const redis = new Redis(REDIS_URL);
  const activityId = String(Date.now());
  const skuId = '1';
  const sale = { activityId, skuId, buckets: 1 };
  try {
    const startsAt = Date.now();
    await createActivity(ctx, {
      activityId,
      skuId,
      title: 'draw bench',
      stock: UNITS,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3_600_000).toISOString(),
      maxPerUser: 1,
      paymentTimeoutSeconds: 900,
      userRatePerSec: 1,
      admissionRatePerSec: 5000,
      admissionShards: 4,
      state: 'open',
      admission: 'lottery',
      lotteryWindowMs: 600_000,
      stockBuckets: 1,
      soldOutThreshold: 0,
      eligibility: null,
      overflow: 'reject',
    });
    await warmup(ctx, activityId);
    const entrantsKey = activityKeys(activityId, skuId).entrants;
    for (let i = 0; i < N; i += 10_000) {
      const fields: string[] = [];
      for (let j = i; j < Math.min(N, i + 10_000); j++) fields.push(String(10_000_000 + j * 7), '1');
      await redis.hset(entrantsKey, ...fields);
    }
    console.log(`${N} entrants for ${UNITS} units (load: ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`);

    // 1. Read, as the draw reads.
    let t = performance.now();
    const all = await ctx.stock.entrants(sale);
    const readMs = performance.now() - t;
    const list = Array.from(all, ([userId, quantity]) => ({ userId, quantity }));

    // 2. Order, three ways.
    const { seed } = (await findDraw(ctx.db, activityId))!;
    const key = Buffer.from(seed, 'utf8');
    const bare = bestOf(ROUNDS, () => {
      let x = 0;
      for (const e of list) x += createHmac('sha256', key).update(e.userId, 'utf8').digest('hex').length;
      return x;
    });
    const sorted = bestOf(ROUNDS, () => drawOrder(seed, list).slice(0, UNITS));
    const selected = bestOf(ROUNDS, () => {
      const queue = DrawQueue.of(seed, list);
      const first: OrderedEntrant[] = [];
      while (first.length < UNITS && queue.remaining > 0) first.push(...queue.take(reserveBatch));
      return first;
    });
    const sameOrder =
      sorted.result.length === selected.result.length &&
      sorted.result.every((e, i) => e.userId === selected.result[i]!.userId && e.ticket === selected.result[i]!.ticket);
    if (!sameOrder) process.exitCode = 1;
    const ratio = sorted.ms / selected.ms;
    const overBareHash = selected.ms / bare.ms;
    console.log(`read (HSCAN): ${readMs.toFixed(0)} ms wall`);
    console.log(
      `order, CPU ms (best of ${ROUNDS}): bare hash ${bare.ms.toFixed(0)} · full sort ${sorted.ms.toFixed(0)} · ` +
        `selection ${selected.ms.toFixed(0)} → sort ÷ selection ${ratio.toFixed(2)}×, selection ÷ bare hash ` +
        `${overBareHash.toFixed(2)}×; same ${UNITS} entrants in the same order: ${sameOrder ? 'yes' : 'NO'}`,
    );

    // 3. The real draw.
    const drawStarted = Date.now();
    t = performance.now();
    const cpu = process.cpuUsage();
    await runDraw(ctx, activityId, { owner: 'bench', leaseMs: 60_000, reserveBatch, publishBatch });
    const publishedMs = performance.now() - t;
    const drawCpuMs = cpuMs(cpu);
    const done = (await findDraw(ctx.db, activityId))!;
    const winnersFinalMs = done.drawnAt!.getTime() - drawStarted;
    console.log(
      `runDraw: winners final after ${winnersFinalMs} ms (${done.winners} winners), entrant list published ` +
        `after ${publishedMs.toFixed(0)} ms; bench process CPU ${drawCpuMs.toFixed(0)} ms`,
    );
    return {
      entrants: N,
      units: UNITS,
      readMs,
      bareHashCpuMs: bare.ms,
      fullSortCpuMs: sorted.ms,
      selectionCpuMs: selected.ms,
      ratio,
      overBareHash,
      winnersFinalMs,
      publishedMs,
      winners: done.winners ?? 0,
      sameOrder,
    };
  } finally {
    await ctx.close();
    await redis.quit();
    await db.drop([[activityId, skuId]]);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchDraw().then(
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
