/**
 * The replica rule (docs/durability.md "Replicas per primary"). With REDIS_WAIT_REPLICAS = W > 0 a
 * reservation is promised only once W replicas of its bucket's primary hold it. A primary with r
 * replicas in sync (INFO replication: `state=online`, `lag` ≤ REDIS_REPLICA_MAX_LAG_SECONDS):
 *   - r < W   short now: WAIT cannot confirm, every click homed on that bucket is 503 `unavailable`
 *             and its units cannot be sold;
 *   - r ≤ W   one failover away from that: the replica promoted in its place has r − 1 < W.
 * Warm-up does not let a sale open on a layout where one failover stalls a bucket unless the operator
 * overrides it (recorded with who did it); the failover watch reads the same figures every round and
 * alerts on a bucket short now, naming it and the units it holds. With W = 0 nothing waits for
 * replicas and nothing here applies.
 */
import type { OriginConfig } from '../platform/config.js';
import type { Metrics } from '../platform/metrics.js';
import type { ReplicationWatch } from '../redis/replication-watch.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { PrimaryReplication, Sale } from '../redis/redis-store.js';

export interface BucketReplicas {
  bucket: number;
  /** `host:port` of the bucket's primary; null when it could not be asked. */
  node: string | null;
  /** Replicas in sync with that primary; null when it could not be asked (counts as short). */
  inSync: number | null;
  /** Units for sale held in the bucket now (its stock key). */
  units: number;
}

export interface ReplicaLayout {
  waitReplicas: number;
  buckets: BucketReplicas[];
  /** Buckets whose primary has ≤ W replicas in sync: one failover stalls them. */
  stallsOnOneFailover: number[];
  /** Buckets whose primary has < W replicas in sync: stalled now. */
  shortNow: number[];
  /** The operator who let the sale open on this risk (warm-up or open with acceptReplicaRisk), or null. */
  acceptedBy: string | null;
}

/** What reading the layout uses: each bucket's primary and its units in Redis, and the rule's two settings. */
export interface ReplicaLayoutDeps {
  sales: SaleStock;
  replication: ReplicationWatch;
  config: Pick<OriginConfig, 'REDIS_WAIT_REPLICAS' | 'REDIS_REPLICA_MAX_LAG_SECONDS'>;
}

export const inSync = (p: PrimaryReplication, maxLagSeconds: number) =>
  p.replicas.filter((r) => r.state === 'online' && r.lag <= maxLagSeconds).length;

/** The rule over figures already read (pure). */
export function layoutOf(
  waitReplicas: number,
  primaries: (PrimaryReplication | null)[],
  units: (number | null)[],
  maxLagSeconds: number,
  acceptedBy: string | null,
): ReplicaLayout {
  const buckets = primaries.map((p, bucket) => ({
    bucket,
    node: p?.node ?? null,
    inSync: p ? inSync(p, maxLagSeconds) : null,
    units: Math.max(0, units[bucket] ?? 0),
  }));
  const stalls = (b: BucketReplicas, spare: number) => waitReplicas > 0 && (b.inSync ?? -1) < waitReplicas + spare;
  return {
    waitReplicas,
    buckets,
    stallsOnOneFailover: buckets.filter((b) => stalls(b, 1)).map((b) => b.bucket),
    shortNow: buckets.filter((b) => stalls(b, 0)).map((b) => b.bucket),
    acceptedBy,
  };
}

export async function readReplicaLayout(deps: ReplicaLayoutDeps, sale: Sale): Promise<ReplicaLayout> {
  const { REDIS_WAIT_REPLICAS: waitReplicas, REDIS_REPLICA_MAX_LAG_SECONDS: maxLagSeconds } = deps.config;
  // Nothing waits for replicas: nothing to read.
  if (waitReplicas === 0) return layoutOf(0, [], [], 0, null);
  const [primaries, units, acceptedBy] = await Promise.all([
    deps.replication.replication(sale),
    deps.sales.bucketStocks(sale),
    deps.replication.replicaRiskAcceptedBy(sale),
  ]);
  return layoutOf(waitReplicas, primaries, units, maxLagSeconds, acceptedBy);
}

/** The sentence an operator reads (warm-up answer, verification, alert lines). */
export function describeLayout(l: ReplicaLayout): string {
  const w = l.waitReplicas;
  if (w === 0) return 'REDIS_WAIT_REPLICAS=0: reservations do not wait for replicas';
  const list = (bs: number[]) =>
    bs
      .map((b) => {
        const x = l.buckets[b]!;
        return `bucket ${b} (${x.node ?? 'primary unreachable'}: ${x.inSync ?? '?'} in sync, ${x.units} units)`;
      })
      .join(', ');
  if (l.shortNow.length > 0)
    return `stalled now: ${list(l.shortNow)} — fewer replicas in sync than REDIS_WAIT_REPLICAS=${w}, so WAIT cannot confirm and their units cannot be sold`;
  if (l.stallsOnOneFailover.length > 0)
    return `one failover would stall ${list(l.stallsOnOneFailover)}: replicas per primary ≤ REDIS_WAIT_REPLICAS=${w}; give each primary at least ${w + 1} replicas`;
  return `every bucket's primary has more than REDIS_WAIT_REPLICAS=${w} replicas in sync: one failover stalls nothing`;
}

/** The three gauges (docs/durability.md): set from every reading. */
export function recordLayout(metrics: Metrics, activityId: string, l: ReplicaLayout): void {
  metrics.redisWaitReplicas.set(l.waitReplicas);
  for (const b of l.buckets) {
    if (b.node !== null && b.inSync !== null) metrics.redisReplicasInSync.set({ node: b.node }, b.inSync);
    metrics.bucketShortOfReplicasUnits.set(
      { activity: activityId, bucket: String(b.bucket) },
      l.shortNow.includes(b.bucket) ? b.units : 0,
    );
  }
}

/**
 * Units the failover watch found in buckets short of replicas, per sale (this process's last
 * reading). The snapshot publisher takes them out of the units left, and shows the sale paused
 * when nothing else is left: units nobody can buy are neither "for sale" nor "sold out".
 */
export class ShortBuckets {
  private readonly units = new Map<string, number>();

  set(activityId: string, units: number): boolean {
    const before = this.units.get(activityId) ?? 0;
    if (units > 0) this.units.set(activityId, units);
    else this.units.delete(activityId);
    return before !== units;
  }

  unitsOf(activityId: string): number {
    return this.units.get(activityId) ?? 0;
  }
}
