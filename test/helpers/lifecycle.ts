/** Helpers for order-lifecycle tests: signed payment callbacks, reservations in bulk, reconciliation. */
import { createHmac } from 'node:crypto';
import { scalar } from './db.js';
import { TEST_SECRETS, type TestOrigin } from './origin.js';

export function paymentHeaders(body: string, ts = String(Date.now()), secret = TEST_SECRETS.PAYMENT_WEBHOOK_SECRET) {
  const sig = createHmac('sha256', secret).update(`${ts}\n${body}`).digest('hex');
  return { 'content-type': 'application/json', 'x-payment-timestamp': ts, 'x-payment-signature': `v1=${sig}` };
}

export async function pay(
  t: TestOrigin,
  orderNo: string,
  paymentId = `pay-${orderNo}`,
): Promise<{ status: number; body: any }> {
  const body = JSON.stringify({ orderNo, paymentId, status: 'paid' });
  const res = await fetch(`${t.url}/payments/callback`, { method: 'POST', headers: paymentHeaders(body), body });
  return { status: res.status, body: await res.json() };
}

/** Reserves one unit for each user, `parallel` at a time. */
export async function reserveAll(t: TestOrigin, activityId: string, users: string[], parallel = 25) {
  const results: { userId: string; status: number; body: any }[] = [];
  for (let i = 0; i < users.length; i += parallel) {
    const chunk = users.slice(i, i + parallel);
    results.push(
      ...(await Promise.all(
        chunk.map(async (userId) => {
          const res = await t.internal('POST', '/internal/reserve', {
            activityId,
            userId,
            quantity: 1,
            requestId: `r${activityId}-${userId}`,
          });
          return { userId, status: res.status, body: (await res.json()) as any };
        }),
      )),
    );
  }
  return results;
}

export const users = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(from + i));

export async function reconciliation(t: TestOrigin, activityId: string) {
  return (await (await t.admin('GET', `/admin/activities/${activityId}/reconciliation`)).json()) as any;
}

export const failingChecks = (rec: any) => rec.checks.filter((c: any) => !c.ok).map((c: any) => c.name);

export const count = (t: TestOrigin, sql: string, params: unknown[] = []) => scalar(t.db.pool, sql, params);
