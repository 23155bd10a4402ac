/**
 * Reconciles every warmed activity every RECONCILE_INTERVAL_MS (docs/design.md §6). During a live sale the
 * figures move while they are read (an entry committed but not yet acknowledged, a reservation
 * between two reads), so a mismatch is confirmed before it alarms: the activity is reconciled again
 * after RECONCILE_CONFIRM_DELAY_MS, up to RECONCILE_CONFIRM_RUNS times in all, and only a check that
 * failed every time sets `seckill_reconciliation_mismatches` and logs the alert line. Each run
 * already takes up to RECONCILE_READ_ATTEMPTS readings (reconcile.ts); a failure seen only on
 * readings during which Redis moved is "unstable, skipped": logged and counted, not alarmed.
 */
import { findActivity } from '../sale/sale-store.js';
import type { OriginConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import {
  raiseMismatch,
  reconcile,
  type MismatchAlarmDeps,
  type ReconcileDeps,
  type Reconciliation,
} from './reconcile.js';
import { PeriodicJob } from '../platform/periodic.js';

/** What the job uses: reconciliation's reads, the warmed sales, the mismatch alarm, its timings. */
export interface ReconcileJobDeps extends ReconcileDeps, MismatchAlarmDeps {
  registry: Pick<SaleRegistry, 'warmedSales'>;
  log: Logger;
  metrics: Pick<Metrics, 'reconciliationMismatches' | 'reconciliationRuns'>;
  config: Pick<
    OriginConfig,
    'RECONCILE_INTERVAL_MS' | 'RECONCILE_CONFIRM_RUNS' | 'RECONCILE_CONFIRM_DELAY_MS' | 'RECONCILE_READ_ATTEMPTS'
  >;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ReconcileJob extends PeriodicJob {
  constructor(private readonly deps: ReconcileJobDeps) {
    super('reconcile', deps.config.RECONCILE_INTERVAL_MS, deps.log);
  }

  async round(): Promise<boolean> {
    for (const { activityId } of await this.deps.registry.warmedSales()) {
      // The registry is shared by every origin on this Redis; an activity of another database is not ours.
      if (!(await findActivity(this.deps.db, activityId))) continue;
      await this.confirmed(activityId)
        .then((rec) => {
          if (rec.unstable) return this.skipped(rec);
          this.deps.metrics.reconciliationRuns.inc({ activity: activityId, result: rec.ok ? 'ok' : 'mismatch' });
          raiseMismatch(this.deps, rec);
        })
        .catch((err) =>
          this.deps.log.warn({ activityId, err: (err as Error).message }, 'reconciliation failed to run'),
        );
    }
    return false;
  }

  /**
   * The last run, with only the checks that failed in every run marked failing; `unstable` when
   * some check failed in every run but never on a reading Redis held still across (nothing proven).
   */
  async confirmed(activityId: string): Promise<Reconciliation> {
    const { RECONCILE_CONFIRM_RUNS: runs, RECONCILE_CONFIRM_DELAY_MS: delay } = this.deps.config;
    let rec = await reconcile(this.deps, activityId);
    let failing = new Set(rec.checks.filter((c) => !c.ok).map((c) => c.name));
    let proven = !rec.unstable;
    for (let run = 1; run < runs && failing.size > 0; run++) {
      await sleep(delay);
      rec = await reconcile(this.deps, activityId);
      proven ||= !rec.unstable;
      const now = new Set(rec.checks.filter((c) => !c.ok).map((c) => c.name));
      failing = new Set([...failing].filter((name) => now.has(name)));
    }
    if (failing.size === 0 && !rec.ok)
      this.deps.log.info({ activityId }, 'reconciliation differed for a moment; consistent on re-read');
    const checks = rec.checks.map((c) => ({ ...c, ok: !failing.has(c.name) }));
    return { ...rec, checks, ok: failing.size === 0, unstable: failing.size > 0 && !proven };
  }

  /** Redis moved during every reading: no alarm, the mismatch gauge keeps its last proven value. */
  private skipped(rec: Reconciliation): void {
    this.deps.metrics.reconciliationRuns.inc({ activity: rec.activityId, result: 'unstable' });
    this.deps.log.warn(
      {
        activityId: rec.activityId,
        readings: rec.readings,
        failing: rec.checks.filter((c) => !c.ok).map((c) => c.name),
      },
      'reconciliation unstable, skipped: Redis moved during every reading',
    );
  }
}
