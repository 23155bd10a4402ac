/**
 * Settlement benchmark: time to settle 20,000 queued reservations (one consumer process,
 * SETTLE_WORKERS consumers in it), orders/s, against a baseline measured in the same run: the same
 * number of MySQL connections doing bare autocommit hot-row `UPDATE ... WHERE available >= 1`
 * (the one statement of the settle transaction that cannot run in parallel).
 *
 *   npx tsx bench/settle.ts [--reservations 20000] [--workers 4]
 */
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { migrate } from '../origin/db/migrate.js';
import { activityKeys } from '../origin/redis/keys.js';
import { defineScripts } from '../origin/redis/scripts.js';
import { adminCall, BENCH_SECRETS, freePort, spawnTs, stopChild, waitForHttp } from './lib/stack.js';

const { values } = parseArgs({
  options: { reservations: { type: 'string', default: '20000' }, workers: { type: 'string', default: '4' } },
});
const N = Number(values.reservations);
const workers = Number(values.workers);

async function baselineUpdates(
  pool: mysql.Pool,
  activityId: string,
  skuId: string,
  total: number,
  concurrency: number,
) {
  await pool.query('INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, ?, ?, ?)', [
    activityId,
    skuId,
    total,
    total,
  ]);
  let left = total;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        await pool.execute(
          'UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ? AND available >= 1',
          [activityId, skuId],
        );
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.query('DELETE FROM seckill_stock WHERE activity_id = ?', [activityId]);
  return { seconds, perSecond: total / seconds };
}

export async function benchSettle() {
  const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/seckill_bench';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  await migrate(mysqlUrl);
  const pool = mysql.createPool({ uri: mysqlUrl, connectionLimit: workers + 2 });
  const redis = new Redis(redisUrl);
  const port = await freePort();
  const originUrl = `http://127.0.0.1:${port}`;
  const env = { ...BENCH_SECRETS, MYSQL_URL: mysqlUrl, REDIS_URL: redisUrl, LOG_LEVEL: 'warn' };
  const http = spawnTs('origin/main.ts', { ...env, PORT: String(port), ORIGIN_ROLE: 'http' });
  let consumers: ReturnType<typeof spawnTs> | null = null;
  try {
    await waitForHttp(`${originUrl}/healthz`);
    const baseline = await baselineUpdates(pool, String(randomInt(1, 2 ** 40)), '1', N, workers);

    const activityId = String(randomInt(1, 2 ** 40));
    const skuId = '1';
    const now = Date.now();
    await adminCall(originUrl, 'POST', '/admin/activities', {
      activityId,
      skuId,
      title: 'settle bench',
      stock: N,
      startsAt: new Date(now - 1000).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
    });
    await adminCall(originUrl, 'POST', `/admin/activities/${activityId}/warmup`);
    // Queue N reservations exactly as the reserve path does (the Lua script), pipelined.
    const keys = activityKeys(activityId, skuId);
    const scripts = defineScripts(redis);
    const base = randomInt(1, 2 ** 40);
    for (let i = 0; i < N; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, N - i) }, (_, j) =>
          scripts.reserve(
            [keys.stock, keys.holders, keys.events, keys.config],
            [
              String(base + i + j),
              1,
              `${activityId}-${(i + j).toString(16).padStart(32, '0')}`,
              `b${i + j}`,
              '',
              Date.now(),
            ],
          ),
        ),
      );
    }
    const started = performance.now();
    consumers = spawnTs('origin/main.ts', {
      ...env,
      ORIGIN_ROLE: 'consumers',
      SETTLE_WORKERS: String(workers),
      SETTLE_DISCOVERY_MS: '50',
    });
    for (;;) {
      const [[row]] = (await pool.query('SELECT COUNT(*) AS n FROM seckill_order WHERE activity_id = ?', [
        activityId,
      ])) as any;
      if (Number(row.n) >= N) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const perSecond = N / seconds;
    console.log(`\nsettlement benchmark (${N} queued reservations, one consumer process with ${workers} consumers)`);
    console.table({
      'bare hot-row UPDATE autocommit (baseline)': {
        seconds: +baseline.seconds.toFixed(2),
        perSecond: Math.round(baseline.perSecond),
      },
      'settle: order + stock + log in one tx, then XACK': {
        seconds: +seconds.toFixed(2),
        perSecond: Math.round(perSecond),
      },
    });
    console.log(
      `ratio settle/bare-update = ${(perSecond / baseline.perSecond).toFixed(2)} (time includes process start-up)`,
    );
    await adminCall(originUrl, 'PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
    return { seconds, perSecond, baseline };
  } finally {
    if (consumers) await stopChild(consumers);
    await stopChild(http);
    await pool.end();
    await redis.quit();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchSettle().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
