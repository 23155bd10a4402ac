/** Reservation status from Redis + MySQL: queued → ordered; the caller's own reservation; owners only. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let http: TestOrigin;
beforeAll(async () => {
  http = await startTestOrigin({ ORIGIN_ROLE: 'http' }); // no consumers: reservations stay queued
});
afterAll(async () => {
  await http.stop();
});

it('is queued until settled, then ordered with an order number and expiry; only its owner sees it', async () => {
  const { activityId } = await http.sale({ stock: 3, paymentTimeoutSeconds: 600 });
  const res = await http.internal('POST', '/internal/reserve', {
    activityId,
    userId: '31',
    quantity: 1,
    requestId: 'a',
  });
  expect(res.status).toBe(202);
  const { reservationId } = (await res.json()) as any;

  const get = (path: string) =>
    http.internal('GET', path).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  expect(await get(`/internal/reservations/${reservationId}?userId=31`)).toEqual({
    status: 200,
    body: { reservationId, status: 'queued' },
  });
  expect((await get(`/internal/reservations/${reservationId}?userId=32`)).status).toBe(404);
  expect(await get(`/internal/activities/${activityId}/reservation?userId=31`)).toEqual({
    status: 200,
    body: { reservationId, status: 'queued' },
  });

  const consumers = await startTestOrigin({ ORIGIN_ROLE: 'consumers' }, http.db);
  try {
    const settled = await waitFor(
      () => get(`/internal/reservations/${reservationId}?userId=31`),
      (r) => r.body.status === 'ordered',
    );
    expect(settled.body.orderNo).toMatch(/^[0-9A-F]{24}$/);
    const expireIn = Date.parse(settled.body.expireAt) - Date.now();
    expect(expireIn).toBeGreaterThan(590_000);
    expect(expireIn).toBeLessThanOrEqual(600_000);
    expect(await get(`/internal/activities/${activityId}/reservation?userId=31`)).toEqual(settled);
    expect(await get(`/internal/reservations/${reservationId}?userId=32`)).toMatchObject({
      status: 403,
      body: { error: 'forbidden' },
    });
  } finally {
    await consumers.stop();
  }
});
