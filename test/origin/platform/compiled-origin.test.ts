/**
 * The compiled origin (`npm run build` → dist/) is what production runs: `node dist/origin/main.js`
 * must find lua/ and schema/ from dist/ (origin/platform/paths.ts), migrate a database and answer /healthz
 * against the real Redis and MariaDB. Builds dist/ once (tsc, a few seconds to half a minute here).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomHex } from '../../../contract/ids.js';
import { freePort, waitForHttp } from '../../../support/processes.js';
import { PROJECT_ROOT } from '../../../origin/platform/paths.js';
import { MYSQL_SERVER_URL, REDIS_URL } from '../../helpers/db.js';

// Production refuses short secrets and an open /healthz (METRICS_TOKEN).
const SECRETS = {
  ADMIN_TOKEN: 'compiled-admin-token-0123456789abcdef',
  EDGE_ORIGIN_SECRET: 'compiled-edge-origin-secret-0123456789',
  PAYMENT_WEBHOOK_SECRET: 'compiled-payment-secret-0123456789ab',
  METRICS_TOKEN: 'compiled-metrics-token-0123456789abcd',
  DRAW_SECRET: 'compiled-draw-secret-0123456789abcdef',
};
const healthz = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`, { headers: { authorization: `Bearer ${SECRETS.METRICS_TOKEN}` } });

describe('the compiled origin (dist/)', () => {
  const database = `seckill_test_dist_${randomHex(6)}`;
  const mysqlUrl = `${MYSQL_SERVER_URL}/${database}`;
  const env = { ...process.env, ...SECRETS, NODE_ENV: 'production', MYSQL_URL: mysqlUrl, REDIS_URL, LOG_LEVEL: 'warn' };
  let origin: ChildProcess | null = null;

  beforeAll(() => {
    const build = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);
  }, 180_000);

  afterAll(async () => {
    if (origin && origin.exitCode === null) {
      origin.kill('SIGTERM');
      await once(origin, 'exit');
    }
    const conn = await mysql.createConnection({ uri: MYSQL_SERVER_URL });
    await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await conn.end();
  });

  it('builds dist/origin/main.js and migrate-cli.js, without copying lua/ or schema/', () => {
    expect(existsSync(join(PROJECT_ROOT, 'dist/origin/main.js'))).toBe(true);
    expect(existsSync(join(PROJECT_ROOT, 'dist/origin/migrate-cli.js'))).toBe(true);
    expect(existsSync(join(PROJECT_ROOT, 'dist/lua'))).toBe(false);
  });

  it('the draw hashing worker loads from dist/ and hashes pages as the main thread alone does', () => {
    // Three pages of an entrant list, passed over with 0 and then 1 worker by the compiled code.
    const script = `
      import { DrawHashThreads } from '${pathToFileURL(join(PROJECT_ROOT, 'dist/origin/lottery/draw-hash-threads.js')).href}';
      const pages = [0, 1, 2].map((p) => Array.from({ length: 500 }, (_, i) => (7000 + p * 500 + i) + ':1').join('\\n'));
      const reader = { entryCounts: async () => [1500], entryPage: async (_s, _b, start) => pages[start / 500] };
      const read = { pageSize: 500, inFlight: 2 };
      const out = [];
      for (const workers of [0, 1]) {
        let pagesHashed = 0;
        const threads = DrawHashThreads.start(workers, 30_000, (w) => w.on('message', () => pagesHashed++));
        const digest = await threads.digest(reader, {}, read, 'seed');
        const { candidates } = await threads.select(reader, {}, read, 'seed', digest, 10, null);
        await threads.close();
        out.push({ digest, winners: candidates.map((c) => c.userId), pagesHashed });
      }
      console.log(JSON.stringify(out));`;
    const dir = mkdtempSync(join(tmpdir(), 'draw-worker-'));
    writeFileSync(join(dir, 'check.mjs'), script);
    const run = spawnSync(process.execPath, [join(dir, 'check.mjs')], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    rmSync(dir, { recursive: true, force: true });
    expect(run.status, run.stderr).toBe(0);
    const [alone, withWorker] = JSON.parse(run.stdout);
    expect(withWorker.pagesHashed).toBeGreaterThan(0);
    expect({ ...withWorker, pagesHashed: 0 }).toEqual(alone);
    expect(alone.winners).toHaveLength(10);
  });

  it('node dist/origin/migrate-cli.js applies every schema/ migration to a new database', async () => {
    const run = spawnSync(process.execPath, ['dist/origin/migrate-cli.js'], {
      cwd: PROJECT_ROOT,
      env,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`migrated ${database}: applied 001_`));
    const conn = await mysql.createConnection({ uri: mysqlUrl });
    const [rows] = (await conn.query('SELECT COUNT(*) AS n FROM schema_migrations')) as any;
    await conn.end();
    const { readdirSync } = await import('node:fs');
    const files = readdirSync(join(PROJECT_ROOT, 'schema')).filter((f) => /^\d{3}_.+\.sql$/.test(f));
    expect(Number(rows[0].n)).toBe(files.length);
  });

  it('node dist/origin/main.js loads the Lua scripts and answers /healthz with Redis and MySQL up', async () => {
    const port = await freePort();
    origin = spawn(process.execPath, ['dist/origin/main.js'], {
      cwd: PROJECT_ROOT,
      env: { ...env, PORT: String(port), ORIGIN_ROLE: 'http' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    origin.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = once(origin, 'exit').then(([code]) => {
      throw new Error(`origin exited (code ${code}): ${stderr}`);
    });
    await Promise.race([waitForHttp(`http://127.0.0.1:${port}/healthz`, 30_000), exited]);
    const res = await healthz(port);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, redis: true, mysql: true });
  });
});
