/**
 * Scheduled warm-up (docs/design.md §10, the seeds: a full warm-up 10 minutes before, a verifying one 1
 * minute before). Every WARMUP_SCAN_MS:
 *   - an activity within WARMUP_LEAD_SECONDS of its start (or past it, not ended, not stopped) whose
 *     warm-up is `pending` is warmed (the same warm-up as the admin call: never resets a sale);
 *   - a `warmed` activity within WARMUP_VERIFY_SECONDS of its start, not yet started, is verified
 *     (operator/warmup-check.ts). A mismatch that persists over the reconciliation's re-reads logs
 *     `alert: warmup_mismatch`, counts in seckill_warmup_mismatches_total and pauses the sale, so it
 *     stays closed until an operator acts (docs/operations.md).
 * A sale that started before it could be verified is left to the periodic reconciliation: pausing a
 * live sale on a figure read mid-flight would do more harm than the check prevents.
 *
 * Safe with several origins: each step is claimed by a conditional UPDATE of `warmup_status`
 * (whoever changes the row owns the step), with a lease (WARMUP_CLAIM_LEASE_MS) so a step claimed
 * by an origin that died is claimed again.
 */
import { setState, warmup, type ActivityOperationsDeps } from './operations.js';
import { verifyWarmup, type WarmupCheckDeps, type WarmupVerification } from './warmup-check.js';
import type { OriginConfig } from '../platform/config.js';
import type { Metrics } from '../platform/metrics.js';
import { ActivityState, WarmupStatus } from '../sale/sale-status.js';
import { claimWarmupStep, finishWarmupVerification, salesDueForWarmup } from '../sale/warmup-store.js';
import { PeriodicJob } from '../platform/periodic.js';

/** The warm-up and the check it schedules, its counters, and its timing settings. */
export type WarmupJobDeps = ActivityOperationsDeps &
  WarmupCheckDeps & {
    metrics: Pick<Metrics, 'warmups' | 'warmupMismatches'>;
    config: Pick<
      OriginConfig,
      | 'WARMUP_SCAN_MS'
      | 'WARMUP_LEAD_SECONDS'
      | 'WARMUP_VERIFY_SECONDS'
      | 'WARMUP_CLAIM_LEASE_MS'
      | 'RECONCILE_CONFIRM_RUNS'
      | 'RECONCILE_CONFIRM_DELAY_MS'
    >;
  };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BATCH = 100;

export class WarmupJob extends PeriodicJob {
  constructor(private readonly deps: WarmupJobDeps) {
    super('warmup', deps.config.WARMUP_SCAN_MS, deps.log);
  }

  async round(): Promise<boolean> {
    const now = Date.now();
    const { WARMUP_LEAD_SECONDS: lead, WARMUP_VERIFY_SECONDS: verify } = this.deps.config;
    const { PENDING, WARMING, WARMED, VERIFYING } = WarmupStatus;
    for (const activityId of await this.due(PENDING, WARMING, now + lead * 1000, now)) {
      if (await this.claim(activityId, PENDING, WARMING)) await this.warm(activityId);
    }
    for (const activityId of await this.due(WARMED, VERIFYING, now + verify * 1000, now, { notStarted: true })) {
      if (await this.claim(activityId, WARMED, VERIFYING)) await this.verify(activityId);
    }
    return false;
  }

  /** Activities in step `from` (or stuck in `claimed` past the lease) starting before `startsBefore`. */
  private async due(
    from: WarmupStatus,
    claimed: WarmupStatus,
    startsBefore: number,
    now: number,
    { notStarted = false }: { notStarted?: boolean } = {},
  ) {
    return salesDueForWarmup(this.deps.db, {
      from,
      claimed,
      now: new Date(now),
      startsBefore: new Date(startsBefore),
      ...(notStarted ? { startsAfter: new Date(now) } : {}),
      leaseExpired: new Date(now - this.deps.config.WARMUP_CLAIM_LEASE_MS),
      limit: BATCH,
    });
  }

  /** The conditional claim: true for exactly one origin. */
  private async claim(activityId: string, from: WarmupStatus, to: WarmupStatus): Promise<boolean> {
    const leaseExpired = new Date(Date.now() - this.deps.config.WARMUP_CLAIM_LEASE_MS);
    return claimWarmupStep(this.deps.db, activityId, from, to, leaseExpired);
  }

  private async warm(activityId: string): Promise<void> {
    try {
      const result = await warmup(this.deps, activityId); // sets warmup_status = 'warmed'
      this.deps.metrics.warmups.inc({ outcome: WarmupStatus.WARMED });
      this.deps.log.info({ activityId, stock: result.stock, loaded: result.loaded }, 'scheduled warm-up done');
    } catch (err) {
      // Left 'warming': claimed again after the lease.
      this.deps.metrics.warmups.inc({ outcome: 'failed' });
      this.deps.log.error(
        { activityId, err: (err as Error).message },
        'scheduled warm-up failed; retried after the lease',
      );
    }
  }

  private async verify(activityId: string): Promise<void> {
    let result: WarmupVerification;
    try {
      result = await this.confirmed(activityId);
    } catch (err) {
      this.deps.metrics.warmups.inc({ outcome: 'failed' });
      this.deps.log.error(
        { activityId, err: (err as Error).message },
        'warm-up verification could not run; retried after the lease',
      );
      return;
    }
    const status = result.ok ? WarmupStatus.VERIFIED : WarmupStatus.MISMATCH;
    await finishWarmupVerification(this.deps.db, activityId, status);
    this.deps.metrics.warmups.inc({ outcome: status });
    if (result.ok) {
      this.deps.log.info({ activityId }, 'warm-up verified');
      return;
    }
    this.deps.metrics.warmupMismatches.inc();
    this.deps.log.error(
      { alert: 'warmup_mismatch', activityId, failing: result.checks.filter((c) => !c.ok), figures: result.figures },
      'warm-up verification failed: the sale is paused until an operator acts',
    );
    await setState(this.deps, activityId, ActivityState.PAUSED, 'warmup-verify').catch((err) =>
      this.deps.log.error(
        { activityId, err: (err as Error).message },
        'could not pause the sale after a warm-up mismatch',
      ),
    );
  }

  /** Re-reads a mismatch like the reconciliation job does before it alarms. */
  private async confirmed(activityId: string): Promise<WarmupVerification> {
    const { RECONCILE_CONFIRM_RUNS: runs, RECONCILE_CONFIRM_DELAY_MS: delay } = this.deps.config;
    let result = await verifyWarmup(this.deps, activityId);
    for (let run = 1; run < runs && !result.ok; run++) {
      await sleep(delay);
      result = await verifyWarmup(this.deps, activityId);
    }
    return result;
  }
}
