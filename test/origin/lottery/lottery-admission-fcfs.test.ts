/**
 * The reserve path's lottery step is skipped only for a sale known to be FCFS: the
 * admission learns it from the first lookup, and a lottery sale inside its window still gets an entry,
 * never a reservation. Real Redis and MariaDB, through the signed internal API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin();
});
afterAll(async () => {
  await t.stop();
});

async function purchase(activityId: string, userId: string) {
  const res = await t.internal('POST', '/internal/reserve', {
    activityId,
    userId,
    quantity: 1,
    requestId: `r-${userId}`,
  });
  return { status: res.status, body: (await res.json()) as { status: string } };
}

describe('the lottery step on the reserve path', () => {
  it('is known FCFS after the first purchase of an FCFS sale, which still reserves', async () => {
    const { activityId } = await t.sale({ stock: 5 });
    const admission = t.origin.parts.lotteryAdmission;
    expect(admission.isFcfs(activityId)).toBe(false);
    const first = await purchase(activityId, uniqueId());
    expect(first).toMatchObject({ status: 202, body: { status: 'queued' } });
    expect(admission.isFcfs(activityId)).toBe(true);
    const second = await purchase(activityId, uniqueId());
    expect(second).toMatchObject({ status: 202, body: { status: 'queued' } });
  });

  it('is never skipped for a lottery sale inside its window: a purchase is an entry', async () => {
    const activityId = uniqueId();
    const startsAt = Date.now();
    const created = await t.admin('POST', '/admin/activities', {
      activityId,
      skuId: uniqueId(),
      title: `lottery ${activityId}`,
      stock: 3,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(startsAt + 3_600_000).toISOString(),
      maxPerUser: 1,
      admission: 'lottery',
      lotteryWindowMs: 600_000,
    });
    expect(created.status).toBe(201);
    expect((await t.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const answer = await purchase(activityId, uniqueId());
      expect(answer).toMatchObject({ status: 202, body: { status: 'entered' } });
      expect(t.origin.parts.lotteryAdmission.isFcfs(activityId)).toBe(false);
    }
  });
});
