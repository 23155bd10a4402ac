/** Helpers shared by benchmarks and the rehearsal: child processes, a bench database, admin calls. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BENCH_SECRETS = {
  ADMIN_TOKEN: 'bench-admin-token-0123',
  EDGE_ORIGIN_SECRET: 'bench-edge-origin-secret-0123456789',
  PAYMENT_WEBHOOK_SECRET: 'bench-payment-secret-0123456789',
};
/** The edge's secrets in benchmarks and the rehearsal (bench/lib/local-edge.ts); never production. */
export const BENCH_EDGE_SECRETS = {
  USER_TOKEN_SECRET: 'bench-user-token-secret-0123456789',
  TICKET_KEYS: 'k2:bench-ticket-key-two-0000000000',
  EDGE_ORIGIN_SECRET: BENCH_SECRETS.EDGE_ORIGIN_SECRET,
};

export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

/** Runs a TypeScript entry point in its own Node process (tsx), inheriting stderr. */
export function spawnTs(entry: string, env: Record<string, string>, opts: { quiet?: boolean } = {}): ChildProcess {
  return spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', entry],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', opts.quiet ? 'ignore' : 'inherit', 'inherit'],
    },
  );
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
  if (process.env.BENCH_ORIGIN === 'tsx') return spawnTs('origin/main.ts', env, opts);
  ensureOriginBuilt();
  return spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean), join('dist', 'origin', 'main.js')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', opts.quiet ? 'ignore' : 'inherit', 'inherit'],
    },
  );
}

export async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} not up after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
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

export function pct(n: number): string {
  return `${(n * 100).toFixed(0)}%`;
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

/** CPU time (user + system, ms) a process has used so far; NaN where /proc is missing. */
export function cpuMsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

/**
 * The MySQL/MariaDB server's pid, to read its CPU time per unit of work: BENCH_MYSQLD_PID, else the
 * one `mariadbd`/`mysqld` process on this machine (undefined when there is none or several).
 */
export function mysqldPid(): number | undefined {
  if (process.env.BENCH_MYSQLD_PID) return Number(process.env.BENCH_MYSQLD_PID);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'mariadbd' || comm === 'mysqld') found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found.length === 1 ? found[0] : undefined;
}
