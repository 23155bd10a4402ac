/**
 * Lottery benchmark (docs/design.md §10): what entering costs and what the draw costs at scale.
 *  - entries: N users through RedisStore.enter (lua/enter-6.lua on the request path, `--concurrency`
 *    in flight), entries/s, and Redis memory for the entrant hash (used_memory delta, MEMORY USAGE);
 *  - the draw: the real runDraw (origin/lottery/draw.ts) on those entries — digest the closed list,
 *    select in bounded memory, reserve in order until the units are gone, then the list into MySQL —
 *    with the time to final winners, the time to publish, and the process's peak RSS.
 *
 *   npx tsx bench/lottery.ts [--entrants 1000000] [--units 1000] [--concurrency 64] [--buckets 1]
 */
import { Redis } from 'ioredis';
import { createActivity, warmup, type ActivityOperationsDeps } from '../origin/operator/operations.js';
import { loadConfig } from '../origin/platform/config.js';
import { buildOriginParts, saleOperationParts } from '../origin/parts.js';
import { createLogger } from '../origin/platform/logger.js';
import { runDraw } from '../origin/lottery/draw.js';
import { findDraw } from '../origin/lottery/draw-store.js';
import { activityKeys } from '../origin/redis/keys.js';
import { benchOptions } from './lib/cli.js';
import { lotterySale } from './lib/lottery-sale.js';
import { BENCH_SECRETS, benchDatabase } from './lib/stack.js';

const options = benchOptions({ numbers: { entrants: 1_000_000, units: 1000, concurrency: 64, buckets: 1 } });
const N = options.entrants;
const UNITS = options.units;
const CONCURRENCY = options.concurrency;
const BUCKETS = options.buckets;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const usedMemory = async (r: Redis) => Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1]);

const db = await benchDatabase();
const log = createLogger('warn');
const ctx = await buildOriginParts(
  loadConfig({ ...BENCH_SECRETS, MYSQL_URL: db.url, REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: '2000', LOG_LEVEL: 'warn' }),
  log,
);
const operations: ActivityOperationsDeps = saleOperationParts(ctx);
const redis = new Redis(REDIS_URL);
const activityId = String(Date.now());
const skuId = '1';
const sale = { activityId, skuId, buckets: BUCKETS };
try {
  await createActivity(
    operations,
    lotterySale({ activityId, skuId, title: 'lottery bench', units: UNITS, stockBuckets: BUCKETS }),
  );
  await warmup(operations, activityId);

  // ── Entries ──
  const memBefore = await usedMemory(redis);
  let next = 0;
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < N; i = next++) {
        const r = await ctx.redis.lotteryEntries.enter({ ...sale, userId: String(10_000_000 + i), quantity: 1 });
        if (r.kind !== 'entered') refused++;
        if (i > 0 && i % 200_000 === 0) process.stdout.write(`  ${i} entries…\n`);
      }
    }),
  );
  const entrySeconds = (performance.now() - started) / 1000;
  const memAfter = await usedMemory(redis);
  const keyBytes = Number(
    await redis.call('MEMORY', 'USAGE', activityKeys(activityId, skuId).entrants, 'SAMPLES', '0'),
  );
  console.log(
    `entries: ${N} in ${entrySeconds.toFixed(1)} s = ${Math.round(N / entrySeconds)} entries/s ` +
      `(${CONCURRENCY} in flight, one EVALSHA each), ${refused} refused`,
  );
  console.log(
    `redis memory: used_memory +${mb(memAfter - memBefore)}; entrant hash ${mb(keyBytes)} ` +
      `= ${(keyBytes / N).toFixed(0)} bytes/entrant`,
  );

  // ── The full draw ──
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const t = performance.now();
  const drawStarted = Date.now();
  await runDraw(
    { db: ctx.db, log: ctx.log, entries: ctx.redis.lotteryEntries, sales: ctx.redis.sales, publisher: ctx.publisher },
    activityId,
    {
      owner: 'bench',
      leaseMs: 60_000,
      reserveBatch: ctx.config.DRAW_RESERVE_BATCH,
      publishBatch: ctx.config.DRAW_PUBLISH_BATCH,
      pageSize: ctx.config.DRAW_READ_PAGE,
      inFlight: ctx.config.DRAW_READ_IN_FLIGHT,
      drawSecret: ctx.config.DRAW_SECRET,
      hashAnswerMs: ctx.config.DRAW_HASH_ANSWER_MS,
    },
  );
  const totalMs = performance.now() - t;
  clearInterval(sampler);
  const done = (await findDraw(ctx.db, activityId))!;
  const decidedMs = done.drawnAt!.getTime() - drawStarted;
  console.log(
    `draw: winners final after ${decidedMs} ms (${done.winners} winners, ${done.unitsWon} units), ` +
      `entrant list published after ${totalMs.toFixed(0)} ms in all; origin peak RSS ${mb(peakRss)}`,
  );
} finally {
  await ctx.close();
  for (let b = 0; b < BUCKETS; b++) await redis.del(...Object.values(activityKeys(activityId, skuId, b, BUCKETS)));
  await redis.quit();
  await db.drop([[activityId, skuId]]);
}
