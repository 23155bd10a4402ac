/**
 * The one place that builds an activity's snapshot as the edge sees it (docs/design.md §9, §10: MySQL
 * config and switch, units left, sold out when the flag is set or Redis has `soldOutThreshold` units
 * or fewer left; a lottery's public draw) and pushes it to the edge. Operations that change what the edge
 * should show call `publish`, or `setSoldOut` when they set or clear the sold-out flag.
 */
import type { ActivitySnapshot, DrawPublic } from '../../contract/activity.js';
import type { Db } from '../platform/db/pool.js';
import type { EdgePush } from '../platform/edge-push.js';
import type { ShortBuckets } from './replica-layout.js';
import type { Logger } from '../platform/logger.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SoldOutFlags } from './sold-out.js';
import { findActivity, saleOf } from './sale-store.js';

export interface SnapshotPublisherDeps {
  db: Db;
  stock: Pick<SaleStock, 'stock'>;
  soldOut: Pick<SoldOutFlags, 'has' | 'set'>;
  log: Logger;
  pushEdge: EdgePush;
  /**
   * Sales closed after a Redis failover (recovery/failover-watch.ts, FailoverGate): the edge shows them
   * paused until recovery reopens them. Stated here, not imported: the failover watch's recovery
   * imports this feature, and the gate's one question is all the publisher asks.
   */
  failover: { isClosed(activityId: string): boolean };
  /** Units in buckets short of replicas: not for sale until an operator acts (sale/replica-layout.ts). */
  shortBuckets: Pick<ShortBuckets, 'unitsOf'>;
  /** A lottery's public draw (lottery/draw-store.ts), as the composition root wires it: the lottery sits above the sale. */
  publicDraw(activityId: string): Promise<DrawPublic | null>;
}

export class SnapshotPublisher {
  constructor(private readonly deps: SnapshotPublisherDeps) {}

  /** The activity as the edge should see it, or null when MySQL does not know it. */
  async snapshot(activityId: string): Promise<ActivitySnapshot | null> {
    const record = await findActivity(this.deps.db, activityId);
    if (!record) return null;
    const { config, state } = record;
    const held = await this.deps.stock.stock(saleOf(record)).catch(() => null);
    // Units in a bucket whose primary is short of replicas cannot be promised to anyone: not left.
    const stranded = held === null ? 0 : Math.min(held, this.deps.shortBuckets.unitsOf(activityId));
    const left = held === null ? null : held - stranded;
    const soldOut = this.deps.soldOut.has(activityId) || (left !== null && left <= (config.soldOutThreshold ?? 0));
    const units =
      left === null ? undefined : { left: Math.max(0, left), onSale: record.initialStock - record.heldBack };
    const draw = config.admission === 'lottery' ? await this.deps.publicDraw(activityId) : null;
    return {
      config,
      // Closed after a failover: the edge shows it paused until recovery reopens it. Nothing left but
      // stranded units: paused too (they are neither for sale nor sold; the operator decides).
      state: this.deps.failover.isClosed(activityId) || (stranded > 0 && soldOut) ? 'paused' : state,
      soldOut,
      ...(units ? { units } : {}),
      ...(draw ? { draw } : {}),
    };
  }

  /**
   * Sets or clears the sold-out flag (here and, over pub/sub, in every origin); on a transition logs
   * it and publishes without waiting. When cleared the sale may still be sold out by the threshold:
   * the snapshot says which. True when this was a transition (else the caller may still publish).
   */
  setSoldOut(activityId: string, soldOut: boolean): boolean {
    if (!this.deps.soldOut.set(activityId, soldOut)) return false;
    this.deps.log.info({ activityId, soldOut }, soldOut ? 'sold out' : 'stock back on sale');
    void this.publish(activityId).catch(() => undefined);
    return true;
  }

  /** Builds the snapshot and pushes it (best effort, see edge-push.ts); `soldOut` overrides the flag just decided. */
  async publish(activityId: string, override?: { soldOut: boolean }): Promise<void> {
    const snapshot = await this.snapshot(activityId);
    if (snapshot) await this.deps.pushEdge(override ? { ...snapshot, ...override } : snapshot);
  }
}
