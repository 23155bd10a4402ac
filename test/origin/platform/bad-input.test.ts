/**
 * Bad input on every origin endpoint → a 4xx with a contract code and a readable message; never a
 * 5xx; nothing written (stock, holders, Stream, orders and activities unchanged).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../../contract/errors.js';
import { signEdgeRequest } from '../../../contract/signing.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { scalar } from '../../helpers/db.js';
import { startTestOrigin, TEST_SECRETS, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
let activityId: string;
let skuId: string;
const good = () => ({ activityId, userId: '42', quantity: 1, requestId: 'req-42' });

beforeAll(async () => {
  t = await startTestOrigin();
  ({ activityId, skuId } = await t.sale({ stock: 5, maxPerUser: 2 }));
});
afterAll(async () => {
  await t.stop();
});

async function expectContractError(res: Response, status: number, code: string) {
  const body = (await res.json()) as any;
  expect({ status: res.status, error: body.error }).toEqual({ status, error: code });
  expect(ERROR_STATUS[body.error as keyof typeof ERROR_STATUS]).toBe(status);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(3);
  expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
}

async function state() {
  const keys = activityKeys(activityId, skuId);
  return {
    stock: await t.redis.get(keys.stock),
    holders: await t.redis.hlen(keys.holders),
    events: await t.redis.xlen(keys.events),
    orders: await scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_order'),
    activities: await scalar(t.db.pool, 'SELECT COUNT(*) FROM seckill_activity'),
    available: await scalar(t.db.pool, 'SELECT SUM(available) FROM seckill_stock'),
  };
}

describe('POST /internal/reserve', () => {
  const invalidBodies: [string, unknown][] = [
    ['missing activityId', { userId: '42', quantity: 1, requestId: 'r' }],
    ['missing userId', { activityId: '1', quantity: 1, requestId: 'r' }],
    ['missing quantity', { activityId: '1', userId: '42', requestId: 'r' }],
    ['missing requestId', { activityId: '1', userId: '42', quantity: 1 }],
    ['activityId 0', { activityId: '0', userId: '42', quantity: 1, requestId: 'r' }],
    ['activityId negative', { activityId: '-1', userId: '42', quantity: 1, requestId: 'r' }],
    ['activityId not decimal', { activityId: 'abc', userId: '42', quantity: 1, requestId: 'r' }],
    ['activityId as number', { activityId: 1, userId: '42', quantity: 1, requestId: 'r' }],
    ['userId above 2^64-1', { activityId: '1', userId: '18446744073709551616', quantity: 1, requestId: 'r' }],
    ['userId with leading zero', { activityId: '1', userId: '042', quantity: 1, requestId: 'r' }],
    ['quantity 0', { activityId: '1', userId: '42', quantity: 0, requestId: 'r' }],
    ['quantity negative', { activityId: '1', userId: '42', quantity: -1, requestId: 'r' }],
    ['quantity fractional', { activityId: '1', userId: '42', quantity: 1.5, requestId: 'r' }],
    ['quantity as string', { activityId: '1', userId: '42', quantity: '1', requestId: 'r' }],
    ['quantity huge', { activityId: '1', userId: '42', quantity: 1e20, requestId: 'r' }],
    ['quantity above the hard maximum', { activityId: '1', userId: '42', quantity: 101, requestId: 'r' }],
    ['requestId too long', { activityId: '1', userId: '42', quantity: 1, requestId: 'x'.repeat(65) }],
    ['requestId with spaces', { activityId: '1', userId: '42', quantity: 1, requestId: 'a b' }],
    ['traceId malformed', { activityId: '1', userId: '42', quantity: 1, requestId: 'r', traceId: 'xyz' }],
    ['array body', [1, 2]],
    ['null body', null],
  ];
  for (const [name, body] of invalidBodies) {
    it(`400 bad_request: ${name}`, async () => {
      const before = await state();
      await expectContractError(await t.internal('POST', '/internal/reserve', body), 400, 'bad_request');
      expect(await state()).toEqual(before);
    });
  }

  it('400 bad_request: non-JSON body', async () => {
    await expectContractError(await t.internal('POST', '/internal/reserve', '{"activityId": '), 400, 'bad_request');
  });

  it('413 payload_too_large: body larger than the cap (body-limit.test.ts covers every route)', async () => {
    await expectContractError(
      await t.internal('POST', '/internal/reserve', { ...good(), pad: 'x'.repeat(20_000) }),
      413,
      'payload_too_large',
    );
  });

  it('409 limit_exceeded: quantity above the activity limit, nothing reserved', async () => {
    const before = await state();
    await expectContractError(
      await t.internal('POST', '/internal/reserve', { ...good(), quantity: 3 }),
      409,
      'limit_exceeded',
    );
    expect(await state()).toEqual(before);
  });

  it('404 not_found: unknown activity', async () => {
    await expectContractError(
      await t.internal('POST', '/internal/reserve', { ...good(), activityId: '987654321987' }),
      404,
      'not_found',
    );
  });

  it('401 unauthenticated: unsigned', async () => {
    const res = await fetch(`${t.url}/internal/reserve`, { method: 'POST', body: JSON.stringify(good()) });
    await expectContractError(res, 401, 'unauthenticated');
  });

  it('401 unauthenticated: body altered after signing', async () => {
    const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'POST',
      pathWithQuery: '/internal/reserve',
      body: JSON.stringify(good()),
    });
    const res = await fetch(`${t.url}/internal/reserve`, {
      method: 'POST',
      headers: signed,
      body: JSON.stringify({ ...good(), quantity: 2 }),
    });
    await expectContractError(res, 401, 'unauthenticated');
  });

  it('401 unauthenticated: signed for another path', async () => {
    const body = JSON.stringify(good());
    const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, {
      method: 'POST',
      pathWithQuery: '/internal/other',
      body,
    });
    await expectContractError(
      await fetch(`${t.url}/internal/reserve`, { method: 'POST', headers: signed, body }),
      401,
      'unauthenticated',
    );
  });

  it('401 unauthenticated: stale (6 s old) and future (6 s ahead) signatures', async () => {
    const body = JSON.stringify(good());
    for (const skew of [-6_000, 6_000]) {
      const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, {
        method: 'POST',
        pathWithQuery: '/internal/reserve',
        body,
        now: Date.now() + skew,
      });
      await expectContractError(
        await fetch(`${t.url}/internal/reserve`, { method: 'POST', headers: signed, body }),
        401,
        'unauthenticated',
      );
    }
  });

  it('401 unauthenticated: signed with another secret', async () => {
    const body = JSON.stringify(good());
    const signed = await signEdgeRequest('some-other-secret-0123456789', {
      method: 'POST',
      pathWithQuery: '/internal/reserve',
      body,
    });
    await expectContractError(
      await fetch(`${t.url}/internal/reserve`, { method: 'POST', headers: signed, body }),
      401,
      'unauthenticated',
    );
  });

  it('401 unauthenticated: malformed signature header', async () => {
    const res = await fetch(`${t.url}/internal/reserve`, {
      method: 'POST',
      headers: { 'x-edge-timestamp': String(Date.now()), 'x-edge-signature': 'v1=zz' },
      body: JSON.stringify(good()),
    });
    await expectContractError(res, 401, 'unauthenticated');
  });

  it('nothing above was written: stock, holders, Stream untouched', async () => {
    const s = await state();
    expect(s).toMatchObject({ stock: '5', holders: 0, events: 0, orders: 0 });
  });
});

describe('GET /internal/reservations/:id and /internal/activities/:id/reservation', () => {
  it('400 for a bad userId, 404 for malformed or unknown reservations, 403 for someone else’s', async () => {
    const r = await t.internal('POST', '/internal/reserve', { ...good(), userId: '77', requestId: 'own' });
    const { reservationId } = (await r.json()) as any;
    await expectContractError(await t.internal('GET', `/internal/reservations/${reservationId}`), 400, 'bad_request');
    await expectContractError(
      await t.internal('GET', `/internal/reservations/${reservationId}?userId=abc`),
      400,
      'bad_request',
    );
    await expectContractError(
      await t.internal('GET', `/internal/reservations/not-a-reservation?userId=77`),
      404,
      'not_found',
    );
    await expectContractError(
      await t.internal('GET', `/internal/reservations/${activityId}-${'0'.repeat(32)}?userId=77`),
      404,
      'not_found',
    );
    await expectContractError(
      await t.internal('GET', `/internal/reservations/999999999-${'0'.repeat(32)}?userId=77`),
      404,
      'not_found',
    );
    // Once settled, the order names its owner: anyone else is refused.
    const own = await waitFor(
      async () => (await (await t.internal('GET', `/internal/reservations/${reservationId}?userId=77`)).json()) as any,
      (body) => body.status === 'ordered',
    );
    expect(own).toMatchObject({ reservationId, status: 'ordered' });
    await expectContractError(
      await t.internal('GET', `/internal/reservations/${reservationId}?userId=78`),
      403,
      'forbidden',
    );
    const mine = (await (
      await t.internal('GET', `/internal/activities/${activityId}/reservation?userId=77`)
    ).json()) as any;
    expect(mine.reservationId).toBe(reservationId);
    await expectContractError(
      await t.internal('GET', `/internal/activities/${activityId}/reservation?userId=79`),
      404,
      'not_found',
    );
    await expectContractError(
      await t.internal('GET', `/internal/activities/x/reservation?userId=79`),
      400,
      'bad_request',
    );
    await expectContractError(
      await t.internal('GET', `/internal/activities/${activityId}/reservation`),
      400,
      'bad_request',
    );
    await expectContractError(await t.internal('GET', `/internal/activities/0`), 400, 'bad_request');
    await expectContractError(await t.internal('GET', `/internal/activities/123456789123`), 404, 'not_found');
  });
});

describe('admin API', () => {
  const activity = (over: Record<string, unknown> = {}) => ({
    activityId: '555000111',
    skuId: '9',
    title: 't',
    stock: 10,
    startsAt: new Date().toISOString(),
    endsAt: new Date(Date.now() + 60_000).toISOString(),
    ...over,
  });

  it('401 without the admin token or with a wrong one', async () => {
    for (const token of ['', 'wrong-token-123', `${TEST_SECRETS.ADMIN_TOKEN}x`]) {
      await expectContractError(await t.admin('POST', '/admin/activities', activity(), token), 401, 'unauthenticated');
      await expectContractError(
        await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' }, token),
        401,
        'unauthenticated',
      );
      await expectContractError(
        await t.admin('POST', `/admin/activities/${activityId}/warmup`, undefined, token),
        401,
        'unauthenticated',
      );
      await expectContractError(
        await t.admin('GET', `/admin/activities/${activityId}/reconciliation`, undefined, token),
        401,
        'unauthenticated',
      );
    }
  });

  const badActivities: [string, unknown][] = [
    ['missing fields', { activityId: '1' }],
    ['bad activityId', activity({ activityId: '1.5' })],
    ['bad skuId', activity({ skuId: '' })],
    ['negative stock', activity({ stock: -1 })],
    ['fractional stock', activity({ stock: 1.5 })],
    ['endsAt before startsAt', activity({ endsAt: new Date(Date.now() - 60_000).toISOString() })],
    ['not a date', activity({ startsAt: 'tomorrow' })],
    ['maxPerUser 0', activity({ maxPerUser: 0 })],
    ['maxPerUser huge', activity({ maxPerUser: 1e9 })],
    ['unknown field', activity({ discount: 5 })],
    ['state stopped at creation', activity({ state: 'stopped' })],
  ];
  for (const [name, body] of badActivities) {
    it(`POST /admin/activities 400: ${name}`, async () => {
      const before = await state();
      await expectContractError(await t.admin('POST', '/admin/activities', body), 400, 'bad_request');
      expect(await state()).toEqual(before);
    });
  }

  it('POST /admin/activities 400 on non-JSON, 409 on a duplicate id', async () => {
    await expectContractError(await t.admin('POST', '/admin/activities', '{nope'), 400, 'bad_request');
    await expectContractError(await t.admin('POST', '/admin/activities', activity({ activityId })), 409, 'conflict');
  });

  it('warm-up, switch and reconciliation of unknown or malformed activities', async () => {
    await expectContractError(await t.admin('POST', '/admin/activities/424242424242/warmup'), 404, 'not_found');
    await expectContractError(await t.admin('POST', '/admin/activities/abc/warmup'), 400, 'bad_request');
    await expectContractError(
      await t.admin('PATCH', '/admin/activities/424242424242', { state: 'paused' }),
      404,
      'not_found',
    );
    await expectContractError(await t.admin('GET', '/admin/activities/424242424242/reconciliation'), 404, 'not_found');
  });

  it('PATCH with a bad state is 400; a stopped sale cannot be reopened (409)', async () => {
    await expectContractError(
      await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'closed' }),
      400,
      'bad_request',
    );
    await expectContractError(await t.admin('PATCH', `/admin/activities/${activityId}`, {}), 400, 'bad_request');
    await expectContractError(await t.admin('PATCH', `/admin/activities/${activityId}`, 'x'), 400, 'bad_request');
    const other = await t.sale({ stock: 1 });
    expect((await t.admin('PATCH', `/admin/activities/${other.activityId}`, { state: 'stopped' })).status).toBe(200);
    await expectContractError(
      await t.admin('PATCH', `/admin/activities/${other.activityId}`, { state: 'open' }),
      409,
      'conflict',
    );
    await expectContractError(
      await t.internal('POST', '/internal/reserve', { ...good(), activityId: other.activityId }),
      410,
      'ended',
    );
  });

  it('unknown routes are 404 not_found', async () => {
    await expectContractError(await fetch(`${t.url}/nope`), 404, 'not_found');
  });
});
