/**
 * The timeout job (docs/design.md §6): PENDING orders past expire_at become TIMEOUT(2), and in the SAME
 * transaction their units go back to MySQL (`available += q`), a REFILL stock-log row (unique per
 * reservation by uk_biz_change) and a stock_sync_outbox row are written; the outbox worker then
 * puts the units back in Redis. With ORDER_EVENTS_URL set, an `order.timed_out` event per order too.
 *
 * Safe with many origins: candidates come from a plain read of idx_status_expire (LIMIT batch);
 * they are then locked by primary key in ascending order (two jobs queue rather than deadlock; a
 * payment locks one row only) and changed by the conditional update `status = PENDING AND expire_at <
 * NOW(3)`: a row paid or timed out by someone else in between is no longer a candidate.
 */
import type { OriginContext } from '../context.js';
import { recordOrderEventsOf } from './order-events.js';
import { inTransaction } from '../platform/db/pool.js';
import { retryOnDeadlock } from '../platform/db/deadlock.js';
import { PeriodicJob } from '../platform/periodic.js';
import { affected, rows } from '../platform/db/rows.js';
import { OrderStatus } from '../platform/db/statuses.js';

/** What the timeout job uses of the context (the SettlerDeps pattern): MySQL, settings, log, metrics. */
export type TimeoutJobDeps = Pick<OriginContext, 'config' | 'db' | 'log' | 'metrics'>;

interface Expired {
  id: string;
  reservation_id: string;
  activity_id: string;
  sku_id: string;
  quantity: number;
}

export class TimeoutJob extends PeriodicJob {
  /** Called after a round timed orders out (the outbox worker's wake). */
  onTimedOut: (count: number) => void = () => {};

  constructor(private readonly ctx: TimeoutJobDeps) {
    super('timeout', ctx.config.TIMEOUT_SCAN_MS, ctx.log);
  }

  async round(): Promise<boolean> {
    const limit = this.ctx.config.TIMEOUT_BATCH_SIZE;
    const candidates = await rows<{ id: string }>(
      this.ctx.db.query(
        `SELECT id FROM seckill_order WHERE status = ${OrderStatus.PENDING} AND expire_at < NOW(3)
          ORDER BY expire_at LIMIT ${limit}`,
      ),
    );
    if (candidates.length === 0) return false;
    const ids = candidates
      .map((r) => String(r.id))
      .sort((a, b) => {
        const d = BigInt(a) - BigInt(b);
        return d < 0n ? -1 : d > 0n ? 1 : 0;
      });
    const timedOut = await retryOnDeadlock(this.ctx.config.LIFECYCLE_TX_RETRIES, () => this.timeOut(ids));
    if (timedOut > 0) {
      this.ctx.metrics.orderTransitions.inc({ transition: 'timeout' }, timedOut);
      this.ctx.log.info({ timedOut }, 'orders timed out; units back in MySQL, refills queued');
      this.onTimedOut(timedOut);
    }
    return candidates.length === limit;
  }

  /** One transaction: the conditional updates, then the stock, log and outbox rows of the winners. */
  private timeOut(ids: string[]): Promise<number> {
    return inTransaction(this.ctx.db, async (tx) => {
      // Lock the candidates (primary key, ascending) and keep those still PENDING and expired; the
      // conditional UPDATE below then changes exactly them.
      const marks = ids.map(() => '?').join(', ');
      const locked = await rows<Expired & { status: number; expired: number }>(
        tx.query(
          `SELECT id, reservation_id, activity_id, sku_id, quantity, status, expire_at < NOW(3) AS expired
             FROM seckill_order WHERE id IN (${marks}) ORDER BY id FOR UPDATE`,
          ids,
        ),
      );
      const won: Expired[] = locked.filter((o) => Number(o.status) === OrderStatus.PENDING && Number(o.expired) === 1);
      if (won.length === 0) return 0;
      const changed = await affected(
        tx.query(
          `UPDATE seckill_order SET status = ${OrderStatus.TIMEOUT}, updated_at = NOW(3)
            WHERE id IN (${won.map(() => '?').join(', ')}) AND status = ${OrderStatus.PENDING} AND expire_at < NOW(3)`,
          won.map((o) => o.id),
        ),
      );
      if (changed !== won.length) throw new Error(`timeout update changed ${changed} of ${won.length} locked orders`);
      const units = new Map<string, { activityId: string; skuId: string; quantity: number }>();
      for (const o of won) {
        const key = `${o.activity_id}:${o.sku_id}`;
        const entry = units.get(key) ?? { activityId: String(o.activity_id), skuId: String(o.sku_id), quantity: 0 };
        entry.quantity += Number(o.quantity);
        units.set(key, entry);
      }
      for (const key of [...units.keys()].sort()) {
        const u = units.get(key)!;
        await tx.execute(
          `UPDATE seckill_stock SET available = available + ?, updated_at = CURRENT_TIMESTAMP(3)
            WHERE activity_id = ? AND sku_id = ?`,
          [u.quantity, u.activityId, u.skuId],
        );
      }
      const moved = won.map((o) => [o.activity_id, o.sku_id, o.reservation_id, Number(o.quantity)]);
      const values = won.map(() => '(?, ?, ?, ?, ?)').join(', ');
      await tx.query(
        `INSERT INTO seckill_stock_log (activity_id, sku_id, biz_id, quantity, change_type) VALUES ${values}`,
        moved.flatMap((r) => [...r, 'REFILL']),
      );
      await tx.query(
        `INSERT INTO stock_sync_outbox (activity_id, sku_id, reservation_id, quantity, kind) VALUES ${values}`,
        moved.flatMap((r) => [...r, 'REFILL']),
      );
      if (this.ctx.config.ORDER_EVENTS_URL)
        await recordOrderEventsOf(tx, 'order.timed_out', { ids: won.map((o) => String(o.id)) });
      return won.length;
    });
  }
}
