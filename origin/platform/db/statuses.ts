/**
 * The numeric status columns (schema/001, 005, 006), named once for SQL and TS alike. SQL interpolates
 * these constants (`status = ${OrderStatus.PENDING}`); they are numbers, never user input.
 */

/** `seckill_order.status`. */
export const OrderStatus = { PENDING: 0, PAID: 1, TIMEOUT: 2 } as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** `stock_sync_outbox.status`: a refill waiting for Redis, or applied. */
export const OutboxStatus = { PENDING: 0, DONE: 1 } as const;
export type OutboxStatus = (typeof OutboxStatus)[keyof typeof OutboxStatus];

/** `order_event_outbox.status`: 1 is unused (a row is deleted once delivered). */
export const OrderEventStatus = { PENDING: 0, PARKED: 2 } as const;
export type OrderEventStatus = (typeof OrderEventStatus)[keyof typeof OrderEventStatus];

/** `seckill_stock_release.status`: committed in MySQL (held_back already reduced) but not in Redis, or applied. */
export const StockReleaseStatus = { PENDING: 0, APPLIED: 1 } as const;
export type StockReleaseStatus = (typeof StockReleaseStatus)[keyof typeof StockReleaseStatus];
