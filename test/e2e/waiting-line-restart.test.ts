/**
 * The waiting line survives a restart of workerd. The real edge (workerd via
 * Miniflare, its Durable Objects' SQLite storage kept in a folder) in front of the stand-in origin;
 * the edge is stopped (workerd exits) and started again on the same folder and port.
 * - 200 buyers waiting, everyone polling as told; workerd down for 4 s: afterwards the same order,
 *   nobody lost (no 404 ever), positions only fall;
 * - a place acknowledged just before workerd stops is kept (WAITING_JOIN_WRITE = "sync", the default).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../support/processes.js';
import { openSnapshot, signedPut as signedPutTo } from '../../support/edge-calls.js';
import { startEdge, type RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { uniqueId } from '../helpers/ids.js';
import { startStandInOrigin, type StandInOrigin } from '../../support/stand-in-origin.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const POLL_MIN_MS = 1_000;

let origin: StandInOrigin;
let persistDir: string;
let port: number;
let edge: RunningEdge | undefined;
const url = () => `http://127.0.0.1:${port}`;

async function start(vars: Record<string, string> = {}): Promise<void> {
  edge = await startEdge({
    originUrl: origin.url,
    port,
    persistDir,
    vars: { WAITING_POLL_MIN_MS: String(POLL_MIN_MS), ...vars },
  });
}

async function stop(): Promise<void> {
  await edge?.stop();
  edge = undefined;
}

beforeAll(async () => {
  origin = await startStandInOrigin({ secret: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET });
  port = await freePort();
}, 30_000);

afterAll(async () => {
  await stop();
  await origin?.stop();
});

async function signedPut(path: string, body: unknown): Promise<void> {
  const res = await signedPutTo(url(), TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, path, JSON.stringify(body));
  expect(res.status).toBe(200);
}

/** A queue sale with one admission shard at `rate`/s, known to the stand-in origin and pushed to the edge. */
async function queueSale(rate: number): Promise<string> {
  const activityId = uniqueId();
  const snapshot = openSnapshot(activityId, {
    skuId: '77',
    title: `restart ${activityId}`,
    admissionRatePerSec: rate,
    admissionShards: 1,
    overflow: 'queue',
  });
  origin.setActivity(activityId, { snapshot });
  await signedPut(`/internal/activities/${activityId}`, snapshot);
  await signedPut('/internal/activities', { activityIds: [activityId] });
  return activityId;
}

interface Buyer {
  userId: string;
  auth: string;
  purchaseUrl: string;
  key: string;
  pollUrl?: string;
  seq?: number;
  pollAfterMs?: number;
  /** Every position this buyer was told, in order (polls and repeat clicks alike). */
  positions: number[];
  /** Every answer that was not `waiting`, a 429 or a connection error (the end of the wait, or a failure). */
  ends: string[];
  done: boolean;
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * fetch and read the JSON body, retried while the edge is down (connection refused or reset, or an
 * answer cut off when workerd exits between its headers and its body), as a browser retries a
 * failed poll. Every call here is safe to repeat: a poll, or a click with its Idempotency-Key.
 */
async function send(path: string, init: RequestInit): Promise<Answer> {
  const giveUpAt = Date.now() + 30_000; // far longer than the 4 s outage: a lasting failure fails the test
  for (;;) {
    try {
      const res = await fetch(url() + path, init);
      return { status: res.status, headers: res.headers, body: await res.json() };
    } catch (err) {
      if (Date.now() > giveUpAt) throw err;
      await sleep(250);
    }
  }
}

async function buyer(activityId: string, userId: string): Promise<Buyer> {
  const auth = `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
  const res = await send(`/api/activities/${activityId}/tickets`, { method: 'POST', headers: { authorization: auth } });
  expect(res.status).toBe(200);
  const { purchaseUrl } = res.body as { purchaseUrl: string };
  return { userId, auth, purchaseUrl, key: `restart-${userId}`, positions: [], ends: [], done: false };
}

/** A click (the first, or a repeat with the same Idempotency-Key): the place in line, or the result. */
async function click(b: Buyer): Promise<void> {
  const res = await send(b.purchaseUrl, {
    method: 'POST',
    headers: { authorization: b.auth, 'idempotency-key': b.key, 'content-type': 'application/json' },
    body: '{"quantity":1}',
  });
  record(b, res.status, res.body);
}

function record(b: Buyer, status: number, body: any): void {
  if (body.status === 'waiting') {
    b.pollUrl ??= body.pollUrl;
    expect(body.pollUrl).toBe(b.pollUrl);
    b.seq = Number(/-(\d+)$/.exec(body.pollUrl)![1]);
    b.positions.push(body.position);
    b.pollAfterMs = body.pollAfterMs;
  } else if (status !== 429) {
    b.ends.push(`${status} ${body.status ?? body.error} ${body.message ?? ''}`.trim());
    b.done = true;
  }
}

/** Polls as told (honouring 429's Retry-After) until the wait ends or `stopped()`. */
async function pollAsTold(b: Buyer, stopped: () => boolean): Promise<void> {
  while (!b.done && !stopped()) {
    const due = Date.now() + b.pollAfterMs!;
    while (Date.now() < due && !stopped()) await sleep(Math.min(200, due - Date.now()));
    if (stopped()) return;
    const res = await send(b.pollUrl!, { headers: { authorization: b.auth } });
    if (res.status === 429) {
      b.pollAfterMs = Number(res.headers.get('retry-after') ?? 1) * 1000;
      continue;
    }
    record(b, res.status, res.body);
  }
}

/** A repeat click of every waiting buyer, in parallel batches: each one's position at about the same time. */
async function readPlaces(
  buyers: Buyer[],
): Promise<{ positions: Map<string, number>; startedAt: number; endedAt: number }> {
  const startedAt = Date.now();
  const positions = new Map<string, number>();
  for (let i = 0; i < buyers.length; i += 50) {
    await Promise.all(
      buyers.slice(i, i + 50).map(async (b) => {
        const before = b.positions.length;
        await click(b);
        if (b.positions.length > before) positions.set(b.userId, b.positions.at(-1)!);
      }),
    );
  }
  return { positions, startedAt, endedAt: Date.now() };
}

it('200 buyers waiting, workerd down for 4 s: the same order afterwards, nobody lost, positions only fall', async () => {
  persistDir = mkdtempSync(join(tmpdir(), 'edge-do-'));
  try {
    await start();
    const rate = 2;
    const activityId = await queueSale(rate);
    const users = Array.from({ length: 202 }, (_, i) => String(8_800_000 + i));
    const buyers: Buyer[] = [];
    for (let i = 0; i < users.length; i += 25)
      buyers.push(...(await Promise.all(users.slice(i, i + 25).map((u) => buyer(activityId, u)))));
    // One by one, so the line order is the click order; each waiting buyer polls as told from then on.
    let stopped = false;
    const pollers: Promise<void>[] = [];
    for (const b of buyers) {
      await click(b);
      if (b.pollUrl !== undefined) pollers.push(pollAsTold(b, () => stopped));
    }
    const waiting = buyers.filter((b) => b.pollUrl !== undefined);
    expect(waiting.length).toBeGreaterThanOrEqual(200);
    expect(waiting.map((b) => b.seq)).toEqual(waiting.map((_, k) => k + 1));

    await sleep(2_000);
    const still = () => waiting.filter((b) => !b.done);
    const before = await readPlaces(still());

    // workerd exits (as in a crash or a deploy: nothing is flushed on the way out) and is down 4 s.
    const downAt = Date.now();
    await stop();
    await sleep(4_000);
    await start();
    const upAt = Date.now();
    const after = await readPlaces(still());
    await sleep(3_000);
    stopped = true;
    await Promise.all(pollers);

    // Nobody lost: every end of a wait is a reservation (the stand-in origin reserves every turn).
    const ends = waiting.flatMap((b) => b.ends.map((e) => `${b.userId}: ${e}`));
    expect(ends.filter((e) => !/: 20[02] queued$/.test(e))).toEqual([]);
    // Positions only fall, for every buyer, across the restart.
    for (const b of waiting) {
      const rises = b.positions.filter((p, i) => i > 0 && p > b.positions[i - 1]!);
      expect([b.userId, rises]).toEqual([b.userId, []]);
    }
    // The same order: everyone still waiting moved forward by the same number of places (the turns
    // given meanwhile), up to the turns that can accrue while one reading of the line is taken.
    const common = waiting.filter((b) => before.positions.has(b.userId) && after.positions.has(b.userId));
    expect(common.length).toBeGreaterThanOrEqual(150);
    const moved = common.map((b) => before.positions.get(b.userId)! - after.positions.get(b.userId)!);
    const readingMs = before.endedAt - before.startedAt + (after.endedAt - after.startedAt);
    const slack = Math.ceil((rate * readingMs) / 1000) + 1;
    // On failure: seq:position before>after for each buyer.
    const journal = common.map((b) => `${b.seq}:${before.positions.get(b.userId)}>${after.positions.get(b.userId)}`);
    expect(Math.max(...moved) - Math.min(...moved), journal.join(' ')).toBeLessThanOrEqual(slack);
    // … forward only, and by no more than the turns of the time the edge was up between the readings.
    const upMs = downAt - before.startedAt + (after.endedAt - upAt);
    expect(Math.min(...moved)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...moved)).toBeLessThanOrEqual(Math.ceil((rate * upMs) / 1000) + 1);
    // Positions by line order, after the restart: increasing with the sequence number.
    const bySeq = [...common].sort((a, b) => a.seq! - b.seq!).map((b) => after.positions.get(b.userId)!);
    for (let i = 1; i < bySeq.length; i++) expect(bySeq[i]! + slack).toBeGreaterThan(bySeq[i - 1]!);
  } finally {
    await stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
}, 180_000);

it('a place acknowledged just before workerd stops is kept (joins are written before their answer)', async () => {
  persistDir = mkdtempSync(join(tmpdir(), 'edge-do-'));
  try {
    await start();
    const activityId = await queueSale(1);
    const buyers = await Promise.all(Array.from({ length: 21 }, (_, i) => buyer(activityId, String(8_900_000 + i))));
    for (const b of buyers) await click(b);
    const waiting = buyers.filter((b) => b.pollUrl !== undefined);
    expect(waiting.length).toBeGreaterThanOrEqual(19);
    // At once — well within one flush interval (WAITING_LINE_FLUSH_MS = 200) of the last join.
    await stop();
    await start();
    await sleep(1_100); // the user gate's purchase token (1/s) for the repeat click
    for (const b of waiting) {
      const seen = b.positions.length;
      await click(b);
      expect([b.userId, b.ends]).toEqual([b.userId, []]);
      expect(b.positions.length).toBe(seen + 1);
    }
  } finally {
    await stop();
    rmSync(persistDir, { recursive: true, force: true });
  }
}, 120_000);
