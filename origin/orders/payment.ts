/**
 * The payment provider's webhook (docs/design.md §9): verifies `x-payment-signature` over
 * `ts + "\n" + body`, then moves the order PENDING(0) → PAID(1) by a conditional update. The
 * timeout job races it with its own conditional update; whoever changes the row owns the outcome.
 * With ORDER_EVENTS_URL set, the same transaction writes the `order.paid` event.
 * A payment the order cannot keep (it timed out, or it was paid by another payment) is recorded in
 * seckill_refund for the shop to refund.
 *
 * A PENDING order slightly past expire_at is still accepted: the timeout job is the one arbiter of
 * "too late", so a paid order never also becomes a timeout.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ContractError } from '../../contract/errors.js';
import { checkEdgeHeaders } from '../../contract/signing.js';
import type { OriginConfig } from '../platform/config.js';
import { AuthFailure } from '../platform/http/auth-failures.js';
import { recordOrderEventsOf } from './order-event-store.js';
import { inTransaction, type Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { retryOnDeadlock } from '../platform/db/deadlock.js';
import { OrderStatus } from './order-status.js';
import { lockOrderByNo, markPaid, recordRefund } from './order-store.js';
import { ledgerOfOrderNo, orderEventsOn, transitionsOf } from './ledger.js';

/** What applying a payment uses: MySQL, its settings, log, metrics. */
export interface PaymentDeps {
  db: Db;
  log: Logger;
  metrics: Metrics;
  config: Pick<OriginConfig, 'LIFECYCLE_TX_RETRIES' | 'ORDER_EVENTS_URL' | 'SHADOW_ORDER_EVENTS_URL'>;
}

/** Where a refused payment signature is counted (auth-failures.ts). */
const ROUTE = '/payments/callback';

export const PAYMENT_TIMESTAMP_HEADER = 'x-payment-timestamp';
export const PAYMENT_SIGNATURE_HEADER = 'x-payment-signature';

export const paymentCallbackSchema = z
  .object({
    orderNo: z.string().regex(/^[A-Za-z0-9]{1,32}$/, 'orderNo must be 1-32 letters or digits'),
    paymentId: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'paymentId must be 1-64 characters of [A-Za-z0-9._:-]'),
    status: z.literal('paid', 'status must be "paid"'),
  })
  .strict();
export type PaymentCallback = z.infer<typeof paymentCallbackSchema>;

/** `v1=<hex HMAC-SHA256(secret, ts \n body)>`, compared in constant time; throws 401 otherwise. */
export function verifyPaymentSignature(
  secret: string,
  maxAgeMs: number,
  req: { body: string; timestamp?: string; signature?: string; now?: number },
): void {
  const { timestamp, signature } = req;
  // Same header syntax (`<ms>`, `v1=<64 hex>`) and freshness rule as the edge's signature.
  const header = checkEdgeHeaders(timestamp, signature, req.now ?? Date.now(), maxAgeMs);
  if (header === 'missing') throw new AuthFailure(ROUTE, 'missing', 'missing payment signature');
  if (header === 'stale')
    throw new AuthFailure(
      ROUTE,
      'stale',
      `stale payment signature: x-payment-timestamp must be milliseconds since the epoch, within ${maxAgeMs} ms of now`,
    );
  const expected = createHmac('sha256', secret).update(`${timestamp}\n${req.body}`).digest();
  const given = Buffer.from(signature!.slice(3), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new AuthFailure(ROUTE, 'invalid', 'bad payment signature');
}

export type PaymentOutcome = 'paid' | 'repeat';

export async function applyPayment(deps: PaymentDeps, p: PaymentCallback): Promise<PaymentOutcome> {
  const outcome = await retryOnDeadlock(deps.config.LIFECYCLE_TX_RETRIES, () =>
    inTransaction(deps.db, async (tx) => {
      const paid = await markPaid(tx, p.orderNo, p.paymentId);
      if (paid === 1) {
        // The order number names its ledger (ledger.ts): a shadow order's event goes to the shadow outbox.
        const ledger = ledgerOfOrderNo(p.orderNo);
        if (orderEventsOn(deps.config, ledger))
          await recordOrderEventsOf(tx, ledger, 'order.paid', { orderNo: p.orderNo });
        return 'paid' as const;
      }
      // Lost the race or a repeat: read the state under lock and record what the shop must refund.
      const order = await lockOrderByNo(tx, p.orderNo);
      if (!order) return 'not_found' as const;
      if (Number(order.status) === OrderStatus.PAID && order.payment_id === p.paymentId) return 'repeat' as const;
      const reason = Number(order.status) === OrderStatus.TIMEOUT ? 'order_timed_out' : 'already_paid';
      await recordRefund(tx, {
        orderNo: p.orderNo,
        paymentId: p.paymentId,
        activityId: order.activity_id,
        userId: order.user_id,
        reason,
      });
      return reason;
    }),
  );
  transitionsOf(deps.metrics, ledgerOfOrderNo(p.orderNo)).inc({ transition: `payment_${outcome}` });
  switch (outcome) {
    case 'not_found':
      throw new ContractError('not_found', `no order ${p.orderNo}`);
    case 'order_timed_out':
      deps.log.warn({ orderNo: p.orderNo, paymentId: p.paymentId }, 'payment after timeout: refund recorded');
      throw new ContractError('order_timed_out', 'the order timed out before payment; the payment will be refunded');
    case 'already_paid':
      deps.log.warn({ orderNo: p.orderNo, paymentId: p.paymentId }, 'second payment for a paid order: refund recorded');
      throw new ContractError('conflict', 'the order was paid by another payment; this payment will be refunded');
    default:
      return outcome;
  }
}
