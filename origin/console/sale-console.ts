/**
 * What the operator console reads (origin/console/, served by console-routes.ts): the sales
 * list and one sale's live view. Only reads; every action of the console is a call to the existing
 * admin API, so each rule and its log line stay in one place.
 */
import { publicState } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import { findActivity, saleOf } from '../sale/sale-store.js';
import { orderCountsOfSales } from '../orders/order-store.js';
import type { Db } from '../platform/db/pool.js';
import type { Metrics } from '../platform/metrics.js';
import type { FailoverGate } from '../recovery/failover-gate.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SaleStreams } from '../redis/sale-streams.js';
import { latestSales } from '../sale/sale-store.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import { edgeActivity, edgeWaitingLine, type EdgeViewDeps } from '../watch/edge-view.js';
import { readFunnel, readSignals, waitingLineMetric, type LoopDelay } from './sale-signals.js';

/**
 * What the console reads: MySQL, each sale's snapshot, Redis's buckets and Stream group, this
 * process's metrics registry and failover gate, and the edge (what it serves, its waiting line).
 */
export interface SaleConsoleDeps extends EdgeViewDeps {
  db: Db;
  publisher: Pick<SnapshotPublisher, 'snapshot'>;
  sales: Pick<SaleStock, 'warmState'>;
  streams: Pick<SaleStreams, 'groupInfo'>;
  metrics: Pick<Metrics, 'registry'>;
  failover: Pick<FailoverGate, 'closedSince'>;
}

/** The sales list shows the most recently created ones. */
export const SALES_LIST_LIMIT = 100;

export async function listSales(deps: Pick<SaleConsoleDeps, 'db' | 'publisher'>) {
  const sales = await latestSales(deps.db, SALES_LIST_LIMIT);
  const ids = sales.map((s) => String(s.id));
  const counts = await orderCountsOfSales(
    deps.db,
    sales.map((s) => ({ activityId: String(s.id), shadow: Number(s.shadow) === 1 })),
  );
  const byId = new Map(counts.map((c) => [String(c.activity_id), c]));
  const now = Date.now();
  const snapshots = await Promise.all(ids.map((id) => deps.publisher.snapshot(id).catch(() => null)));
  return {
    serverTime: new Date(now).toISOString(),
    sales: sales.map((s, i) => {
      const c = byId.get(String(s.id));
      const paid = Number(c?.paid ?? 0);
      const pending = Number(c?.pending ?? 0);
      const timedOut = Number(c?.timeout ?? 0);
      const snapshot = snapshots[i];
      return {
        activityId: String(s.id),
        title: s.title,
        /** A shadow (rehearsal) sale: its orders are in the shadow tables. */
        shadow: Number(s.shadow) === 1,
        startsAt: s.starts_at.toISOString(),
        endsAt: s.ends_at.toISOString(),
        state: s.state,
        publicState: snapshot ? publicState(snapshot, now) : null,
        warmupStatus: s.warmup_status,
        stock: Number(s.initial_stock),
        /** Units left in Redis (null: not warm). */
        left: snapshot?.units?.left ?? null,
        heldBack: Number(s.held_back),
        orders: paid + pending + timedOut,
        paid,
        timedOut,
      };
    }),
  };
}

/** One sale, everything the console's live screen shows that the admin API does not already answer. */
export async function liveView(deps: SaleConsoleDeps, loop: LoopDelay, activityId: string) {
  const record = await findActivity(deps.db, activityId);
  if (!record) throw new ContractError('not_found', `activity ${activityId} does not exist`);
  const sale = saleOf(record);
  const queue = record.config.overflow === 'queue';
  // Redis failing is when the operator most needs this view: its Redis reads give up to null (the
  // error said in `redis`), and the rest — MySQL, the metrics, the banners — is still answered.
  let redisError: string | null = null;
  const fromRedis = <T>(read: Promise<T>): Promise<T | null> =>
    read.catch((err: Error) => {
      redisError ??= err.message;
      return null;
    });
  const [snapshot, warm, stream, signals, funnel, edge, lineAtEdge, lineMetric] = await Promise.all([
    deps.publisher.snapshot(activityId),
    fromRedis(deps.sales.warmState(sale)),
    fromRedis(deps.streams.groupInfo(sale)),
    readSignals(deps.metrics.registry, loop),
    readFunnel(deps.metrics.registry, activityId),
    edgeActivity(deps, activityId),
    queue ? edgeWaitingLine(deps, activityId) : Promise.resolve(null),
    waitingLineMetric(deps.metrics.registry, activityId),
  ]);
  if (!snapshot) throw new ContractError('not_found', `activity ${activityId} does not exist`);
  const now = Date.now();
  const closedSince = deps.failover.closedSince(activityId);
  return {
    activityId,
    serverTime: new Date(now).toISOString(),
    config: record.config,
    /** A shadow (rehearsal) sale: shadow tokens only, its orders in the shadow tables. */
    shadow: record.shadow,
    state: record.state,
    publicState: publicState(snapshot, now),
    soldOut: snapshot.soldOut,
    units: snapshot.units ?? null,
    stock: { initial: record.initialStock, available: record.available, heldBack: record.heldBack },
    warmupStatus: record.warmupStatus,
    buckets: (warm?.stocks ?? []).map((s, bucket) => ({ bucket, key: s.key, units: s.value })),
    /** The first Redis read that failed for this view (its buckets and Stream then unknown), or null. */
    redis: { error: redisError as string | null },
    /** The waiting line: the edge's own count for a queue sale, else its gauge when exported; 0 when rejecting. */
    waitingLine: queue ? (lineAtEdge ?? lineMetric) : (lineMetric ?? 0),
    signals: { ...signals, stream: stream ?? { pending: null, lag: null } },
    funnel,
    failover: { closed: closedSince !== undefined, since: closedSince ? new Date(closedSince).toISOString() : null },
    /** The version MySQL has now and what the edge serves: equal once the last change is in force there. */
    edge: { ...edge, originVersion: record.config.version },
  };
}
