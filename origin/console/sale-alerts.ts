/**
 * The console's alert banners (docs/console.md, "Alerts"): every failure of a sale the origin knows
 * of, each with what happened, since when and the next step, and the docs section that explains it.
 * `saleAlerts` is a pure function of the facts; `readAlertFacts` gathers them from where each is
 * known: MySQL (timed-out orders, dead letters, parked order events, the scheduled warm-up
 * verification), this process's failover gate and short-of-replicas record, the reconciliation's
 * mismatch gauge, and the console's series (backlog growth, success rate).
 *
 * Where a source keeps no time of its own, "since" is when this origin first saw the condition
 * (FirstSeen); it is forgotten when the condition clears.
 */
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { Db } from '../platform/db/pool.js';
import { projectPath } from '../platform/paths.js';
import type { FailoverGate } from '../recovery/failover-gate.js';
import type { ShortBuckets } from '../sale/replica-layout.js';
import type { SeriesView } from '../watch/sale-series.js';
import { total } from './sale-signals.js';
import { openDeadLetters, parkedOrderEvents, timedOutOrders } from './alert-facts-store.js';
import { ledgerOf } from '../orders/ledger.js';

export type AlertId =
  | 'timed_out'
  | 'warmup'
  | 'failover'
  | 'failover_reopened'
  | 'short_replicas'
  | 'reconciliation'
  | 'parked'
  | 'dead_letters'
  | 'backlog'
  | 'success_rate';

export interface SaleAlert {
  id: AlertId;
  /** critical: buyers or units are affected now; warning: needs an operator; notice: for the record. */
  level: 'critical' | 'warning' | 'notice';
  /** What happened, in words (never colour alone). */
  title: string;
  /** Since when (ISO), or null when not known. */
  since: string | null;
  /** The next step. */
  next: string;
  /** The docs section that explains it: a file of docs/ and its heading. */
  docs: { file: string; section: string; anchor: string };
}

export interface AlertFacts {
  now: number;
  timedOut: { orders: number; units: number; since: number | null };
  /** The scheduled warm-up verification's verdict (seckill_activity.warmup_status). */
  warmupStatus: string;
  failover: { closedSince: number | null; reopened: { closedAt: number; reopenedAt: number } | null };
  /** Units held in buckets whose primary is short of replicas, per bucket (0 buckets left out). */
  shortBuckets: { bucket: number | null; units: number }[];
  /** Failing reconciliation checks at the last run (seckill_reconciliation_mismatches), null when never run. */
  reconciliationFailing: number | null;
  parked: { events: number };
  deadLetters: { open: number; units: number; since: number | null };
  /** The Stream backlog now and for how many seconds it has grown without emptying. */
  backlog: { now: number | null; growingSeconds: number };
  /** Decided ÷ all answers over the last window, and the rehearsal's baseline. */
  successRate: { recent: number | null; answers: number; baseline: number | null };
}

/** The window the success rate and backlog growth are judged over by default (the alerts' own 30 s;
 * CONSOLE_ALERT_WINDOW_SECONDS). */
export const RECENT_SECONDS = 30;
/** Below this share of the baseline the success rate alerts (SuccessRateBelowBaseline). */
export const SUCCESS_ALERT_SHARE = 0.8;
/** A reopened sale's failover stays on the screen this long after the reopening. */
export const REOPENED_SHOWN_MS = 10 * 60_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const docs = (file: string, section: string): SaleAlert['docs'] => ({
  file,
  section,
  anchor: section
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-'),
});
const CONSOLE_DOCS = 'docs/console.md';
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** Remembers when each condition was first seen, for sources that keep no time of their own. */
export class FirstSeen {
  private readonly seen = new Map<string, number>();

  /** When `key` was first seen active (now if just now); forgotten once inactive. */
  since(key: string, active: boolean, now: number): number | null {
    if (!active) {
      this.seen.delete(key);
      return null;
    }
    const first = this.seen.get(key);
    if (first !== undefined) return first;
    this.seen.set(key, now);
    return now;
  }
}

/** The banners for one sale, most urgent first. */
export function saleAlerts(
  f: AlertFacts,
  seen: FirstSeen,
  activityId: string,
  windowSeconds = RECENT_SECONDS,
): SaleAlert[] {
  const out: SaleAlert[] = [];
  const firstSeen = (id: AlertId, active: boolean) => iso(seen.since(`${activityId}:${id}`, active, f.now));

  if (f.failover.closedSince !== null)
    out.push({
      id: 'failover',
      level: 'critical',
      title: 'Closed by a Redis failover: buyers are refused (not_ready) until recovery proves the sale’s state.',
      since: iso(f.failover.closedSince),
      next: 'Read the origin log’s failover lines (recovering, refused and its reason); a refusal means the Stream was lost with the old primary: recover the sale (POST /admin/activities/:id/recover), then reopen.',
      docs: docs(CONSOLE_DOCS, 'Closed by a failover'),
    });
  else if (f.failover.reopened && f.now - f.failover.reopened.reopenedAt <= REOPENED_SHOWN_MS) {
    const closedFor = (f.failover.reopened.reopenedAt - f.failover.reopened.closedAt) / 1000;
    out.push({
      id: 'failover_reopened',
      level: 'notice',
      title: `Reopened after a Redis failover: it was closed for ${closedFor.toFixed(1)} s.`,
      since: iso(f.failover.reopened.reopenedAt),
      next: 'Nothing to do if the reconciliation is clean; check it below.',
      docs: docs(CONSOLE_DOCS, 'Closed by a failover'),
    });
  }

  const shortUnits = f.shortBuckets.reduce((s, b) => s + b.units, 0);
  const shortActive = shortUnits > 0;
  const shortSince = firstSeen('short_replicas', shortActive);
  if (shortActive) {
    const where = f.shortBuckets
      .filter((b) => b.bucket !== null)
      .map((b) => `bucket ${b.bucket}: ${plural(b.units, 'unit')}`)
      .join(', ');
    out.push({
      id: 'short_replicas',
      level: 'critical',
      title: `${plural(shortUnits, 'unit')} cannot be sold: their bucket’s Redis primary has too few replicas in sync${where ? ` (${where})` : ''}.`,
      since: shortSince,
      next: 'redis-cli -h <node> INFO replication: bring the replica back, or lower REDIS_WAIT_REPLICAS knowingly.',
      docs: docs(CONSOLE_DOCS, 'A bucket short of replicas'),
    });
  }

  const rateLow =
    f.successRate.recent !== null &&
    f.successRate.baseline !== null &&
    f.successRate.recent < SUCCESS_ALERT_SHARE * f.successRate.baseline;
  const rateSince = firstSeen('success_rate', rateLow);
  if (rateLow)
    out.push({
      id: 'success_rate',
      level: 'critical',
      title: `Order success rate ${(f.successRate.recent! * 100).toFixed(1)} % over the last ${windowSeconds} s, below 80 % of the baseline (${(f.successRate.baseline! * 100).toFixed(1)} %): buyers get errors or timeouts instead of answers.`,
      since: rateSince,
      next: 'Look at Redis and MySQL pressure below; if it is this sale alone, pause it rather than let buyers retry into it.',
      docs: docs(CONSOLE_DOCS, 'Success rate below the baseline'),
    });

  const growing = f.backlog.growingSeconds >= windowSeconds;
  const growSince = firstSeen('backlog', growing);
  if (growing)
    out.push({
      id: 'backlog',
      level: 'critical',
      title: `Settlement is not keeping up: the Stream backlog has grown for ${Math.round(f.backlog.growingSeconds)} s without emptying (${plural(f.backlog.now ?? 0, 'reservation')} waiting).`,
      since: growSince,
      next: 'Is a consumer running (ORIGIN_ROLE all or consumers, its “settling activity” log line)? Then check MySQL pressure; add consumers if MySQL has room.',
      docs: docs(CONSOLE_DOCS, 'Backlog growing'),
    });

  const recActive = (f.reconciliationFailing ?? 0) > 0;
  const recSince = firstSeen('reconciliation', recActive);
  if (recActive)
    out.push({
      id: 'reconciliation',
      level: 'critical',
      title: `Reconciliation mismatch: ${plural(f.reconciliationFailing!, 'check')} failing — Redis, the Stream and MySQL disagree about this sale’s units.`,
      since: recSince,
      next: 'See which check and by how much in Reconciliation below; pause the sale while you look.',
      docs: docs(CONSOLE_DOCS, 'Reconciliation mismatch'),
    });

  const warmupBad = f.warmupStatus === 'mismatch';
  const warmSince = firstSeen('warmup', warmupBad);
  if (warmupBad)
    out.push({
      id: 'warmup',
      level: 'critical',
      title: 'Warm-up verification failed: what Redis holds for this sale does not match MySQL.',
      since: warmSince,
      next: 'See the failing checks in Warm-up verification below; warm up again (Warm up now) before the sale opens.',
      docs: docs(CONSOLE_DOCS, 'Warm-up verification failed'),
    });

  if (f.deadLetters.open > 0)
    out.push({
      id: 'dead_letters',
      level: 'warning',
      title: `${plural(f.deadLetters.open, 'dead letter')} (${plural(f.deadLetters.units, 'unit')}): reservations settlement gave up on.`,
      since: iso(f.deadLetters.since),
      next: 'Read each reason in Dead letters below, then Retry it or Compensate (give up).',
      docs: docs(CONSOLE_DOCS, 'Dead letters'),
    });

  const parkedActive = f.parked.events > 0;
  const parkedSince = firstSeen('parked', parkedActive);
  if (parkedActive)
    out.push({
      id: 'parked',
      level: 'warning',
      title: `${plural(f.parked.events, 'order event')} parked: the downstream system has not heard of some orders.`,
      since: parkedSince,
      next: 'Read the last error in Parked order events below, fix the receiver, then Send again.',
      docs: docs(CONSOLE_DOCS, 'Parked order events'),
    });

  if (f.timedOut.orders > 0)
    out.push({
      id: 'timed_out',
      level: 'warning',
      title: `${plural(f.timedOut.orders, 'order')} timed out unpaid (${plural(f.timedOut.units, 'unit')} returned to stock).`,
      since: iso(f.timedOut.since),
      next: 'A few are normal; many mean buyers could not pay: check the payment provider and its webhook (POST /payments/webhook answers, its log lines).',
      docs: docs(CONSOLE_DOCS, 'Orders timed out'),
    });
  return out;
}

/** The rehearsal's success-rate baseline (ops/prometheus/baseline.yml, `expr: vector(X)`), or null. */
export function readBaseline(path = projectPath('ops', 'prometheus', 'baseline.yml')): number | null {
  try {
    const m = /expr:\s*vector\(\s*([0-9.]+)\s*\)/.exec(readFileSync(path, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** From the series: the backlog now and how long it has grown without emptying; the recent success rate. */
export function seriesFacts(
  view: SeriesView | null,
  now: number,
  windowSeconds = RECENT_SECONDS,
): Pick<AlertFacts, 'backlog'> & {
  recent: { rate: number | null; answers: number };
} {
  if (!view || view.t.length === 0)
    return { backlog: { now: null, growingSeconds: 0 }, recent: { rate: null, answers: 0 } };
  const b = view.series.backlog;
  const last = b[b.length - 1] ?? null;
  // Back from the newest point while the backlog stayed above zero; it grew if it ended above where that run began.
  let i = b.length - 1;
  while (i > 0 && (b[i - 1] ?? 0) > 0) i--;
  const growingSeconds =
    last !== null && last > 0 && (b[i] ?? 0) < last ? view.t[view.t.length - 1]! - (view.t[i]! - view.dur[i]!) : 0;
  let answers = 0;
  let decided = 0;
  for (let k = view.t.length - 1; k >= 0 && view.t[k]! > now / 1000 - windowSeconds; k--) {
    const a = view.series.answers[k];
    const d = view.series.decided[k];
    if (a === null || a === undefined || d === null || d === undefined) continue;
    answers += a * view.dur[k]!;
    decided += d * view.dur[k]!;
  }
  return { backlog: { now: last, growingSeconds }, recent: { rate: answers > 0 ? decided / answers : null, answers } };
}

export interface AlertFactDeps {
  db: Db;
  registry: Registry;
  failover: Pick<FailoverGate, 'closedSince' | 'lastReopened'>;
  shortBuckets: Pick<ShortBuckets, 'unitsOf'>;
  /** The success rate's window (CONSOLE_ALERT_WINDOW_SECONDS). */
  windowSeconds: number;
}

/** Reads every fact for one sale (see the file comment for where each comes from). */
export async function readAlertFacts(
  deps: AlertFactDeps,
  sale: { activityId: string; shadow?: boolean },
  warmupStatus: string,
  view: SeriesView | null,
  baseline: number | null,
): Promise<AlertFacts> {
  const now = Date.now();
  const { activityId } = sale;
  const ledger = ledgerOf(sale);
  const [timedOut, dead, parked, reconciliation, shortByBucket] = await Promise.all([
    timedOutOrders(deps.db, ledger, activityId),
    openDeadLetters(deps.db, activityId),
    parkedOrderEvents(deps.db, ledger, activityId),
    total(deps.registry, 'seckill_reconciliation_mismatches', { where: (l) => String(l.activity) === activityId }),
    deps.registry.getSingleMetric('seckill_bucket_short_of_replicas_units')?.get() ?? null,
  ]);
  const perBucket = (shortByBucket?.values ?? [])
    .filter((v) => String(v.labels.activity) === activityId && v.value > 0)
    .map((v) => ({ bucket: Number(v.labels.bucket), units: v.value }));
  const unitsShort = deps.shortBuckets.unitsOf(activityId);
  const fromSeries = seriesFacts(view, now, deps.windowSeconds);
  const closedSince = deps.failover.closedSince(activityId);
  return {
    now,
    timedOut: {
      orders: Number(timedOut?.n ?? 0),
      units: Number(timedOut?.units ?? 0),
      since: timedOut?.since ? new Date(timedOut.since).getTime() : null,
    },
    warmupStatus,
    failover: { closedSince: closedSince ?? null, reopened: deps.failover.lastReopened(activityId) ?? null },
    shortBuckets: perBucket.length > 0 ? perBucket : unitsShort > 0 ? [{ bucket: null, units: unitsShort }] : [],
    reconciliationFailing: reconciliation,
    parked: { events: Number(parked?.n ?? 0) },
    deadLetters: {
      open: Number(dead?.n ?? 0),
      units: Number(dead?.units ?? 0),
      since: dead?.since ? new Date(dead.since).getTime() : null,
    },
    backlog: fromSeries.backlog,
    successRate: { recent: fromSeries.recent.rate, answers: fromSeries.recent.answers, baseline },
  };
}
