/**
 * Failover handling (docs/design.md §10, durability). A Redis failover under a sale — the primary serving one
 * of its slots is another node now, or the same server restarted — may have lost the last writes the
 * old primary had not passed on: reservations, acks, compensations. So the origin never trusts the
 * surviving Redis state by itself. Per warmed sale, every FAILOVER_POLL_MS:
 *
 *   detected   the identity of a bucket's primary changed (ReplicationWatch.primaries): compared with
 *              the last one seen, and for a sale newly watched with the one its state was proven on
 *              (the warm-up's load or the last recovery), so a failover while no process watched counts
 *   closed     this process answers 503 `not_ready` for the sale and pushes it paused to the edge
 *   recovering (the process that runs settlement, ORIGIN_ROLE all|consumers; failover-recovery.ts) drops
 *              the stock keys, so every origin process's script answers "not warmed", then runs recover
 *              (recover.ts): stock, holders, released, refilled rebuilt from MySQL + the surviving Stream
 *   recovered  recovery proved the state; it marks the primaries it proved the sale on (config hash)
 *   reopened   every process reopens once the marked primaries are the current ones
 *   refused    recovery could not prove the state (the Stream or its group is gone, MySQL owes more
 *              than it has): the sale stays closed, `alert: failover_unrecoverable` is logged once and
 *              counted; recovery is tried again every round, so the sale reopens by itself once the
 *              operator has repaired what blocked the proof.
 *
 * Each step is logged and counted (seckill_failover_steps_total{step}).
 *
 * With REDIS_WAIT_REPLICAS > 0 it also reads, every round, how many replicas are in sync with each
 * bucket's primary (sale/replica-layout.ts): the gauges, a warning when one more failover would
 * stall a bucket, and `alert: bucket_short_of_replicas` naming the buckets and their units when a
 * primary has fewer than REDIS_WAIT_REPLICAS (WAIT cannot confirm: those units cannot be sold). A
 * promoted replica with no replica of its own is exactly that: the failover itself is detected by
 * the primary's identity, the stall by this count.
 */
import { ContractError } from '../../contract/errors.js';
import type { OriginConfig } from '../platform/config.js';
import type { EdgePush } from '../platform/edge-push.js';
import type { Metrics } from '../platform/metrics.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { Sale } from '../redis/redis-store.js';
import { PeriodicJob } from '../platform/periodic.js';
import { describeLayout, readReplicaLayout, recordLayout, type ShortBuckets } from '../sale/replica-layout.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import type { FailoverGate } from './failover-gate.js';
import { recoverAfterFailover, samePrimaries, type FailoverRecoveryDeps } from './failover-recovery.js';

interface Watched {
  sale: Sale;
  /** Last known primary identity per bucket (null: never seen). */
  primaries: (string | null)[];
  alerted: boolean;
  /** The last replica verdict logged (buckets stalled now / one failover away), so each change logs once. */
  replicaVerdict: string;
  /** Buckets whose primary could not be asked at the last round, as logged (each change logs once). */
  unknown: string;
}

/**
 * What the watch uses: the recovering step's needs, the warmed sales, this process's failover gate
 * and short buckets, what reading the replica layout uses (sale/replica-layout.ts), and the edge
 * the snapshot is pushed to.
 */
export interface FailoverWatchDeps extends FailoverRecoveryDeps {
  metrics: Metrics;
  registry: Pick<SaleRegistry, 'warmedSales'>;
  failover: FailoverGate;
  shortBuckets: Pick<ShortBuckets, 'set'>;
  replicaLayout: ReplicaLayoutInput;
  publisher: FailoverRecoveryDeps['publisher'] & Pick<SnapshotPublisher, 'snapshot'>;
  pushEdge: EdgePush;
  config: FailoverRecoveryDeps['config'] & Pick<OriginConfig, 'FAILOVER_POLL_MS' | 'REDIS_WAIT_REPLICAS'>;
}

/** What readReplicaLayout (sale/replica-layout.ts) is handed. */
export type ReplicaLayoutInput = Parameters<typeof readReplicaLayout>[0];

/** At most this many sales are named on one 'cannot tell' / 'answering again' line (the count says the rest). */
const LOGGED_SALES = 20;

export class FailoverWatch extends PeriodicJob {
  private readonly watched = new Map<string, Watched>();
  /** Called after a sale reopened, with how long it was closed (tests measure kill → reopen with it). */
  onReopened: (activityId: string, closedMs: number) => void = () => {};

  /** `recoverer`: this process rebuilds closed sales (the settlement role); others wait for its proof. */
  constructor(
    private readonly deps: FailoverWatchDeps,
    private readonly recoverer: boolean,
  ) {
    super('failover-watch', deps.config.FAILOVER_POLL_MS, deps.log);
  }

  async round(): Promise<boolean> {
    const registered = await this.deps.registry.warmedSales().catch(() => null);
    for (const sale of registered ?? [])
      if (!this.watched.has(sale.activityId))
        this.watched.set(sale.activityId, {
          sale,
          primaries: Array<string | null>(sale.buckets).fill(null),
          alerted: false,
          replicaVerdict: '',
          unknown: '',
        });
    await Promise.all([...this.watched.values()].map((w) => this.seedFromProof(w)));
    const primaries = await this.deps.replication.primaries([...this.watched.values()].map((w) => w.sale));
    const unanswered: Record<string, string> = {};
    const answering: string[] = [];
    for (const [activityId, w] of this.watched) {
      try {
        const now = primaries.get(activityId)!;
        // Said, not silent: a bucket whose primary cannot be asked is one the watch cannot vouch for.
        const unknown = now.flatMap((p, b) => (p === null ? [b] : [])).join(',');
        if (unknown !== w.unknown) {
          w.unknown = unknown;
          if (unknown) unanswered[activityId] = unknown;
          else answering.push(activityId);
        }
        await this.check(activityId, w, now);
      } catch (err) {
        this.log.warn({ activityId, err: (err as Error).message }, 'failover check failed; will retry');
      }
    }
    this.logAnswers(unanswered, answering);
    // After the failover checks, so that a slow reading here never delays closing a sale.
    if (this.deps.config.REDIS_WAIT_REPLICAS > 0)
      for (const [activityId, w] of this.watched)
        await this.watchReplicas(activityId, w).catch((err) =>
          this.log.warn({ activityId, err: (err as Error).message }, 'replica check failed; will retry'),
        );
    // A sale cleaned up (gone from the registry) is no longer watched — unless it is closed: a
    // failover may have lost the registry entry too.
    if (registered)
      for (const activityId of this.watched.keys())
        if (!registered.some((s) => s.activityId === activityId) && !this.deps.failover.isClosed(activityId))
          this.watched.delete(activityId);
    return false;
  }

  /**
   * A bucket whose primary this process has not seen yet is compared with the primary the sale's
   * state was last proven on — the warm-up's load (lua/warmup-4.lua) or a failover recovery — so a
   * failover before this process first saw the bucket (an origin started after one, or its first
   * questions unanswered) is a change too. Read only while some bucket is unseen; nothing recorded
   * (a sale warmed before this field existed) or not readable now: the first answer is taken as it is.
   */
  private async seedFromProof(w: Watched): Promise<void> {
    if (!w.primaries.includes(null)) return;
    const proven = await this.deps.replication.provenPrimaries(w.sale).catch(() => null);
    proven?.forEach((p, b) => {
      if (w.primaries[b] === null) w.primaries[b] = p;
    });
  }

  /**
   * One line a round for the sales whose buckets stopped (or started again) answering, not one per
   * sale: on one Redis a single unanswered question concerns every watched sale at once.
   */
  private logAnswers(unanswered: Record<string, string>, answering: string[]): void {
    const ids = Object.keys(unanswered);
    if (ids.length > 0) {
      const buckets = Object.fromEntries(ids.slice(0, LOGGED_SALES).map((id) => [id, unanswered[id]]));
      this.log.warn(
        { sales: ids.length, buckets, ...(ids.length > LOGGED_SALES ? { more: ids.length - LOGGED_SALES } : {}) },
        'failover: cannot tell which primary serves these buckets',
      );
    }
    if (answering.length > 0)
      this.log.warn(
        { sales: answering.length, activityIds: answering.slice(0, LOGGED_SALES) },
        'failover: every bucket has a primary answering again',
      );
  }

  private async check(activityId: string, w: Watched, now: (string | null)[]): Promise<void> {
    const changed = now.some((p, b) => p !== null && w.primaries[b] !== null && p !== w.primaries[b]);
    now.forEach((p, b) => {
      if (p !== null) w.primaries[b] = p;
    });
    if (changed) await this.close(activityId, w, now);
    if (!this.deps.failover.isClosed(activityId)) return;
    // Cannot tell who serves every bucket yet (the cluster still electing): wait.
    if (now.some((p) => p === null)) return;
    if (samePrimaries(await this.deps.replication.provenPrimaries(w.sale), now)) return this.reopen(activityId);
    if (this.recoverer) await this.recover(activityId, w, now as string[]);
  }

  /** The replica rule on this round's reading: gauges, public state, one log line per change. */
  private async watchReplicas(activityId: string, w: Watched): Promise<void> {
    const layout = await readReplicaLayout(this.deps.replicaLayout, w.sale);
    recordLayout(this.deps.metrics, activityId, layout);
    const stranded = layout.shortNow.reduce((sum, b) => sum + layout.buckets[b]!.units, 0);
    // Units nobody can buy leave the units left (and may make the sale show paused): tell the edge.
    if (this.deps.shortBuckets.set(activityId, stranded)) await this.pushEdge(activityId);
    // Which buckets, on which primary, with how many replicas (not their units, which move with every sale).
    const verdict = JSON.stringify([
      layout.stallsOnOneFailover.map((b) => [b, layout.buckets[b]!.node, layout.buckets[b]!.inSync]),
      layout.shortNow,
    ]);
    if (verdict === w.replicaVerdict) return;
    const first = w.replicaVerdict === '';
    w.replicaVerdict = verdict;
    const buckets = layout.buckets.filter((b) => layout.stallsOnOneFailover.includes(b.bucket));
    if (layout.shortNow.length > 0)
      this.log.error(
        {
          alert: 'bucket_short_of_replicas',
          activityId,
          buckets: buckets.filter((b) => layout.shortNow.includes(b.bucket)),
          units: stranded,
          waitReplicas: layout.waitReplicas,
        },
        `failover: ${describeLayout(layout)}`,
      );
    else if (layout.stallsOnOneFailover.length > 0)
      this.log.warn({ activityId, buckets, waitReplicas: layout.waitReplicas }, `failover: ${describeLayout(layout)}`);
    else if (!first) this.log.warn({ activityId }, `failover: replicas back: ${describeLayout(layout)}`);
  }

  private async close(activityId: string, w: Watched, primaries: (string | null)[]): Promise<void> {
    this.deps.metrics.failoverSteps.inc({ step: 'detected' });
    this.log.warn({ activityId, primaries }, 'failover: the Redis primary under this sale changed');
    if (!this.deps.failover.close(activityId)) return;
    w.alerted = false;
    this.deps.metrics.failoverClosed.set({ activity: activityId }, 1);
    this.log.warn({ activityId }, 'failover: sale closed (503 not_ready) until recovery proves its state');
    await this.pushEdge(activityId);
  }

  private async recover(activityId: string, w: Watched, primaries: string[]): Promise<void> {
    this.deps.metrics.failoverSteps.inc({ step: 'recovering' });
    this.log.warn({ activityId }, 'failover: recovering the sale from MySQL and the surviving Stream');
    try {
      const outcome = await recoverAfterFailover(this.deps, w.sale, primaries);
      if (outcome.kind === 'proven_elsewhere')
        this.log.warn({ activityId }, 'failover: another origin process recovered the sale meanwhile');
      if (outcome.kind !== 'recovered') return;
      this.deps.metrics.failoverSteps.inc({ step: 'recovered' });
      this.log.warn({ ...outcome.result }, 'failover: recovery proved the sale state');
    } catch (err) {
      if (!(err instanceof ContractError)) throw err;
      // The lock not got in time: another process is still at it; the next round looks again.
      if (err.code === 'busy') return void this.log.warn({ activityId }, `failover: ${err.message}`);
      if (!w.alerted) {
        w.alerted = true;
        this.deps.metrics.failoverSteps.inc({ step: 'refused' });
        this.log.error(
          { activityId, reason: err.message },
          'alert: failover_unrecoverable — the sale stays closed until its state can be proven',
        );
      }
    }
  }

  private async reopen(activityId: string): Promise<void> {
    const since = this.deps.failover.closedSince(activityId) ?? Date.now();
    this.deps.failover.open(activityId);
    const closedMs = Date.now() - since;
    this.deps.metrics.failoverSteps.inc({ step: 'reopened' });
    this.deps.metrics.failoverClosed.set({ activity: activityId }, 0);
    this.deps.metrics.failoverClosedSeconds.observe(closedMs / 1000);
    this.log.warn({ activityId, closedMs }, 'failover: sale reopened');
    await this.pushEdge(activityId);
    this.onReopened(activityId, closedMs);
  }

  private async pushEdge(activityId: string): Promise<void> {
    const snapshot = await this.deps.publisher.snapshot(activityId).catch(() => null);
    if (snapshot) await this.deps.pushEdge(snapshot).catch(() => undefined);
  }
}
