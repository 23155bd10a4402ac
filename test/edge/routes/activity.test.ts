import { SELF, env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { signEdgeRequest, type ActivitySnapshot } from '../../../contract/index.js';
import { ACTIVITY_CACHE_TTL_MS, COLO_CACHE_TTL_MS } from '../../../edge/activity-cache.js';
import { TEST_EDGE_SECRETS } from '../../helpers/edge-test-secrets.js';
import {
  BASE,
  bearer,
  newActivityId,
  newUserId,
  openActivity,
  originCalls,
  push,
  setOrigin,
  sleep,
  snapshotOf,
  addToLiveList,
  ticket,
} from '../support.js';
import { activityObject } from '../../../edge/durable/names.js';

type Json = Record<string, unknown>;

describe('GET /api/activities/:id', () => {
  it('answers the public activity with serverTime and a short cache header', async () => {
    const activityId = await openActivity({ title: 'Phones', version: 3 });
    const res = await SELF.fetch(`${BASE}/api/activities/${activityId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=1');
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ activityId, skuId: '77', title: 'Phones', state: 'open', version: 3 });
    expect(Math.abs(Date.parse(body.serverTime as string) - Date.now())).toBeLessThan(2_000);
  });

  it('a listed activity the edge holds no snapshot of is fetched once from the origin, then served from the DO', async () => {
    const activityId = newActivityId();
    await setOrigin(activityId, { snapshot: snapshotOf(activityId, { state: 'paused' }) });
    await addToLiveList(activityId);
    const first = await SELF.fetch(`${BASE}/api/activities/${activityId}`);
    expect(first.status).toBe(200);
    expect(((await first.json()) as Json).state).toBe('paused');
    await sleep(450); // past the isolate cache TTL: the DO answers, not the origin
    expect((await SELF.fetch(`${BASE}/api/activities/${activityId}`)).status).toBe(200);
    expect((await originCalls(activityId)).activity).toBe(1);
  });

  it('unknown activity is 404 not_found; malformed id is 400', async () => {
    const res = await SELF.fetch(`${BASE}/api/activities/${newActivityId()}`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).error).toBe('not_found');
    const bad = await SELF.fetch(`${BASE}/api/activities/abc`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error).toBe('bad_request');
  });

  it('an admin change written to the ActivityDO is in force in the isolate within its cache TTL', async () => {
    const activityId = await openActivity();
    expect((await ticket(activityId, newUserId())).status).toBe(200);
    const stub = activityObject(env, activityId);
    await stub.upsert(snapshotOf(activityId, { state: 'paused', version: 2 })); // behind both caches' backs
    await sleep(ACTIVITY_CACHE_TTL_MS + COLO_CACHE_TTL_MS + 50); // < 1 s
    const res = await ticket(activityId, newUserId());
    expect(res.status).toBe(503);
    expect(((await res.json()) as Json).error).toBe('paused');
  });
});

describe('POST /api/activities/:id/tickets', () => {
  it('an open sale issues a purchase URL bound to the activity, expiring in 60 s', async () => {
    const activityId = await openActivity();
    const res = await ticket(activityId, newUserId());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { purchaseUrl: string; expiresAt: string };
    expect(body.purchaseUrl).toMatch(new RegExp(`^/api/activities/${activityId}/purchase\\?t=v1\\.`));
    const ttl = Date.parse(body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('is refused before the start (425), when ended (410), paused (503), sold out (409) or without a user (401)', async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    const past = new Date(Date.now() - 1_000).toISOString();
    const cases = [
      [{ startsAt: future }, 425, 'too_early'],
      [{ endsAt: past }, 410, 'ended'],
      [{ state: 'stopped' as const }, 410, 'ended'],
      [{ state: 'paused' as const }, 503, 'paused'],
      [{ soldOut: true }, 409, 'sold_out'],
    ] as const;
    for (const [over, status, code] of cases) {
      const activityId = await openActivity(over);
      const res = await ticket(activityId, newUserId());
      expect(res.status).toBe(status);
      expect(((await res.json()) as Json).error).toBe(code);
      expect((await originCalls(activityId)).total).toBe(0);
    }
    const activityId = await openActivity();
    const anon = await SELF.fetch(`${BASE}/api/activities/${activityId}/tickets`, { method: 'POST' });
    expect(anon.status).toBe(401);
  });
});

describe('PUT /internal/activities/:id', () => {
  it('refuses unsigned, wrongly signed and stale pushes with 401', async () => {
    const activityId = newActivityId();
    const snap = snapshotOf(activityId);
    const path = `/internal/activities/${activityId}`;
    const body = JSON.stringify(snap);
    const unsigned = await SELF.fetch(`${BASE}${path}`, { method: 'PUT', body });
    expect(unsigned.status).toBe(401);
    expect((await push(snap, 'wrong-secret-0000000000000000')).status).toBe(401);
    const stale = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'PUT',
      pathWithQuery: path,
      body,
      now: Date.now() - 10_000,
    });
    const res = await SELF.fetch(`${BASE}${path}`, { method: 'PUT', headers: stale, body });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error).toBe('unauthenticated');
  });

  it('refuses malformed snapshots and a snapshot for another id with 400', async () => {
    const activityId = newActivityId();
    const bad = snapshotOf(activityId, { admissionShards: 0 });
    expect((await push(bad)).status).toBe(400);
    const other = snapshotOf(newActivityId());
    const path = `/internal/activities/${activityId}`;
    const body = JSON.stringify(other);
    const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'PUT',
      pathWithQuery: path,
      body,
    });
    expect((await SELF.fetch(`${BASE}${path}`, { method: 'PUT', headers, body })).status).toBe(400);
  });

  it('a captured older push replayed after a pause changes nothing: the state served stays paused', async () => {
    const activityId = newActivityId();
    const path = `/internal/activities/${activityId}`;
    const signedPush = async (snapshot: ActivitySnapshot) => {
      const body = JSON.stringify(snapshot);
      const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
        method: 'PUT',
        pathWithQuery: path,
        body,
      });
      return { headers, body };
    };
    const send = async (p: { headers: Record<string, string>; body: string }) => {
      const res = await SELF.fetch(`${BASE}${path}`, { method: 'PUT', headers: p.headers, body: p.body });
      expect(res.status).toBe(200);
      return (await res.json()) as Json;
    };
    const state = async () => ((await (await SELF.fetch(`${BASE}/api/activities/${activityId}`)).json()) as Json).state;
    const open = await signedPush(snapshotOf(activityId, { version: 1 }));
    expect(await send(open)).toMatchObject({ state: 'open', applied: true });
    expect(await state()).toBe('open');
    expect(await send(await signedPush(snapshotOf(activityId, { version: 2, state: 'paused' })))).toMatchObject({
      state: 'paused',
      applied: true,
    });
    // The open push again, byte for byte with its own (still valid) signature: ignored whole.
    expect(await send(open)).toEqual({ activityId, version: 2, state: 'paused', soldOut: false, applied: false });
    expect(await state()).toBe('paused');
    expect((await ticket(activityId, newUserId())).status).toBe(503);
    // Past both caches' TTLs, read from the ActivityDO: still paused.
    await sleep(ACTIVITY_CACHE_TTL_MS + COLO_CACHE_TTL_MS + 50);
    expect(await state()).toBe('paused');
  });

  it('of one version, a push signed earlier than the last one taken changes nothing (sold out stays sold out)', async () => {
    const activityId = newActivityId();
    const path = `/internal/activities/${activityId}`;
    const at = Date.now();
    const send = async (snapshot: ActivitySnapshot, timestamp: number) => {
      const body = JSON.stringify(snapshot);
      const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
        method: 'PUT',
        pathWithQuery: path,
        body,
        now: timestamp,
      });
      return (await (await SELF.fetch(`${BASE}${path}`, { method: 'PUT', headers, body })).json()) as Json;
    };
    expect(await send(snapshotOf(activityId), at - 20)).toMatchObject({ applied: true, soldOut: false });
    expect(await send(snapshotOf(activityId, { soldOut: true }), at - 10)).toMatchObject({
      applied: true,
      soldOut: true,
    });
    // The first push replayed (same version, signed before the sold-out one): the flag stays.
    expect(await send(snapshotOf(activityId), at - 20)).toMatchObject({ applied: false, soldOut: true });
    const pub = (await (await SELF.fetch(`${BASE}/api/activities/${activityId}`)).json()) as Json;
    expect(pub.state).toBe('sold_out');
    // A later push of the same version is taken: a refill.
    expect(await send(snapshotOf(activityId), at)).toMatchObject({ applied: true, soldOut: false });
  });

  it('a push of a lower config version changes no field, its state and sold-out flag included', async () => {
    const activityId = newActivityId();
    expect((await push(snapshotOf(activityId, { title: 'v5', version: 5 }))).status).toBe(200);
    const res = await push(snapshotOf(activityId, { title: 'v4', version: 4, state: 'paused', soldOut: true }));
    expect(await res.json()).toEqual({ activityId, version: 5, state: 'open', soldOut: false, applied: false });
    const pub = (await (await SELF.fetch(`${BASE}/api/activities/${activityId}`)).json()) as Json;
    expect(pub).toMatchObject({ title: 'v5', version: 5, state: 'open' });
  });
});

describe('reservations', () => {
  it('polls are rate-limited per user and reservation: a second poll within a second is 429 without an origin call', async () => {
    const activityId = await openActivity();
    // Polls are 1/s per user (a constant): the times are read, not assumed. A round in which the
    // machine stalled past the second proves nothing about the refusal, and another user plays it.
    let conclusive = false;
    for (let round = 0; round < 3 && !conclusive; round++) {
      const user = newUserId();
      const t = (await (await ticket(activityId, user)).json()) as { purchaseUrl: string };
      const bought = await SELF.fetch(`${BASE}${t.purchaseUrl}`, {
        method: 'POST',
        headers: { authorization: await bearer(user), 'idempotency-key': 'poll-1' },
        body: '{"quantity":1}',
      });
      const { pollUrl } = (await bought.json()) as { pollUrl: string };
      const auth = { authorization: await bearer(user) };
      const firstSent = Date.now();
      expect((await SELF.fetch(`${BASE}${pollUrl}`, { headers: auth })).status).toBe(200);
      const before = await originCalls(activityId);
      const again = await SELF.fetch(`${BASE}${pollUrl}`, { headers: auth });
      if (Date.now() >= firstSent + 1_000) continue; // the refusal is not certain this late
      expect(again.status).toBe(429);
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await originCalls(activityId)).toEqual(before);
      await sleep(1_050);
      expect((await SELF.fetch(`${BASE}${pollUrl}`, { headers: auth })).status).toBe(200);
      conclusive = true;
    }
    expect(conclusive, 'three rounds in a row stalled past the 1 s poll interval').toBe(true);
  });

  it('the owner polls a reservation; another user gets 403; unknown is 404; no token is 401', async () => {
    const activityId = await openActivity();
    const user = newUserId();
    const t = (await (await ticket(activityId, user)).json()) as { purchaseUrl: string };
    const bought = await SELF.fetch(`${BASE}${t.purchaseUrl}`, {
      method: 'POST',
      headers: { authorization: await bearer(user), 'idempotency-key': 'r-1' },
      body: '{"quantity":1}',
    });
    const { pollUrl, reservationId } = (await bought.json()) as { pollUrl: string; reservationId: string };
    const own = await SELF.fetch(`${BASE}${pollUrl}`, { headers: { authorization: await bearer(user) } });
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual({ reservationId, status: 'queued' });
    const stranger = await SELF.fetch(`${BASE}${pollUrl}`, { headers: { authorization: await bearer(newUserId()) } });
    expect(stranger.status).toBe(403);
    expect(((await stranger.json()) as Json).error).toBe('forbidden');
    await sleep(1_100); // polls are limited per user (1/s), whichever reservation
    const unknown = await SELF.fetch(`${BASE}/api/reservations/${activityId}-${'0'.repeat(32)}`, {
      headers: { authorization: await bearer(user) },
    });
    expect(unknown.status).toBe(404);
    expect(
      (await SELF.fetch(`${BASE}/api/reservations/garbage`, { headers: { authorization: await bearer(user) } })).status,
    ).toBe(404);
    expect((await SELF.fetch(`${BASE}${pollUrl}`)).status).toBe(401);

    const mine = await SELF.fetch(`${BASE}/api/activities/${activityId}/reservation`, {
      headers: { authorization: await bearer(user) },
    });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as Json).reservationId).toBe(reservationId);
  });

  it("the caller's own reservation lookup: 404 when none, 401 without a token, 429 when hammered", async () => {
    // One lookup per user per minute: the second comes well within it, however busy the machine.
    const activityId = await openActivity({ userRatePerSec: 1 / 60 });
    const user = newUserId();
    const url = `${BASE}/api/activities/${activityId}/reservation`;
    const none = await SELF.fetch(url, { headers: { authorization: await bearer(user) } });
    expect(none.status).toBe(404);
    expect(((await none.json()) as Json).error).toBe('not_found');
    const again = await SELF.fetch(url, { headers: { authorization: await bearer(user) } });
    expect(again.status).toBe(429);
    expect(again.headers.get('retry-after')).toBe('60');
    expect((await SELF.fetch(url)).status).toBe(401);
    expect((await originCalls(activityId)).reservation).toBe(1);
  });
});

describe('everything else', () => {
  it('unknown routes are 404 not_found JSON', async () => {
    const res = await SELF.fetch(`${BASE}/api/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found', traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
  });

  it('the sale page is served at / and /a/:activityId; versioned assets are cached long', async () => {
    const root = await SELF.fetch(`${BASE}/`);
    expect(root.status).toBe(200);
    const html = await root.text();
    for (const id of ['countdown', 'buy', 'status', 'order-no']) expect(html).toContain(`id="${id}"`);
    const page = await SELF.fetch(`${BASE}/a/123`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toBe(html);
    const script = /src="(\/assets\/sale\.v\d+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await SELF.fetch(`${BASE}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('max-age=31536000');
    await js.arrayBuffer();
  });
  it('the favicon browsers ask for on every page load is served, not a 404', async () => {
    const res = await SELF.fetch(`${BASE}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('icon');
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual([0, 0, 1, 0]); // ICO header: reserved 0, type 1 (icon)
  });
});
