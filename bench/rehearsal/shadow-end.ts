/**
 * The end of a shadow ramp, by itself (docs/rehearsal.md step 5): the shadow sale is stopped before
 * settlement is awaited; once settled, the orders still waiting for payment are paid through the
 * signed webhook (a shadow sale's payments are the rehearsal's own), then
 * `POST /admin/activities/:id/cleanup` — asked again while it answers 409 (settlement not finished),
 * up to the settle timeout — and the cleanup checklist read back as the report's verdict.
 */
import type mysql from 'mysql2/promise';
import { rows } from '../../origin/platform/db/rows.js';
import { SHADOW_LEDGER } from '../../origin/orders/ledger.js';
import { paymentCallback, PAYMENT_CALLBACK_PATH } from './driver.js';
import type { RehearsalOptions } from './options.js';
import { adminRequest } from './stack.js';

/** The cleanup is asked again this often while it answers 409. */
export const CLEANUP_RETRY_MS = 500;
/** Payments sent at once at the end. */
const PAYMENTS_IN_FLIGHT = 8;

export interface CleanupReport {
  /** Orders the rehearsal paid at the end, so nothing waits for payment. */
  paidAtEnd: number;
  cleaned: boolean;
  /**
   * The cleanup's own reconciliation, taken before it removed the shadow rows (afterwards the
   * checklist's reconciliation item cannot hold: the rows it adds up are gone).
   */
  reconciledAtCleanup: boolean | null;
  /** Cleaned, reconciled at the cleanup, and every other checklist item ticked. */
  done: boolean;
  /** Why the cleanup was not done (its last refusal), or null. */
  error: string | null;
  checklist: { done: boolean; items: { id: string; label: string; ok: boolean; detail: string }[] } | null;
}

export function stopSale(o: RehearsalOptions, originUrl: string, activityId: string): Promise<unknown> {
  return adminRequest(o, originUrl, 'PATCH', `/admin/activities/${activityId}`, { state: 'stopped' });
}

async function payRemaining(o: RehearsalOptions, originUrl: string, pool: mysql.Pool, activityId: string) {
  const pending = await rows<{ order_no: string }>(
    pool.query(`SELECT order_no FROM ${SHADOW_LEDGER.order} WHERE activity_id = ? AND status = 0`, [activityId]),
  );
  let paid = 0;
  const queue = pending.map((r) => r.order_no);
  await Promise.all(
    Array.from({ length: PAYMENTS_IN_FLIGHT }, async () => {
      for (let orderNo = queue.shift(); orderNo !== undefined; orderNo = queue.shift()) {
        const { headers, body } = paymentCallback(o.paymentSecret, orderNo, `pay-end-${orderNo}`);
        const res = await fetch(originUrl + PAYMENT_CALLBACK_PATH, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.ok) paid++;
      }
    }),
  );
  return paid;
}

export async function cleanUpShadowSale(
  o: RehearsalOptions,
  originUrl: string,
  pool: mysql.Pool,
  activityId: string,
): Promise<CleanupReport> {
  const paidAtEnd = await payRemaining(o, originUrl, pool, activityId);
  const deadline = Date.now() + o.settleTimeoutMs;
  let error: string | null = null;
  let cleaned = false;
  let reconciledAtCleanup: boolean | null = null;
  for (;;) {
    try {
      const answer = await adminRequest<{ reconciliation?: { ok: boolean } }>(
        o,
        originUrl,
        'POST',
        `/admin/activities/${activityId}/cleanup`,
      );
      reconciledAtCleanup = answer.reconciliation?.ok ?? null;
      cleaned = true;
      error = null;
      break;
    } catch (err) {
      error = (err as Error).message;
      // 409: something is still settling; anything else will not change by asking again.
      if (!/: 409 /.test(error) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, CLEANUP_RETRY_MS));
    }
  }
  const checklist = await adminRequest<CleanupReport['checklist']>(
    o,
    originUrl,
    'GET',
    `/admin/console/api/sales/${activityId}/cleanup-checklist`,
  ).catch(() => null);
  const others = checklist?.items.filter((i) => i.id !== 'reconciled') ?? [];
  const done = cleaned && reconciledAtCleanup === true && others.length > 0 && others.every((i) => i.ok);
  return { paidAtEnd, cleaned, reconciledAtCleanup, done, error, checklist };
}
