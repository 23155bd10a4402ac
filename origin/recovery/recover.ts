/**
 * Recover after Redis lost a sale's data (docs/design.md §5): rebuilds stock, holders, `released`,
 * `refilled` and `tranches` from what can be proven, atomically (lua/recover-9.lua), then the sale may sell again.
 * Read → compute → write: `readFacts` reads the Stream, then MySQL; `computeRecovery`
 * (recovery-plan.ts, pure, where the per-reservation rules live) decides; the store writes.
 *
 * The rule. The Stream (with its consumer group) must have survived: it is the only record of
 * reservations granted but not yet settled — without it the state cannot be proven and recover
 * refuses (409). The Stream and the group's position are read FIRST, then MySQL in one consistent
 * snapshot, so anything settled in between is already in MySQL. A negative stock (MySQL owes more
 * than it has) is refused too. Never two at once: recover runs under the sale's MySQL recovery lock
 * (recovery-lock.ts).
 */
import { ContractError } from '../../contract/errors.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';
import { loadSaleRules } from '../access/sale-rules.js';
import type { StrandedBorrow } from '../redis/borrow.js';
import type { LedgerReads } from '../redis/ledger-reads.js';
import type { SaleRecovery } from '../redis/sale-recovery.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import type { OriginConfig } from '../platform/config.js';
import { inTransaction, type Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { ordersForRecovery } from '../orders/order-store.js';
import { OutboxStatus, refillsOfSale } from '../orders/refill-outbox-store.js';
import { availableUnits } from '../orders/stock-row-store.js';
import { appliedReleasesOfSale } from '../sale/tranche-store.js';
import { deadLettersForRecovery } from '../orders/dead-letter-store.js';
import { trancheId } from '../sale/tranches.js';
import { withRecoveryLock } from './recovery-lock.js';
import { computeRecovery, type LedgerEvent, type RecoveryFacts } from './recovery-plan.js';
import type { Sale } from '../redis/redis-store.js';

/**
 * What recovery uses: MySQL (under the recovery lock), Redis's stock, recovery and ledger jobs, the
 * publisher that tells the edge, and what loading the sale's rules (access/sale-rules.ts) uses.
 */
export interface RecoverDeps {
  db: Db;
  log: Logger;
  metrics: Pick<Metrics, 'orderTransitions'>;
  publisher: Pick<SnapshotPublisher, 'publish' | 'setSoldOut'>;
  sales: Pick<SaleStock, 'stock' | 'warmBuckets'>;
  recovery: Pick<SaleRecovery, 'recover' | 'returnStranded'>;
  ledger: Pick<LedgerReads, 'streamReservations'>;
  saleRules: SaleRulesInput;
  config: Pick<OriginConfig, 'BORROW_STALE_MS' | 'RECOVER_LOCK_WAIT_MS'>;
}

/** What loadSaleRules (access/sale-rules.ts) is handed. */
export type SaleRulesInput = Parameters<typeof loadSaleRules>[0];

export interface RecoverResult {
  activityId: string;
  stock: number;
  holders: number;
  unsettled: number;
  pendingRefills: number;
  state: string;
  /** Reservations MySQL proves that the surviving Stream lacked (orders, dead letters, lost requeues), appended again. */
  restored?: number;
  /** Stock buckets, warm sale: units of borrows a dead process left half-done, given back to their bucket. */
  returnedFromTransit?: number;
}

async function returnedInTransit(
  deps: RecoverDeps,
  record: Awaited<ReturnType<typeof requireActivity>>,
  returned: StrandedBorrow[],
): Promise<RecoverResult> {
  const { activityId } = record.config;
  const stock = (await deps.sales.stock(saleOf(record))) ?? 0;
  const result: RecoverResult = {
    activityId,
    stock,
    holders: 0,
    unsettled: 0,
    pendingRefills: 0,
    state: record.state,
    returnedFromTransit: returned.reduce((s, r) => s + (r.donor === null ? 0 : r.quantity), 0),
  };
  deps.metrics.orderTransitions.inc({ transition: 'recover' });
  deps.log.warn({ ...result, returned }, 'units in transit between buckets returned');
  if (stock > 0) deps.publisher.setSoldOut(activityId, false);
  return result;
}

const refuse = (message: string) => new ContractError('conflict', message);

/**
 * The operator's recover (admin API): under the sale's recovery lock (recovery-lock.ts), so it never
 * runs beside another process's recovery. Whoever waited finds the sale warm and is told there is
 * nothing to recover (409), rather than rebuilding it a second time.
 */
export function recover(deps: RecoverDeps, activityId: string): Promise<RecoverResult> {
  return withRecoveryLock(deps.db, activityId, deps.config.RECOVER_LOCK_WAIT_MS, () =>
    recoverHoldingLock(deps, activityId),
  );
}

/** recover without taking the lock: for a caller that holds it (the failover watch). */
export async function recoverHoldingLock(deps: RecoverDeps, activityId: string): Promise<RecoverResult> {
  const record = await requireActivity(deps.db, activityId);
  const { maxPerUser } = record.config;
  const sale = saleOf(record);
  const warm = await deps.sales.warmBuckets(sale);
  if (warm > 0 && warm < sale.buckets)
    throw refuse(
      `${warm} of ${sale.buckets} stock buckets still hold stock (one cluster master lost its share): the lost ` +
        'share cannot be proven while the others sell. Pause the sale, let settlement finish, then delete the ' +
        "remaining buckets' stock keys and recover the whole sale.",
    );
  if (warm === sale.buckets) {
    // A warm bucketed sale may still hold units in transit between buckets (a process died mid-borrow).
    const returned = sale.buckets > 1 ? await deps.recovery.returnStranded(sale, deps.config.BORROW_STALE_MS) : [];
    if (returned.length === 0)
      throw refuse('Redis still holds this sale (its stock key exists): there is nothing to recover');
    return returnedInTransit(deps, record, returned);
  }

  const facts = await readFacts(deps, sale);
  if (!facts)
    throw refuse(
      'the reservation Stream or its consumer group is gone: reservations granted but not yet settled cannot be ' +
        'known, so the stock cannot be proven. Selling stays stopped.',
    );
  const plan = computeRecovery(facts);
  if (plan.kind === 'refused') throw refuse(plan.reason);

  const { stock, holders, released, refilled, tranches, restore } = plan;
  // A Redis that lost the sale lost its rules too: back before the script makes it warm again.
  await loadSaleRules(deps.saleRules, sale, record.config.eligibility);
  const rebuilt = await deps.recovery.recover(sale, {
    stock,
    state: record.state,
    maxPerUser,
    holders,
    released,
    refilled,
    tranches,
    restore,
  });
  if (rebuilt.kind === 'warm') throw refuse('the sale became warm while recovering; nothing was changed');
  if (rebuilt.kind === 'no_stream')
    throw refuse('the reservation Stream vanished while recovering; nothing was changed');

  const result: RecoverResult = {
    activityId,
    stock,
    holders: rebuilt.holders,
    unsettled: plan.unsettled,
    pendingRefills: plan.pendingRefills,
    state: record.state,
    restored: restore.length,
  };
  deps.metrics.orderTransitions.inc({ transition: 'recover' });
  deps.log.warn(result, 'sale recovered into Redis from MySQL and the Stream');
  if (!deps.publisher.setSoldOut(activityId, stock <= 0)) await deps.publisher.publish(activityId);
  return result;
}

/** The surviving Stream, then MySQL in one snapshot; null when the Stream or its group is gone. */
async function readFacts(deps: RecoverDeps, sale: Sale): Promise<RecoveryFacts | null> {
  const stream = await deps.ledger.streamReservations(sale);
  if (!stream) return null;
  return inTransaction(deps.db, async (tx) => {
    const available = (await availableUnits(tx, sale))!;
    const orders = await ordersForRecovery(tx, sale);
    const dead = await deadLettersForRecovery(tx, sale);
    const applied = await appliedReleasesOfSale(tx, sale);
    const outbox = await refillsOfSale(tx, sale);
    return {
      available,
      orders: orders.map((o) => ({
        reservationId: o.reservation_id,
        requestId: o.request_id,
        userId: String(o.user_id),
        quantity: Number(o.quantity),
        traceId: o.trace_id ?? '',
        ts: Math.round(Number(o.ts)),
      })),
      deadLetters: dead.map((d) => {
        // The payload is the reservation event as settlement last read it (dead-lettering.ts).
        const payload = JSON.parse(d.payload) as Partial<LedgerEvent>;
        return {
          event: {
            reservationId: d.reservation_id,
            requestId: payload.requestId ?? `dead-letter-${d.reservation_id}`,
            userId: String(d.user_id),
            quantity: Number(d.quantity),
            traceId: payload.traceId ?? '',
            ts: payload.ts ?? Math.round(Number(d.ts)),
          },
          restocked: Number(d.restocked),
          status: d.status,
        };
      }),
      outbox: outbox.map((o) => ({
        reservationId: o.reservation_id,
        quantity: Number(o.quantity),
        pending: Number(o.status) === OutboxStatus.PENDING,
      })),
      stream,
      appliedReleases: new Map(applied.map((r) => [trancheId(r.id), Number(r.units)])),
    };
  });
}
