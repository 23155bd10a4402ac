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
import type { OriginContext } from '../context.js';
import { inTransaction } from '../db/pool.js';
import type { RefillResult } from '../redis/stock-store.js';
import { PeriodicJob } from './periodic.js';
import { rows } from '../db/rows.js';
import { OutboxStatus } from '../db/statuses.js';

/** What this module uses of the origin's context. */
export type OutboxWorkerDeps = Pick<
  OriginContext,
  'catalog' | 'config' | 'db' | 'log' | 'metrics' | 'publisher' | 'stock'
>;

export interface OutboxRow {
  id: string;
  activity_id: string;
  sku_id: string;
  reservation_id: string;
  quantity: number;
}

export interface OutboxRound {
  claimed: number;
  refilled: number;
  already: number;
  notWarmed: number;
}

export class OutboxWorker extends PeriodicJob {
  constructor(private readonly ctx: OutboxWorkerDeps) {
    super('outbox', ctx.config.OUTBOX_POLL_MS, ctx.log);
  }

  async round(): Promise<boolean> {
    const result = await this.runOnce();
    return result.claimed === this.ctx.config.OUTBOX_BATCH_SIZE && result.notWarmed < result.claimed;
  }

  /** Claims pending rows not under someone else's lease; the lease is `updated_at` + OUTBOX_CLAIM_LEASE_MS. */
  async claim(): Promise<OutboxRow[]> {
    const { OUTBOX_BATCH_SIZE: batch, OUTBOX_CLAIM_LEASE_MS: leaseMs } = this.ctx.config;
    return inTransaction(this.ctx.db, async (tx) => {
      const claimed = await rows<OutboxRow>(
        tx.query(
          `SELECT id, activity_id, sku_id, reservation_id, quantity FROM stock_sync_outbox
            WHERE status = ${OutboxStatus.PENDING} AND (attempts = 0 OR updated_at < NOW(3) - INTERVAL ? SECOND)
            ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED`,
          [leaseMs / 1000],
        ),
      );
      if (claimed.length === 0) return [];
      await tx.query(
        `UPDATE stock_sync_outbox SET attempts = attempts + 1, updated_at = NOW(3) WHERE id IN (${claimed
          .map(() => '?')
          .join(', ')})`,
        claimed.map((r) => r.id),
      );
      return claimed;
    });
  }

  /** Applies one claimed row to Redis. */
  async refill(row: OutboxRow): Promise<RefillResult> {
    const sale = await this.ctx.catalog.resolve(String(row.activity_id));
    return this.ctx.stock.sales.refill(sale, { reservationId: row.reservation_id, quantity: Number(row.quantity) });
  }

  async markDone(row: OutboxRow): Promise<void> {
    await this.ctx.db.execute(
      `UPDATE stock_sync_outbox SET status = ${OutboxStatus.DONE}, updated_at = NOW(3)
        WHERE id = ? AND status = ${OutboxStatus.PENDING}`,
      [row.id],
    );
  }

  async runOnce(): Promise<OutboxRound> {
    const rows = await this.claim();
    const round: OutboxRound = { claimed: rows.length, refilled: 0, already: 0, notWarmed: 0 };
    const backOnSale = new Map<string, boolean>(); // activity → stock was 0 before a refill
    for (const row of rows) {
      const refilled = await this.refill(row);
      if (refilled.kind === 'not_warmed') {
        round.notWarmed++;
        this.ctx.log.warn(
          { activityId: String(row.activity_id), reservationId: row.reservation_id },
          'refill waits: Redis has no stock for this sale (run recover)',
        );
        continue;
      }
      if (refilled.kind === 'refilled') round.refilled++;
      else round.already++;
      await this.markDone(row);
      const activityId = String(row.activity_id);
      const { stock } = refilled;
      const fromZero = refilled.kind === 'refilled' && stock - Number(row.quantity) <= 0;
      if (stock > 0) backOnSale.set(activityId, (backOnSale.get(activityId) ?? false) || fromZero);
    }
    if (round.refilled > 0) this.ctx.metrics.orderTransitions.inc({ transition: 'refill' }, round.refilled);
    for (const [activityId, fromZero] of backOnSale) this.backOnSale(activityId, fromZero);
    return round;
  }

  /** Clears the sold-out flag here and at the other origins (pub/sub), and tells the edge. */
  private backOnSale(activityId: string, fromZero: boolean): void {
    if (this.ctx.publisher.setSoldOut(activityId, false)) return; // a transition publishes
    // No flag here, but the edge may have set its own from a sold_out answer: push the snapshot.
    if (!fromZero) return;
    void this.ctx.publisher.publish(activityId).catch(() => undefined);
  }
}
