/**
 * A sale's order work not yet finished: refills not yet applied to Redis and orders still waiting for
 * payment or timeout. Read on one consistent snapshot, as the one statement it replaces: a timeout
 * moves a unit from a pending order to a pending refill in one transaction, so two separate reads
 * could miss it in both (cleanup would then go ahead with a refill still queued).
 */
import { inConsistentSnapshot, type Db } from '../platform/db/pool.js';
import { pendingOrderCount, type SaleRef } from './order-store.js';
import { OutboxStatus, refillCount } from './refill-outbox-store.js';

export async function openOrderWork(db: Db, sale: SaleRef): Promise<{ outbox: number; pending: number }> {
  return inConsistentSnapshot(db, async (tx) => ({
    outbox: await refillCount(tx, sale, OutboxStatus.PENDING),
    pending: await pendingOrderCount(tx, sale),
  }));
}
