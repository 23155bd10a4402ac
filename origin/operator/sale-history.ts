/**
 * Whether a sale has sold anything, as MySQL records it. Warm-up asks before it loads a fresh stock
 * (a sale with history must be recovered instead); recovery asks the same question.
 */
import { hasOrders, type SaleRef } from '../orders/order-store.js';
import type { Db } from '../platform/db/pool.js';
import { hasDeadLetters } from '../orders/dead-letter-store.js';

/** True when MySQL shows the sale sold something: an order or a dead letter. */
export async function hasSaleHistory(db: Db, sale: SaleRef): Promise<boolean> {
  return (await hasOrders(db, sale)) || (await hasDeadLetters(db, sale.activityId));
}
