/**
 * `maxPerUser` is a live switch (docs/design.md §10): PATCH /admin/activities/:id changes the per-user
 * limit and the very next click through the real edge and origin obeys it — lowered, a quantity
 * above it is 409 limit_exceeded; raised, it fits — counted in seckill_admin_changes_total and
 * refused with a contract code when out of range, changing nothing.
 */
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scalar } from '../helpers/db.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

async function buy(activityId: string, userId: string, quantity: number) {
  const auth = `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
  const ticket = await fetch(`${stack.edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: auth },
  });
  expect(ticket.status).toBe(200);
  const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
  const res = await fetch(`${stack.edge.url}${purchaseUrl}`, {
    method: 'POST',
    headers: { authorization: auth, 'idempotency-key': `m-${userId}`, 'content-type': 'application/json' },
    body: JSON.stringify({ quantity }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const patch = async (activityId: string, body: unknown) => {
  const res = await stack.origin.admin('PATCH', `/admin/activities/${activityId}`, body);
  return { status: res.status, body: (await res.json()) as any };
};

it('lowering and raising maxPerUser takes effect for the next click', async () => {
  const { activityId } = await stack.origin.sale({ stock: 100, maxPerUser: 3 });
  expect((await buy(activityId, '8300001', 3)).status).toBe(202);

  const lowered = await patch(activityId, { maxPerUser: 1 });
  expect(lowered.status).toBe(200);
  expect(lowered.body.config.maxPerUser).toBe(1);
  // The very next click: above the new limit is refused, within it is granted.
  const above = await buy(activityId, '8300002', 2);
  expect(above.status).toBe(409);
  expect(above.body.error).toBe('limit_exceeded');
  expect((await buy(activityId, '8300003', 1)).status).toBe(202);
  // The public body (the page's "at most N per person") says the new rule.
  const pub = (await (await fetch(`${stack.edge.url}/api/activities/${activityId}`)).json()) as any;
  expect(pub.maxPerUser).toBe(1);

  expect((await patch(activityId, { maxPerUser: 2 })).status).toBe(200);
  expect((await buy(activityId, '8300004', 2)).status).toBe(202);

  expect(
    await scalar(stack.origin.db.pool, 'SELECT max_per_user FROM seckill_activity WHERE id = ?', [activityId]),
  ).toBe(2);
  const metrics = await (await fetch(`${stack.origin.url}/metrics`)).text();
  expect(metrics).toMatch(/seckill_admin_changes_total\{setting="maxPerUser"\} 2/);
});

it('an out-of-range maxPerUser is 400 bad_request and changes nothing', async () => {
  const { activityId } = await stack.origin.sale({ stock: 10, maxPerUser: 2 });
  const version = () => scalar(stack.origin.db.pool, 'SELECT version FROM seckill_activity WHERE id = ?', [activityId]);
  const before = await version();
  for (const bad of [0, 101, 1.5, '2']) {
    const res = await patch(activityId, { maxPerUser: bad });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  }
  expect(await version()).toBe(before);
  expect((await buy(activityId, '8300011', 2)).status).toBe(202);
});
