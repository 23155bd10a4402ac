/**
 * Which tables a sale's order rows live in: the real ledger, or the shadow ledger of a shadow sale
 * (a rehearsal on the production stack, schema/011). The one place a table name of the order
 * rows is chosen: every store takes a Ledger, or a sale it derives one from with `ledgerOf`.
 *
 * A shadow sale's order numbers start with SHADOW_ORDER_PREFIX (real ones are 24 hex digits), so a
 * payment callback, which names only the order, finds its ledger from the number alone: a callback
 * for a shadow order can only ever touch the shadow tables, and one for a real order the real ones.
 */

import type { Metrics } from '../platform/metrics.js';

export interface Ledger {
  /** True for the shadow tables. */
  readonly shadow: boolean;
  readonly order: string;
  readonly stockLog: string;
  readonly refund: string;
  readonly refillOutbox: string;
  readonly orderEvents: string;
}

export const REAL_LEDGER: Ledger = Object.freeze({
  shadow: false,
  order: 'seckill_order',
  stockLog: 'seckill_stock_log',
  refund: 'seckill_refund',
  refillOutbox: 'stock_sync_outbox',
  orderEvents: 'order_event_outbox',
});

export const SHADOW_LEDGER: Ledger = Object.freeze({
  shadow: true,
  order: 'shadow_seckill_order',
  stockLog: 'shadow_seckill_stock_log',
  refund: 'shadow_seckill_refund',
  refillOutbox: 'shadow_stock_sync_outbox',
  orderEvents: 'shadow_order_event_outbox',
});

/** Both ledgers: what the lifecycle jobs (timeout, refills, order events) go through, each on its own. */
export const LEDGERS: readonly Ledger[] = [REAL_LEDGER, SHADOW_LEDGER];

/** The ledger of a sale: the shadow one exactly when the sale is a shadow sale. */
export function ledgerOf(sale: { shadow?: boolean }): Ledger {
  return sale.shadow === true ? SHADOW_LEDGER : REAL_LEDGER;
}

/**
 * Whether the ledger's order events are written: the real ones when ORDER_EVENTS_URL is set, a
 * shadow sale's only when SHADOW_ORDER_EVENTS_URL is — never to the real receiver.
 */
export function orderEventsOn(
  config: { ORDER_EVENTS_URL?: string | undefined; SHADOW_ORDER_EVENTS_URL?: string | undefined },
  ledger: Ledger,
): boolean {
  return (ledger.shadow ? config.SHADOW_ORDER_EVENTS_URL : config.ORDER_EVENTS_URL) !== undefined;
}

/** The order lifecycle counter of the ledger's orders: a shadow sale's are counted apart. */
export function transitionsOf(metrics: Pick<Metrics, 'orderTransitions' | 'shadowOrderTransitions'>, ledger: Ledger) {
  return ledger.shadow ? metrics.shadowOrderTransitions : metrics.orderTransitions;
}

/** Shadow order numbers start with this letter; real ones are hex digits only. */
export const SHADOW_ORDER_PREFIX = 'S';

/** The ledger an order number belongs to. */
export function ledgerOfOrderNo(orderNo: string): Ledger {
  return orderNo.startsWith(SHADOW_ORDER_PREFIX) ? SHADOW_LEDGER : REAL_LEDGER;
}
