/**
 * What benchmarks and the rehearsal share beyond support/: their secrets, the origin as production
 * runs it, a bench database, admin and signed calls to the origin.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomInt } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, spawnNode, spawnTs } from '../../support/processes.js';

export const BENCH_SECRETS = {
  ADMIN_TOKEN: 'bench-admin-token-0123',
  EDGE_ORIGIN_SECRET: 'bench-edge-origin-secret-0123456789',
  PAYMENT_WEBHOOK_SECRET: 'bench-payment-secret-0123456789',
};
/** The edge's secrets in benchmarks and the rehearsal (support/local-edge.ts); never production. */
export const BENCH_EDGE_SECRETS = {
  USER_TOKEN_SECRET: 'bench-user-token-secret-0123456789',
  TICKET_KEYS: 'k2:bench-ticket-key-two-0000000000',
  EDGE_ORIGIN_SECRET: BENCH_SECRETS.EDGE_ORIGIN_SECRET,
};

/** BENCH_NODE_FLAGS: node flags for the processes a benchmark or the rehearsal starts. */
export function benchNodeFlags(): string[] {
  return (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
}

/** A TypeScript entry point in its own Node process (tsx), with BENCH_NODE_FLAGS. */
export function spawnBenchTs(entry: string, env: Record<string, string>, opts: { quiet?: boolean } = {}): ChildProcess {
  return spawnTs(entry, env, { ...opts, nodeFlags: benchNodeFlags() });
}

let built = false;

/** Builds dist/ (`npm run build`) when it is missing or older than a source file of origin/ or contract/. */
function ensureOriginBuilt(): void {
  if (built) return;
  const main = join(ROOT, 'dist', 'origin', 'main.js');
  const newestSource = (dir: string): number => {
    let newest = 0;
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts'))
        newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
    return newest;
  };
  const stale =
    !existsSync(main) || statSync(main).mtimeMs < Math.max(newestSource('origin'), newestSource('contract'));
  if (stale) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
}

/**
 * The origin compiled, as production runs it: `node dist/origin/main.js` (built first when dist/ is
 * stale), so the benchmarks measure the code a sale runs. NODE_ENV stays unset: production only adds
 * start-up checks (secret lengths, a metrics token) that the benchmarks' local secrets don't meet.
 * BENCH_ORIGIN=tsx runs the TypeScript source through tsx instead (as the tests do).
 */
export function spawnOrigin(env: Record<string, string>, opts: { quiet?: boolean } = {}): ChildProcess {
  if (process.env.BENCH_ORIGIN === 'tsx') return spawnBenchTs('origin/main.ts', env, opts);
  ensureOriginBuilt();
  return spawnNode([join('dist', 'origin', 'main.js')], env, { ...opts, nodeFlags: benchNodeFlags() });
}

/** The §9 edge signature with node:crypto — synchronous, for load generators' request hooks. */
export function edgeHeadersSync(secret: string, method: string, path: string, body: string): Record<string, string> {
  const ts = String(Date.now());
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const sig = createHmac('sha256', secret).update(`${ts}\n${method}\n${path}\n${bodyHash}`).digest('hex');
  return { 'x-edge-timestamp': ts, 'x-edge-signature': `v1=${sig}` };
}

export async function adminCall(originUrl: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(originUrl + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_SECRETS.ADMIN_TOKEN}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * A sale open since a second ago for an hour, created and warmed over the origin's admin API;
 * returns its id (a random one unless given; the SKU is the activity's id unless given).
 * `acceptReplicaRisk` warms a Redis layout one failover would stall (a benchmark measuring WAIT).
 */
export async function createOpenSale(
  originUrl: string,
  sale: {
    title: string;
    stock: number;
    stockBuckets?: number;
    activityId?: string;
    skuId?: string;
    acceptReplicaRisk?: boolean;
  },
): Promise<string> {
  const activityId = sale.activityId ?? String(randomInt(1, 2 ** 40));
  const now = Date.now();
  await adminCall(originUrl, 'POST', '/admin/activities', {
    activityId,
    skuId: sale.skuId ?? activityId,
    title: sale.title,
    stock: sale.stock,
    ...(sale.stockBuckets === undefined ? {} : { stockBuckets: sale.stockBuckets }),
    startsAt: new Date(now - 1000).toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
  });
  const risk = sale.acceptReplicaRisk ? '?acceptReplicaRisk=true' : '';
  await adminCall(originUrl, 'POST', `/admin/activities/${activityId}/warmup${risk}`);
  return activityId;
}

/**
 * A migrated database of the benchmark's own (`<BENCH_MYSQL_SERVER>/seckill_bench_<random>`), so no
 * earlier run's sales are settled alongside; `drop()` removes it and the sales' Redis keys.
 */
export async function benchDatabase(): Promise<{ url: string; drop(activities: [string, string][]): Promise<void> }> {
  const server = process.env.BENCH_MYSQL_SERVER ?? 'mysql://root@127.0.0.1:3306';
  const name = `seckill_bench_${Date.now().toString(36)}`;
  const url = `${server}/${name}`;
  const { migrate } = await import('../../origin/platform/db/migrate.js');
  await migrate(url);
  return {
    url,
    async drop(activities) {
      const { default: mysql } = await import('mysql2/promise');
      const { Redis } = await import('ioredis');
      const { activityKeys, ACTIVITY_REGISTRY_KEY } = await import('../../origin/redis/keys.js');
      const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      for (const [activityId, skuId] of activities) {
        await redis.del(...Object.values(activityKeys(activityId, skuId)));
        await redis.hdel(ACTIVITY_REGISTRY_KEY, activityId);
      }
      await redis.quit();
      const conn = await mysql.createConnection({ uri: server });
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
    },
  };
}
