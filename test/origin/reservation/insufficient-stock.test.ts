/**
 * A multi-unit request larger than what is left (docs/design.md §10): 409
 * `insufficient_stock`, the sale stays open and smaller requests still succeed; `sold_out` and the
 * sold-out flag only once nothing is left.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;

beforeAll(async () => {
  t = await startTestOrigin();
});
afterAll(async () => {
  await t.stop();
});

const reserve = async (activityId: string, userId: string, quantity: number) => {
  const res = await t.internal('POST', '/internal/reserve', { activityId, userId, quantity, requestId: `r-${userId}` });
  return { status: res.status, body: (await res.json()) as any };
};
const publicSnapshot = async (activityId: string) =>
  (await (await t.internal('GET', `/internal/activities/${activityId}`)).json()) as any;

it('stock 3, maxPerUser 5: 5 units → 409 insufficient_stock and the sale stays open; 3 units → 202', async () => {
  const { activityId } = await t.sale({ stock: 3, maxPerUser: 5 });

  const tooMany = await reserve(activityId, '501', 5);
  expect({ status: tooMany.status, error: tooMany.body.error }).toEqual({ status: 409, error: 'insufficient_stock' });
  expect(t.origin.parts.soldOut.has(activityId)).toBe(false);
  expect(await publicSnapshot(activityId)).toMatchObject({ state: 'open', soldOut: false });

  const fits = await reserve(activityId, '502', 3);
  expect(fits.status).toBe(202);
  expect(fits.body.reservationId).toEqual(expect.any(String));

  // Now nothing is left: sold_out, and the flag goes up.
  const after = await reserve(activityId, '503', 1);
  expect({ status: after.status, error: after.body.error }).toEqual({ status: 409, error: 'sold_out' });
  expect(t.origin.parts.soldOut.has(activityId)).toBe(true);
});
