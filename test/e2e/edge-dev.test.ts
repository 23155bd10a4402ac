/**
 * The edge under `npm run edge` (`wrangler dev`): with BOT_CHECK_URL and
 * BOT_CHECK_SECRET set, the secret reaches the Worker (it used to be dropped, and every request
 * answered 500) and the bot check works; a 64 MB chunked purchase is the Worker's 413, run after run,
 * never the dev proxy's 503 "worker restarted"; BOT_CHECK_URL without its secret refuses to start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/processes.js';
import type { ActivitySnapshot } from '../../contract/index.js';
import { openSnapshot, signedPut as signedPutTo } from '../../support/edge-calls.js';
import { devConfigWith } from '../../scripts/edge-dev-config.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { waitFor } from '../helpers/origin.js';
import { startStandInOrigin, type StandInOrigin } from '../../support/stand-in-origin.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BOT_SECRET = 'bot-secret-for-wrangler-dev';
/** 64 MB chunked purchases, each must be the Worker's 413 (it was 503 in 1 of 2 runs). */
const BIG_RUNS = 3;
const BIG_BYTES = 64 * 1024 * 1024;

let origin: StandInOrigin;
let verifier: Server;
const seen: { secret: string | null; response: string | null }[] = [];
let edge: ChildProcess;
let edgeUrl = '';
let output = '';

beforeAll(async () => {
  origin = await startStandInOrigin({ secret: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET });
  verifier = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push({ secret: form.get('secret'), response: form.get('response') });
      const success = form.get('secret') === BOT_SECRET && form.get('response') === 'good-token';
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success }));
    });
  });
  await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', () => r()));
  const [port, inspector] = [await freePort(), await freePort()];
  edgeUrl = `http://127.0.0.1:${port}`;
  edge = spawn('npm', ['run', 'edge'], {
    cwd: ROOT,
    detached: true, // its own process group: wrangler and workerd are stopped with it
    env: {
      ...process.env,
      ...TEST_EDGE_SECRETS,
      ORIGIN_URL: origin.url,
      EDGE_PORT: String(port),
      EDGE_INSPECTOR_PORT: String(inspector),
      BOT_CHECK_URL: `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`,
      BOT_CHECK_SECRET: BOT_SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  edge.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  edge.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await waitFor(
    () =>
      fetch(`${edgeUrl}/favicon.ico`).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => status === 200 || edge.exitCode !== null,
    120_000,
    250,
  );
  if (edge.exitCode !== null) throw new Error(`npm run edge exited: ${output}`);
}, 150_000);

afterAll(async () => {
  if (edge?.pid !== undefined && edge.exitCode === null) {
    process.kill(-edge.pid, 'SIGTERM');
    await new Promise((r) => edge.once('exit', r));
  }
  verifier?.closeAllConnections();
  await new Promise((r) => verifier?.close(r));
  await origin?.stop();
});

function snapshotOf(activityId: string): ActivitySnapshot {
  return openSnapshot(activityId, {
    skuId: '77',
    title: `wrangler dev ${activityId}`,
    userRatePerSec: 100,
    admissionRatePerSec: 10_000,
    admissionShards: 2,
  });
}

async function signedPut(path: string, body: unknown): Promise<number> {
  const res = await signedPutTo(edgeUrl, TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, path, JSON.stringify(body));
  await res.arrayBuffer();
  return res.status;
}

async function openActivity(): Promise<string> {
  const activityId = String(7_000_000 + Math.floor(Math.random() * 1_000_000));
  const snapshot = snapshotOf(activityId);
  origin.setActivity(activityId, { snapshot });
  expect(await signedPut(`/internal/activities/${activityId}`, snapshot)).toBe(200);
  expect(await signedPut('/internal/activities', { activityIds: [activityId] })).toBe(200);
  return activityId;
}

const bearer = async (userId: string) =>
  `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;

async function ticket(activityId: string, userId: string, token?: string) {
  const res = await fetch(`${edgeUrl}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: await bearer(userId), ...(token ? { 'x-challenge-token': token } : {}) },
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** `total` bytes as a chunked body from one reused 64 KiB buffer; the whole answer and how it ended. */
function sendChunked(path: string, total: number): Promise<{ status: number; text: string }> {
  const url = new URL(edgeUrl + path);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(
      {
        method: 'POST',
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { 'idempotency-key': `big-${Math.random()}`, 'content-type': 'application/json' },
      },
      (res) => {
        answered = true;
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const pump = () => {
      while (!answered && sent < total) {
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe('npm run edge (wrangler dev)', () => {
  it('with BOT_CHECK_URL and BOT_CHECK_SECRET: requests are answered (no 500), and the bot check passes and fails', async () => {
    const activityId = await openActivity();
    const pub = await fetch(`${edgeUrl}/api/activities/${activityId}`);
    expect(pub.status).toBe(200);
    await pub.arrayBuffer();

    const pass = await ticket(activityId, '3500001', 'good-token');
    expect(pass.status, JSON.stringify(pass.body)).toBe(200);
    expect(pass.body.purchaseUrl).toMatch(new RegExp(`^/api/activities/${activityId}/purchase\\?t=`));
    // The verifier was asked with the secret the Worker got through wrangler dev.
    expect(seen.at(-1)).toEqual({ secret: BOT_SECRET, response: 'good-token' });
    const fail = await ticket(activityId, '3500002', 'bad-token');
    expect([fail.status, fail.body.error]).toEqual([403, 'challenge_failed']);
    const before = seen.length;
    const missing = await ticket(activityId, '3500003');
    expect([missing.status, missing.body.error]).toEqual([403, 'challenge_failed']);
    expect(seen.length).toBe(before);
  });

  it(`a 64 MB chunked purchase is the Worker's 413 in each of ${BIG_RUNS} runs, never the dev proxy's 503`, async () => {
    const activityId = await openActivity();
    const answers: string[] = [];
    for (let i = 0; i < BIG_RUNS; i++) {
      const res = await sendChunked(`/api/activities/${activityId}/purchase?t=x`, BIG_BYTES);
      answers.push(`${res.status} ${res.status === 413 ? JSON.parse(res.text).error : res.text.slice(0, 60)}`);
    }
    expect(answers).toEqual(Array(BIG_RUNS).fill('413 payload_too_large'));
    expect(origin.calls(activityId).reserve).toBe(0);
  }, 90_000);
});

describe('npm run edge refuses half a bot check', () => {
  it('BOT_CHECK_URL without BOT_CHECK_SECRET: exit 2 with a message, before wrangler starts', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/edge-dev.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, BOT_CHECK_URL: 'http://127.0.0.1:9/siteverify' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('BOT_CHECK_URL is set but BOT_CHECK_SECRET is not');
  });

  it("the dev config declares the optional secret beside wrangler.toml's required ones, paths absolute", () => {
    const toml = readFileSync(`${ROOT}/wrangler.toml`, 'utf8');
    const dev = devConfigWith(toml, '/repo', ['BOT_CHECK_SECRET']);
    expect(dev).toContain('required = ["USER_TOKEN_SECRET", "TICKET_KEYS", "EDGE_ORIGIN_SECRET", "BOT_CHECK_SECRET"]');
    expect(dev).toContain('main = "/repo/edge/index.ts"');
    expect(dev).toContain('directory = "/repo/edge/public"');
    // Everything else as in wrangler.toml.
    const strip = (text: string) => text.replace(/^(main|directory|required) = .*$/gm, '');
    expect(strip(dev)).toBe(strip(toml));
  });
});
