/**
 * The deny list and eligibility on the waiting room's path, and the deny push's revision,
 * through the real edge (workerd via Miniflare) and the real origin.
 * - A queue sale, admission 1/s, one shard, members-only (tier gold); seven members click, then one
 *   of them is denied and the rule becomes platinum while they wait: the denied and the no longer
 *   eligible are refused at their turn, every other member gets a unit, and no unit is lost.
 * - The origin's deny pushes pass a recording proxy: a captured older push replayed after a newer
 *   one changes nothing at the edge; a push the edge never got is healed by the retry job.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activityKeys } from '../../origin/redis/keys.js';
import { scalar } from '../helpers/db.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor } from '../helpers/origin.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deny pushes the proxy saw (headers and body exactly as sent), and whether to drop the next ones. */
interface Captured {
  headers: IncomingHttpHeaders;
  body: string;
}
const denyPushes: Captured[] = [];
let dropDenyPushes = false;
let proxy: Server;
let stack: TestStack;

/** Between origin and edge: forwards everything, records (or drops) `PUT /internal/deny`. */
async function startProxy(target: () => string): Promise<string> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- never rejects: the one await is inside try/catch, which answers 502
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/internal/deny') {
        if (dropDenyPushes) return void res.writeHead(502).end('dropped by the test');
        denyPushes.push({ headers: req.headers, body });
      }
      try {
        const answer = await forward(target(), req.method!, req.url!, req.headers, body);
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.text);
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

async function forward(base: string, method: string, path: string, headers: IncomingHttpHeaders, body: string) {
  const pass: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) pass[k] = v;
  const res = await fetch(base + path, {
    method,
    headers: pass,
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  let edgeUrl = '';
  const proxyUrl = await startProxy(() => edgeUrl);
  stack = await startTestStack({ originEnv: { EDGE_URL: proxyUrl, DENY_PUSH_RETRY_MS: '300' } });
  edgeUrl = stack.edge.url;
}, 60_000);
const made: { activityId: string; skuId: string }[] = [];
afterAll(async () => {
  for (const a of made) {
    const keys = await stack.origin.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
    if (keys.length) await stack.origin.redis.del(...keys);
    await stack.origin.redis.hdel('sk:activities', a.activityId);
  }
  await stack?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
});

const bearer = async (userId: string, claims: Record<string, unknown> = {}) =>
  `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600, ...claims }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;

async function createSale(extra: Record<string, unknown>, stock: number) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  made.push({ activityId, skuId });
  const res = await stack.origin.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `rules ${activityId}`,
    stock,
    startsAt: new Date(Date.now() - 1000).toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    ...extra,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  expect((await stack.origin.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return { activityId, skuId };
}

async function ticket(activityId: string, userId: string, claims: Record<string, unknown> = {}) {
  const res = await fetch(`${stack.edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: await bearer(userId, claims) },
  });
  return { status: res.status, body: (await res.json()) as any };
}

interface Buyer {
  name: string;
  userId: string;
  claims: Record<string, unknown>;
  auth: string;
  purchaseUrl: string;
  first?: { status: number; body: any };
  final?: { status: number; body: any };
}

/** Polls as told until the answer is no longer `waiting`. */
async function waitInLine(b: Buyer): Promise<void> {
  let answer = b.first!;
  while (answer.body.status === 'waiting') {
    await sleep(answer.body.pollAfterMs);
    const res = await fetch(`${stack.edge.url}${b.first!.body.pollUrl}`, { headers: { authorization: b.auth } });
    answer = { status: res.status, body: await res.json() };
    if (process.env.DEBUG_RULES) console.log(b.name, Date.now(), answer.status, JSON.stringify(answer.body));
  }
  b.final = answer;
}

describe('the waiting room under a rule changed mid-line', () => {
  it('the denied and the no longer eligible are refused at their turn; everyone else gets a unit; no unit lost', async () => {
    const STOCK = 10;
    const { activityId, skuId } = await createSale(
      {
        overflow: 'queue',
        admissionRatePerSec: 1,
        admissionShards: 1,
        userRatePerSec: 100,
        eligibility: { claim: 'tier', values: ['gold'] },
      },
      STOCK,
    );
    const both = { tier: ['gold', 'platinum'] };
    const gold = { tier: 'gold' };
    // Line order = click order; at 1/s the 6th in line (D) has its turn ≥ 5 s after the first click,
    // and the rule changes well before that.
    const plan: [string, Record<string, unknown>][] = [
      ['A', both],
      ['B', both],
      ['C', both],
      ['G', both],
      ['H', both],
      ['D', both], // denied while waiting
      ['E', gold], // no longer eligible once the rule is platinum
      ['F', gold],
    ];
    const buyers: Buyer[] = [];
    for (const [name, claims] of plan) {
      const userId = uniqueId();
      const t = await ticket(activityId, userId, claims);
      expect(t.status).toBe(200);
      buyers.push({ name, userId, claims, auth: await bearer(userId, claims), purchaseUrl: t.body.purchaseUrl });
    }
    let firstClickAt = 0;
    for (const b of buyers) {
      firstClickAt ||= Date.now();
      const res = await fetch(`${stack.edge.url}${b.purchaseUrl}`, {
        method: 'POST',
        headers: { authorization: b.auth, 'idempotency-key': `k-${b.userId}`, 'content-type': 'application/json' },
        body: '{"quantity":1}',
      });
      b.first = { status: res.status, body: await res.json() };
    }
    const by = (name: string) => buyers.find((b) => b.name === name)!;
    if (process.env.DEBUG_RULES)
      for (const b of buyers) console.log(b.name, b.first!.status, JSON.stringify(b.first!.body));
    // The three to be refused are in line, not refused at their click.
    expect(['D', 'E', 'F'].map((n) => by(n).first!.body.status)).toEqual(['waiting', 'waiting', 'waiting']);

    const denied = await stack.origin.admin('PUT', `/admin/deny/${by('D').userId}`);
    expect(await denied.json()).toEqual({ userId: by('D').userId, denied: true, atEdge: true });
    const patched = await stack.origin.admin('PATCH', `/admin/activities/${activityId}`, {
      eligibility: { claim: 'tier', values: ['platinum'] },
    });
    expect(patched.status).toBe(200);
    // Both answered before D's turn could come (the rate alone puts it 5 s after the first click).
    expect(Date.now() - firstClickAt).toBeLessThan(5_000);

    await Promise.all(buyers.map((b) => waitInLine(b)));
    const results = Object.fromEntries(
      buyers.map((b) => [b.name, [b.final!.status, b.final!.body.error ?? b.final!.body.status]]),
    );
    const reserved = (r: unknown[]) => (r[0] === 200 || r[0] === 202) && r[1] === 'queued';
    expect(Object.keys(results).filter((n) => reserved(results[n]!))).toEqual(['A', 'B', 'C', 'G', 'H']);
    expect([results.D, results.E, results.F]).toEqual([
      [403, 'denied'],
      [403, 'not_eligible'],
      [403, 'not_eligible'],
    ]);

    // No unit lost: every unit is an order or still on sale, in MySQL and in Redis.
    const db = stack.origin.db.pool;
    const orders = await waitFor(
      () => scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 5,
      30_000,
    );
    const available = await scalar(db, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId]);
    expect(orders + available).toBe(STOCK);
    expect(Number(await stack.origin.redis.get(activityKeys(activityId, skuId).stock))).toBe(STOCK - 5);
    // The refused are the buyers whose orders are missing; the reserved hold theirs.
    const [owners] = (await db.query('SELECT user_id FROM seckill_order WHERE activity_id = ? ORDER BY id', [
      activityId,
    ])) as any;
    expect(new Set(owners.map((r: any) => String(r.user_id)))).toEqual(
      new Set(['A', 'B', 'C', 'G', 'H'].map((n) => by(n).userId)),
    );
  });
});

describe('deny pushes carry the row revision', () => {
  it('a captured older push replayed after a newer one changes nothing: the user stays denied', async () => {
    const { activityId } = await createSale({}, 10);
    const userId = uniqueId();
    // The lift is the row's first change (revision 1); the deny is revision 2.
    expect((await stack.origin.admin('DELETE', `/admin/deny/${userId}`)).status).toBe(200);
    const lift = denyPushes.at(-1)!;
    expect((await stack.origin.admin('PUT', `/admin/deny/${userId}`)).status).toBe(200);
    expect(denyPushes.at(-1)).not.toBe(lift);

    // The replay: the lift's push, byte for byte, with its own (still fresh) signature.
    const replay = await forward(stack.edge.url, 'PUT', '/internal/deny', lift.headers, lift.body);
    const t = await ticket(activityId, userId);
    expect([t.status, t.body.error]).toEqual([403, 'denied']);
    expect(replay).toEqual({ status: 200, text: JSON.stringify({ applied: 0, ignored: 1 }) });
    // What was pushed: each change with its row's revision.
    expect(JSON.parse(lift.body)).toEqual({ users: [{ userId, denied: false, revision: 1 }] });
    expect(JSON.parse(denyPushes.at(-1)!.body)).toEqual({ users: [{ userId, denied: true, revision: 2 }] });
    const [[row]] = (await stack.origin.db.pool.query(
      'SELECT denied, revision, pushed_revision FROM seckill_deny_list WHERE user_id = ?',
      [userId],
    )) as any;
    expect([row.denied, row.revision, row.pushed_revision].map(Number)).toEqual([1, 2, 2]);
  });

  it('a push the edge never got is healed by the retry job (DENY_PUSH_RETRY_MS)', async () => {
    const { activityId } = await createSale({ userRatePerSec: 100 }, 10);
    const userId = uniqueId();
    expect((await stack.origin.admin('DELETE', `/admin/deny/${userId}`)).status).toBe(200); // revision 1 at the edge
    dropDenyPushes = true;
    let answer: any;
    try {
      answer = await (await stack.origin.admin('PUT', `/admin/deny/${userId}`)).json();
      // In force at the origin at once; the edge still says allowed.
      expect(answer).toEqual({ userId, denied: true, atEdge: false });
      const t = await ticket(activityId, userId);
      expect(t.status).toBe(200);
      // Through the edge: its gate still allows, the origin refuses, the refusal passes through.
      const purchase = await fetch(`${stack.edge.url}${t.body.purchaseUrl}`, {
        method: 'POST',
        headers: { authorization: await bearer(userId), 'idempotency-key': `k-${userId}` },
        body: '{"quantity":1}',
      });
      expect([purchase.status, ((await purchase.json()) as any).error]).toEqual([403, 'denied']);
    } finally {
      dropDenyPushes = false;
    }
    const healed = await waitFor(
      async () => (await ticket(activityId, userId)).status,
      (s) => s === 403,
      10_000,
      100,
    );
    expect(healed).toBe(403);
    await waitFor(
      () => scalar(stack.origin.db.pool, 'SELECT pushed_revision FROM seckill_deny_list WHERE user_id = ?', [userId]),
      (n) => n === 2,
      5_000,
    );
  });
});
