/**
 * The outbox worker (docs/design.md §6): applies refills that the timeout job committed in MySQL to Redis.
 * A round claims pending stock_sync_outbox rows (`FOR UPDATE SKIP LOCKED`, then a lease on
 * `updated_at`, committed — no Redis call inside the transaction), runs lua/refill-2.lua for each
 * (idempotent by the `refilled` hash: a reservation is refilled at most once), marks the row done
 * and clears the sold-out flag where stock came back.
 *
 * A crash after the timeout commit and before the refill leaves the row pending: the next round
 * (after the lease) refills it. A crash after the refill and before "done" is repaired the same
 * way: the script answers ALREADY and the row is marked done without a second refill. When Redis
 * lost the stock key the row stays pending until recover has rebuilt the stock.
 */
import type { OriginConfig } from '../platform/config.js';
import { inTransaction, type Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { RefillResult } from '../redis/redis-store.js';
import type { ActivityCatalog } from './catalog.js';
import type { SnapshotPublisher } from './snapshot-publisher.js';
import { PeriodicJob } from '../platform/periodic.js';
import { LEDGERS, transitionsOf, type Ledger } from '../orders/ledger.js';
import { claimRefills, markRefillDone, type RefillOutboxRow } from '../orders/refill-outbox-store.js';

/** What the outbox worker uses: the outbox rows, the sale and its refill script, and who hears a sale is back. */
export interface OutboxWorkerDeps {
  db: Db;
  catalog: Pick<ActivityCatalog, 'resolve'>;
  /** lua/refill-2.lua. */
  sales: Pick<SaleStock, 'refill'>;
  /** Clears the sold-out flag, or pushes the snapshot, where stock came back. */
  publisher: Pick<SnapshotPublisher, 'setSoldOut' | 'publish'>;
  log: Logger;
  metrics: Metrics;
  config: Pick<OriginConfig, 'OUTBOX_POLL_MS' | 'OUTBOX_BATCH_SIZE' | 'OUTBOX_CLAIM_LEASE_MS'>;
}

export type { RefillOutboxRow };

export interface OutboxRound {
  claimed: number;
  refilled: number;
  already: number;
  notWarmed: number;
}

export class OutboxWorker extends PeriodicJob {
  constructor(private readonly deps: OutboxWorkerDeps) {
    super('outbox', deps.config.OUTBOX_POLL_MS, deps.log);
  }

  /** A round over each ledger's outbox (real and shadow, origin/orders/ledger.ts), each on its own. */
  async round(): Promise<boolean> {
    let more = false;
    for (const ledger of LEDGERS) {
      const result = await this.runOnce(ledger);
      more ||= result.claimed === this.deps.config.OUTBOX_BATCH_SIZE && result.notWarmed < result.claimed;
    }
    return more;
  }

  /** Claims pending rows not under someone else's lease; the lease is `updated_at` + OUTBOX_CLAIM_LEASE_MS. */
  async claim(ledger: Ledger = LEDGERS[0]!): Promise<RefillOutboxRow[]> {
    const { OUTBOX_BATCH_SIZE: batch, OUTBOX_CLAIM_LEASE_MS: leaseMs } = this.deps.config;
    return inTransaction(this.deps.db, (tx) => claimRefills(tx, ledger, batch, leaseMs));
  }

  /** Applies one claimed row to Redis. */
  async refill(row: RefillOutboxRow): Promise<RefillResult> {
    const sale = await this.deps.catalog.resolve(String(row.activity_id));
    return this.deps.sales.refill(sale, { reservationId: row.reservation_id, quantity: Number(row.quantity) });
  }

  async markDone(row: RefillOutboxRow, ledger: Ledger = LEDGERS[0]!): Promise<void> {
    await markRefillDone(this.deps.db, ledger, row.id);
  }

  /** One round on one ledger's outbox (the real one unless named). */
  async runOnce(ledger: Ledger = LEDGERS[0]!): Promise<OutboxRound> {
    const rows = await this.claim(ledger);
    const round: OutboxRound = { claimed: rows.length, refilled: 0, already: 0, notWarmed: 0 };
    const backOnSale = new Map<string, boolean>(); // activity → stock was 0 before a refill
    for (const row of rows) {
      const refilled = await this.refill(row);
      if (refilled.kind === 'not_warmed') {
        round.notWarmed++;
        this.deps.log.warn(
          { activityId: String(row.activity_id), reservationId: row.reservation_id },
          'refill waits: Redis has no stock for this sale (run recover)',
        );
        continue;
      }
      if (refilled.kind === 'refilled') round.refilled++;
      else round.already++;
      await this.markDone(row, ledger);
      const activityId = String(row.activity_id);
      const { stock } = refilled;
      const fromZero = refilled.kind === 'refilled' && stock - Number(row.quantity) <= 0;
      if (stock > 0) backOnSale.set(activityId, (backOnSale.get(activityId) ?? false) || fromZero);
    }
    if (round.refilled > 0) transitionsOf(this.deps.metrics, ledger).inc({ transition: 'refill' }, round.refilled);
    for (const [activityId, fromZero] of backOnSale) this.backOnSale(activityId, fromZero);
    return round;
  }

  /** Clears the sold-out flag here and at the other origins (pub/sub), and tells the edge. */
  private backOnSale(activityId: string, fromZero: boolean): void {
    if (this.deps.publisher.setSoldOut(activityId, false)) return; // a transition publishes
    // No flag here, but the edge may have set its own from a sold_out answer: push the snapshot.
    if (!fromZero) return;
    void this.deps.publisher.publish(activityId).catch(() => undefined);
  }
}
