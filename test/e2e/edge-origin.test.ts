/**
 * End to end through the real edge (workerd via Miniflare) and the real origin (Redis, MariaDB):
 * 300 users, 50 units → exactly 50 orders, 250 sold_out, no 5xx; the origin going away → 503
 * `unavailable` within the edge's timeout, nothing hangs.
 */
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scalar } from '../helpers/db.js';
import { TEST_ORIGIN_TIMEOUT_MS, type RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { waitFor, type TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

let origin: TestOrigin;
let edge: RunningEdge;

beforeAll(async () => {
  // Exact counts, not the timeout, are what these tests are about: the test edge waits
  // TEST_ORIGIN_TIMEOUT_MS, so an origin slowed by a loaded test machine does not turn a decided
  // purchase into a 503.
  ({ edge, origin } = await startTestStack());
});
afterAll(async () => {
  await edge?.stop();
  await origin?.stop();
});

const bearer = async (userId: string) =>
  `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;

async function buy(
  activityId: string,
  userId: string,
  quantity = 1,
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const auth = await bearer(userId);
  const ticket = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: auth },
  });
  if (ticket.status !== 200) return { status: ticket.status, body: await ticket.json(), ms: Date.now() - started };
  const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
  const res = await fetch(`${edge.url}${purchaseUrl}`, {
    method: 'POST',
    headers: { authorization: auth, 'idempotency-key': `buy-${userId}`, 'content-type': 'application/json' },
    body: JSON.stringify({ quantity }),
  });
  return { status: res.status, body: await res.json(), ms: Date.now() - started };
}

async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
    }),
  );
}

it('300 users, 50 units: exactly 50 orders in MySQL, 250 sold_out, no 5xx', async () => {
  const { activityId } = await origin.sale({ stock: 50 });
  const users = Array.from({ length: 300 }, (_, i) => String(7_000_000 + i));
  const results: { userId: string; status: number; body: any }[] = [];
  await inParallel(users, 10, async (userId) => {
    results.push({ userId, ...(await buy(activityId, userId)) });
  });

  const tally: Record<string, number> = {};
  for (const r of results)
    tally[`${r.status} ${r.body.error ?? r.body.status}`] =
      (tally[`${r.status} ${r.body.error ?? r.body.status}`] ?? 0) + 1;
  expect(tally).toEqual({ '202 queued': 50, '409 sold_out': 250 });

  const db = origin.db.pool;
  await waitFor(
    () => scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
    (n) => n >= 50,
  );
  expect(await scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(50);
  expect(
    await scalar(db, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [activityId]),
  ).toBe(50);
  const winners = new Set(results.filter((r) => r.status === 202).map((r) => r.userId));
  const [orders] = (await db.query('SELECT user_id FROM seckill_order WHERE activity_id = ?', [activityId])) as any;
  expect(new Set(orders.map((o: any) => String(o.user_id)))).toEqual(winners);

  // A winner polls through the edge and sees the order.
  const winner = results.find((r) => r.status === 202)!;
  const poll = await fetch(`${edge.url}${winner.body.pollUrl}`, {
    headers: { authorization: await bearer(winner.userId) },
  });
  expect(poll.status).toBe(200);
  expect(await poll.json()).toMatchObject({ reservationId: winner.body.reservationId, status: 'ordered' });

  const rec = (await (await origin.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any;
  expect(rec.checks.filter((c: any) => !c.ok)).toEqual([]);
});

it('stock 3, maxPerUser 5: 5 units → 409 insufficient_stock, the sale stays open at the edge, 3 units → 202', async () => {
  const { activityId } = await origin.sale({ stock: 3, maxPerUser: 5 });
  const tooMany = await buy(activityId, '7200001', 5);
  expect({ status: tooMany.status, error: tooMany.body.error }).toEqual({ status: 409, error: 'insufficient_stock' });
  const publicState = async () =>
    ((await (await fetch(`${edge.url}/api/activities/${activityId}`)).json()) as { state: string }).state;
  expect(await publicState()).toBe('open');

  const fits = await buy(activityId, '7200002', 3);
  expect(fits.status).toBe(202);
  expect(fits.body.status).toBe('queued');
});

it('origin stopped mid-sale: purchases answer 503 unavailable within the timeout, never hang', async () => {
  const { activityId } = await origin.sale({ stock: 1000 });
  const before = await buy(activityId, '7100001');
  expect(before.status).toBe(202);
  // Tickets first (the edge checks them without the origin), then the origin goes away.
  const auth = await bearer('7100002');
  const ticket = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: auth },
  });
  const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
  await origin.origin.stop();
  const started = Date.now();
  const res = await fetch(`${edge.url}${purchaseUrl}`, {
    method: 'POST',
    headers: { authorization: auth, 'idempotency-key': 'after-stop', 'content-type': 'application/json' },
    body: '{"quantity":1}',
  });
  const elapsed = Date.now() - started;
  expect(res.status).toBe(503);
  expect(((await res.json()) as any).error).toBe('unavailable');
  expect(elapsed).toBeLessThan(TEST_ORIGIN_TIMEOUT_MS); // a refused connect does not wait for the timeout
});
