/**
 * Sale operations inside workerd (docs/design.md §10): the deny list in the user-gate shards (stored, so an
 * evicted shard keeps it), eligibility by a JWT claim, and the stock hint derived from the pushed
 * units. The through-the-origin versions are in test/e2e/sale-operations.test.ts.
 */
import { SELF, env, runInDurableObject } from 'cloudflare:test';
import { sign } from 'hono/jwt';
import { describe, expect, it } from 'vitest';
import { signEdgeRequest } from '../../../contract/index.js';
import { shardOf } from '../../../edge/gates.js';
import { TEST_EDGE_SECRETS } from '../../helpers/edge-test-secrets.js';
import {
  BASE,
  newActivityId,
  newUserId,
  openActivity,
  originCalls,
  push,
  purchase,
  purchaseUrlFor,
  snapshotOf,
  ticket,
} from '../support.js';
import { userGate } from '../../../edge/durable/names.js';

async function pushDeny(
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- names the usual body; `unknown` lets a test send a malformed one
  users: { userId: string; denied: boolean; revision: number }[] | unknown,
  secret: string = TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET,
) {
  const path = '/internal/deny';
  const body = JSON.stringify(Array.isArray(users) ? { users } : users);
  const headers = await signEdgeRequest(secret, { method: 'PUT', pathWithQuery: path, body });
  return SELF.fetch(`${BASE}${path}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body,
  });
}

const gateOf = (userId: string) => userGate(env, shardOf(userId, 16));

describe('deny list', () => {
  it('403 denied for tickets and purchases without an origin call; stored in the shard; lifted', async () => {
    const activityId = await openActivity({ userRatePerSec: 100 }); // the rate limit is not what is tested
    const userId = newUserId();
    const purchaseUrl = await purchaseUrlFor(activityId, userId);
    expect(await (await pushDeny([{ userId, denied: true, revision: 1 }])).json()).toEqual({ applied: 1, ignored: 0 });

    const before = (await originCalls(activityId)).total;
    const t = await ticket(activityId, userId);
    expect([t.status, ((await t.json()) as any).error]).toEqual([403, 'denied']);
    const p = await purchase(purchaseUrl, userId);
    expect([p.status, ((await p.json()) as any).error]).toEqual([403, 'denied']);
    expect((await originCalls(activityId)).total).toBe(before);
    // Stored, not only in memory: a restarted (evicted) shard loads it again.
    // The revision of the origin's row, signed: + denied.
    expect(await runInDurableObject(gateOf(userId), (_o, state) => state.storage.get(`deny:${userId}`))).toBe(1);

    await pushDeny([{ userId, denied: false, revision: 2 }]);
    // Lifted: kept as −2, so an older "denied" cannot come back.
    expect(await runInDurableObject(gateOf(userId), (_o, state) => state.storage.get(`deny:${userId}`))).toBe(-2);
    expect((await ticket(activityId, userId)).status).toBe(200);
  });

  it('a replayed older push is ignored: revision 2 (denied), then revision 1 (allowed) → still denied', async () => {
    const activityId = await openActivity({ userRatePerSec: 100 });
    const userId = newUserId();
    expect(await (await pushDeny([{ userId, denied: true, revision: 2 }])).json()).toEqual({ applied: 1, ignored: 0 });
    // The capture of an earlier lift, replayed (validly signed, within the signature window).
    expect(await (await pushDeny([{ userId, denied: false, revision: 1 }])).json()).toEqual({ applied: 0, ignored: 1 });
    const t = await ticket(activityId, userId);
    expect([t.status, ((await t.json()) as any).error]).toEqual([403, 'denied']);
    // The same revision again changes nothing either; a newer one does.
    expect(await (await pushDeny([{ userId, denied: false, revision: 2 }])).json()).toEqual({ applied: 0, ignored: 1 });
    expect((await ticket(activityId, userId)).status).toBe(403);
    expect(await (await pushDeny([{ userId, denied: false, revision: 3 }])).json()).toEqual({ applied: 1, ignored: 0 });
    expect((await ticket(activityId, userId)).status).toBe(200);
    // And the older "denied" cannot come back after the lift.
    expect(await (await pushDeny([{ userId, denied: true, revision: 2 }])).json()).toEqual({ applied: 0, ignored: 1 });
    expect((await ticket(activityId, userId)).status).toBe(200);
  });

  it('within one push the newest entry of a user wins, whatever the order', async () => {
    const activityId = await openActivity({ userRatePerSec: 100 });
    const userId = newUserId();
    const res = await pushDeny([
      { userId, denied: true, revision: 5 },
      { userId, denied: false, revision: 4 },
    ]);
    expect(await res.json()).toEqual({ applied: 1, ignored: 1 });
    expect((await ticket(activityId, userId)).status).toBe(403);
  });

  it('refuses unsigned or malformed pushes and changes nothing', async () => {
    const userId = newUserId();
    expect((await pushDeny([{ userId, denied: true, revision: 1 }], 'wrong-secret-0123456789')).status).toBe(401);
    for (const bad of [
      { users: [{ userId: 'abc', denied: true, revision: 1 }] },
      { users: [{ userId, denied: 'yes', revision: 1 }] },
      { users: [{ userId, denied: true }] },
      { users: [{ userId, denied: true, revision: 0 }] },
      { users: [{ userId, denied: true, revision: 1.5 }] },
      { users: Array.from({ length: 1001 }, (_, i) => ({ userId: String(i + 1), denied: true, revision: 1 })) },
      { other: 1 },
    ]) {
      const res = await pushDeny(bad);
      expect([res.status, ((await res.json()) as any).error]).toEqual([400, 'bad_request']);
    }
    const activityId = await openActivity();
    expect((await ticket(activityId, userId)).status).toBe(200);
  });
});

describe('eligibility', () => {
  const bearerWith = async (userId: string, claims: Record<string, unknown>) =>
    `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600, ...claims }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
  const ticketWith = async (activityId: string, userId: string, claims: Record<string, unknown>) =>
    SELF.fetch(`${BASE}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization: await bearerWith(userId, claims) },
    });

  it('members-only: the claim must name one of the values (string or array); others 403 not_eligible', async () => {
    const activityId = await openActivity({ eligibility: { claim: 'tier', values: ['gold'] } });
    const cases: [Record<string, unknown>, number][] = [
      [{}, 403],
      [{ tier: 'silver' }, 403],
      [{ tier: 5 }, 403],
      [{ tier: ['silver'] }, 403],
      [{ tier: 'gold' }, 200],
      [{ tier: ['silver', 'gold'] }, 200],
    ];
    for (const [claims, status] of cases) {
      const res = await ticketWith(activityId, newUserId(), claims);
      const body = (await res.json()) as any;
      expect([JSON.stringify(claims), res.status, body.error]).toEqual([
        JSON.stringify(claims),
        status,
        status === 403 ? 'not_eligible' : undefined,
      ]);
    }
  });
});

describe('stockHint', () => {
  it('is derived from the units the origin pushed, sold_out with the public state, absent without figures', async () => {
    const hint = async (units?: { left: number; onSale: number }, soldOut = false) => {
      const activityId = newActivityId();
      expect((await push({ ...snapshotOf(activityId, { soldOut }), ...(units ? { units } : {}) })).status).toBe(200);
      return ((await (await SELF.fetch(`${BASE}/api/activities/${activityId}`)).json()) as any).stockHint;
    };
    expect(await hint({ left: 51, onSale: 100 })).toBe('plenty');
    expect(await hint({ left: 50, onSale: 100 })).toBe('limited');
    expect(await hint({ left: 11, onSale: 100 })).toBe('limited');
    expect(await hint({ left: 10, onSale: 100 })).toBe('few');
    expect(await hint({ left: 0, onSale: 100 })).toBe('sold_out');
    expect(await hint({ left: 30, onSale: 100 }, true)).toBe('sold_out'); // early sold-out threshold
    expect(await hint()).toBeUndefined();
    // Before the start (or paused, ended) there is no hint to act on.
    const upcoming = newActivityId();
    const future = new Date(Date.now() + 60_000).toISOString();
    await push({ ...snapshotOf(upcoming, { startsAt: future }), units: { left: 100, onSale: 100 } });
    expect(((await (await SELF.fetch(`${BASE}/api/activities/${upcoming}`)).json()) as any).stockHint).toBeUndefined();
  });

  it('a push of an older config version changes nothing, its units included', async () => {
    const activityId = newActivityId();
    expect((await push({ ...snapshotOf(activityId, { version: 5 }), units: { left: 90, onSale: 100 } })).status).toBe(
      200,
    );
    const older = { ...snapshotOf(activityId, { version: 4, title: 'old' }), units: { left: 1, onSale: 100 } };
    expect((await push(older)).status).toBe(200);
    const body = (await (await SELF.fetch(`${BASE}/api/activities/${activityId}`)).json()) as any;
    expect([body.version, body.title, body.stockHint]).toEqual([5, `Test sale ${activityId}`, 'plenty']);
  });
});
