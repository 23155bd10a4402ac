/**
 * `npm start` as an operator runs it: the secrets to sign with are printed (dev defaults)
 * or named (set ones, never printed); no command line of the stack carries a secret — wrangler gets
 * them through an owner-only env file and the edge still verifies the origin's signed pushes; on
 * SIGTERM (Ctrl-C) the demo sale is stopped and its Redis keys and registry entry are gone.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../support/processes.js';
import { randomHex } from '../../contract/ids.js';
import { DEV_SECRETS } from '../../origin/platform/secret-rules.js';
import { envFileText } from '../../scripts/wrangler-offline.js';
import { createTestDatabase, REDIS_URL, scalar, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/origin.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PREFIX = `start${randomHex(4)}:`;
const SET_SECRETS = {
  USER_TOKEN_SECRET: `user-${randomHex(12)}`,
  TICKET_KEYS: `k1:ticket-${randomHex(12)}`,
  EDGE_ORIGIN_SECRET: `edge-${randomHex(12)}`,
};
let db: TestDatabase;
let redis: Redis;
let child: ChildProcess | undefined;
let output = '';

beforeAll(async () => {
  db = await createTestDatabase();
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    process.kill(child.pid, 'SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
  redis.disconnect();
  await db.drop();
});

it('prints the secrets, keeps them off command lines, and retires the demo sale on SIGTERM', async () => {
  const [port, edgePort, inspector, prometheusPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...SET_SECRETS,
      START_SKIP_SERVICES: '1',
      PORT: String(port),
      EDGE_PORT: String(edgePort),
      EDGE_INSPECTOR_PORT: String(inspector),
      MYSQL_URL: db.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
      LOG_LEVEL: 'warn',
      // Prometheus beside the stack (docs/watching-a-sale.md): required here, on a port of its own.
      START_PROMETHEUS: '1',
      PROMETHEUS_PORT: String(prometheusPort),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await waitFor(
    async () => output,
    (o) => o.includes('Ctrl-C stops everything') || child!.exitCode !== null,
    150_000,
    250,
  );
  const activityId = /Demo activity (\d+):/.exec(output)?.[1];
  expect(activityId, output).toBeDefined();

  // Dev defaults (public) are printed; secrets from the environment are only named.
  expect(output).toMatch(new RegExp(`ADMIN_TOKEN\\s+${DEV_SECRETS.ADMIN_TOKEN}`));
  expect(output).toMatch(new RegExp(`PAYMENT_WEBHOOK_SECRET\\s+${DEV_SECRETS.PAYMENT_WEBHOOK_SECRET}`));
  expect(output).toMatch(/USER_TOKEN_SECRET\s+\(from your environment\)/);
  for (const value of Object.values(SET_SECRETS)) expect(output).not.toContain(value);
  // A token signed with a real USER_TOKEN_SECRET is a credential: not printed, only how to mint one.
  expect(output).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
  expect(output).toMatch(/User token:\s+npm run token -- --user 42/);

  const commandLines = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
  expect(commandLines).toContain(`--port ${edgePort}`); // ps lists wrangler's arguments …
  for (const value of Object.values(SET_SECRETS)) expect(commandLines).not.toContain(value); // … but no secret

  // The edge answers the demo: the origin's live-list push, signed with EDGE_ORIGIN_SECRET, was accepted.
  const pub = await fetch(`http://127.0.0.1:${edgePort}/api/activities/${activityId}`);
  expect(pub.status).toBe(200);
  const registry = `${PREFIX}sk:activities`;
  expect(await redis.hexists(registry, activityId!)).toBe(1);

  // Prometheus runs with the repo's rules, scrapes this origin, and its alerts page is printed.
  const prometheus = `http://127.0.0.1:${prometheusPort}`;
  expect(output).toMatch(new RegExp(`Prometheus \\(alerts\\):\\s+${prometheus}/(classic/)?alerts`));
  await waitFor(
    async () => (await (await fetch(`${prometheus}/api/v1/query?query=up{job="seckill-origin"}`)).json()) as any,
    (body) => body.data.result[0]?.value[1] === '1',
    30_000,
    500,
  );
  const rules = (await (await fetch(`${prometheus}/api/v1/rules?type=alert`)).json()) as any;
  expect(rules.data.groups[0].rules.map((r: { name: string }) => r.name)).toContain('SuccessRateBelowBaseline');
  expect(await redis.exists(`${PREFIX}sk:{${activityId}:1001}:stock`)).toBe(1);

  child.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => child!.once('exit', (c) => r(c)));
  expect(code, output).toBe(0);
  expect(output).toContain(`demo sale ${activityId} stopped; its Redis keys removed`);
  expect(await redis.hexists(registry, activityId!)).toBe(0);
  await expect(fetch(`${prometheus}/-/ready`)).rejects.toThrow(); // stopped with the stack
  await waitFor(
    () => redis.exists(`${PREFIX}sk:{${activityId}:1001}:stock`),
    (n) => n === 0,
    5_000,
  );
  expect(
    await scalar(db.pool, 'SELECT COUNT(*) FROM seckill_activity WHERE id = ? AND state = ?', [activityId, 'stopped']),
  ).toBe(1);
}, 240_000);

it('the env file carries values dotenv reads back verbatim, and refuses what it could not', () => {
  expect(envFileText({ A: 'k1:x', B: "it's" })).toBe("A='k1:x'\nB=\"it's\"\n");
  expect(() => envFileText({ A: 'two\nlines' })).toThrow(/one line/);
});
