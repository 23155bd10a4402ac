/**
 * The production guard (an SLA circuit breaker, as full-link test platforms have): while the shadow
 * ramp runs, the real traffic's own signals — read from the origin's real series, which a shadow
 * sale's traffic never enters — are judged over a sliding window, and the first line crossed stops
 * the rehearsal, saying why. `guardTrip` is pure; `baselineOf` gives the success rate to compare with.
 */
import type { GuardOptions } from './ramp-options.js';
import { countBetween, p99Between, type StackSample } from './stack-signals.js';

export interface GuardReport {
  /** The real order success rate the guard compared with, and where it came from. */
  /** `assumed`: fewer than minAnswers real answers before the first step, so 100 % is assumed. */
  baseline: { rate: number; source: 'option' | 'measured' | 'assumed'; answers: number };
  stoppedEarly: boolean;
  reason: string | null;
  /** ms since the first step's start when it stopped (null: it did not). */
  atMs: number | null;
  limits: GuardOptions;
  /** Readings of /metrics that failed (the guard judged without them). */
  readFailures: number;
}

/** The real success rate over the readings before the first step, as GuardReport['baseline']. */
export function baselineOf(o: GuardOptions, before: StackSample | null, at: StackSample | null) {
  if (o.baselineRate !== null) return { rate: o.baselineRate, source: 'option' as const, answers: 0 };
  const total = before && at ? at.real.answers.total - before.real.answers.total : 0;
  const decided = before && at ? at.real.answers.decided - before.real.answers.decided : 0;
  if (total < o.minAnswers) return { rate: 1, source: 'assumed' as const, answers: total };
  return { rate: decided / total, source: 'measured' as const, answers: total };
}

/** Why the guard stops the rehearsal, judged from the window's first and last readings; null: it does not. */
export function guardTrip(o: GuardOptions, baseline: number, from: StackSample, to: StackSample): string | null {
  if (to.real.streamLagMax > o.streamLag)
    return `real Stream lag ${to.real.streamLagMax} entries is above ${o.streamLag}`;
  const total = to.real.answers.total - from.real.answers.total;
  const decided = to.real.answers.decided - from.real.answers.decided;
  const seconds = ((to.at - from.at) / 1000).toFixed(1);
  if (total >= o.minAnswers && decided / total < o.successShare * baseline)
    return `real order success rate ${((decided / total) * 100).toFixed(1)} % over ${seconds} s (${decided} of ${total}) is below ${o.successShare} × the baseline ${(baseline * 100).toFixed(1)} %`;
  const calls = countBetween(from.real.reserveBuckets, to.real.reserveBuckets);
  const p99 = p99Between(from.real.reserveBuckets, to.real.reserveBuckets);
  if (calls >= o.minAnswers && p99 !== null && p99 > o.p99Ms)
    return `real reserve p99 ${Number.isFinite(p99) ? `≤ ${p99} ms` : 'beyond the histogram'} over ${seconds} s (${calls} calls) is above ${o.p99Ms} ms`;
  return null;
}

/** The reading to judge `latest` against: the oldest one within the window before it. */
export function windowStart(samples: StackSample[], latest: StackSample, windowMs: number): StackSample | null {
  const start = samples.find((s) => s.at >= latest.at - windowMs && s.at < latest.at);
  return start ?? null;
}
