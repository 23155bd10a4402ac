/**
 * `seckill_order.status` (schema/001): the numbers MySQL stores, written once. SQL interpolates
 * the numbers (`status = ${OrderStatus.PENDING}`); they are constants, never user input.
 */

export const OrderStatus = { PENDING: 0, PAID: 1, TIMEOUT: 2 } as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** `seckill_refund.status` (schema/002): a refund the shop still owes, or made. */
export const RefundStatus = { NEEDED: 'needed', REFUNDED: 'refunded' } as const;
export type RefundStatus = (typeof RefundStatus)[keyof typeof RefundStatus];

/** `seckill_refund.reason`: why a payment must be refunded. */
export type RefundReason = 'order_timed_out' | 'already_paid';
