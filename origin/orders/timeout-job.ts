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
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { LEDGERS, orderEventsOn, transitionsOf, type Ledger } from './ledger.js';
import { recordOrderEventsOf } from './order-event-store.js';
import { inTransaction } from '../platform/db/pool.js';
import { retryOnDeadlock } from '../platform/db/deadlock.js';
import { PeriodicJob } from '../platform/periodic.js';
import { OrderStatus } from './order-status.js';
import { expiredPendingIds, lockOrdersById, markTimedOut } from './order-store.js';
import { queueRefills } from './refill-outbox-store.js';
import { addAvailable, logRefills } from './stock-row-store.js';

/** What the timeout job uses (the SettlerDeps pattern): MySQL, its settings, log, metrics. */
export interface TimeoutJobDeps {
  db: Db;
  log: Logger;
  metrics: Metrics;
  config: Pick<
    OriginConfig,
    'TIMEOUT_SCAN_MS' | 'TIMEOUT_BATCH_SIZE' | 'LIFECYCLE_TX_RETRIES' | 'ORDER_EVENTS_URL' | 'SHADOW_ORDER_EVENTS_URL'
  >;
}

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

  constructor(private readonly deps: TimeoutJobDeps) {
    super('timeout', deps.config.TIMEOUT_SCAN_MS, deps.log);
  }

  /** A round over each ledger (real and shadow orders, origin/orders/ledger.ts), each on its own. */
  async round(): Promise<boolean> {
    let more = false;
    for (const ledger of LEDGERS) more = (await this.roundOf(ledger)) || more;
    return more;
  }

  private async roundOf(ledger: Ledger): Promise<boolean> {
    const limit = this.deps.config.TIMEOUT_BATCH_SIZE;
    const candidates = await expiredPendingIds(this.deps.db, ledger, limit);
    if (candidates.length === 0) return false;
    const ids = [...candidates].sort((a, b) => {
      const d = BigInt(a) - BigInt(b);
      return d < 0n ? -1 : d > 0n ? 1 : 0;
    });
    const timedOut = await retryOnDeadlock(this.deps.config.LIFECYCLE_TX_RETRIES, () => this.timeOut(ledger, ids));
    if (timedOut > 0) {
      transitionsOf(this.deps.metrics, ledger).inc({ transition: 'timeout' }, timedOut);
      this.deps.log.info({ timedOut }, 'orders timed out; units back in MySQL, refills queued');
      this.onTimedOut(timedOut);
    }
    return candidates.length === limit;
  }

  /** One transaction: the conditional updates, then the stock, log and outbox rows of the winners. */
  private timeOut(ledger: Ledger, ids: string[]): Promise<number> {
    return inTransaction(this.deps.db, async (tx) => {
      // Lock the candidates (primary key, ascending) and keep those still PENDING and expired; the
      // conditional UPDATE below then changes exactly them.
      const locked = await lockOrdersById(tx, ledger, ids);
      const won: Expired[] = locked.filter((o) => Number(o.status) === OrderStatus.PENDING && Number(o.expired) === 1);
      if (won.length === 0) return 0;
      const changed = await markTimedOut(
        tx,
        ledger,
        won.map((o) => o.id),
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
        await addAvailable(tx, u, u.quantity);
      }
      const moved = won.map((o) => ({
        activityId: o.activity_id,
        skuId: o.sku_id,
        reservationId: o.reservation_id,
        quantity: Number(o.quantity),
      }));
      await logRefills(tx, ledger, moved);
      await queueRefills(tx, ledger, moved);
      if (orderEventsOn(this.deps.config, ledger))
        await recordOrderEventsOf(tx, ledger, 'order.timed_out', { ids: won.map((o) => String(o.id)) });
      return won.length;
    });
  }
}
