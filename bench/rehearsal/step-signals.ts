/**
 * One ramp step's signals (layer-verdict.ts StepSignals) from what the step's crowd saw (its
 * recorder: answers by step, status and code) and the stack's readings at the step's start and end
 * (stack-signals.ts): the shadow sale's reserve answers at the origin, Redis call latency and
 * errors, the shadow Stream backlog, the MySQL pool, and how far settlement trails the reservations.
 */
import type { StepSignals } from './layer-verdict.js';
import type { Recorder } from './recorder.js';
import { countBetween, p99Between, topBoundMs, type StackSample } from './stack-signals.js';

const EDGE_STEPS = new Set(['ticket', 'purchase', 'poll', 'lookup', 'wait']);
/** 503s that are an answer of the sale (paused) or counted as the origin's (unavailable), not the edge failing. */
const NOT_EDGE_FAILURES = new Set(['busy', 'paused', 'unavailable', 'not_ready']);

export function stepSignals(a: {
  index: number;
  targetRate: number;
  seconds: number;
  /** The step's planned length: offered and served are counted over its whole seconds (the answers after it are its tail). */
  plannedMs: number;
  rec: Recorder;
  before: StackSample | null;
  after: StackSample | null;
  /** The readings taken during the step (for the pool's saturation). */
  readings: StackSample[];
  admissionRate: number;
  /** Reservations granted but not yet orders (or dead letters), at the step's start and end. */
  behind: [number, number];
}): StepSignals {
  const { rec, before, after, seconds } = a;
  const window = Math.max(1, Math.floor(Math.min(a.plannedMs / 1000, seconds)));
  let requests = 0;
  let served = 0;
  for (let second = 0; second < window; second++) {
    const b = rec.timeline.get(second);
    if (!b) continue;
    requests += b.reserved + b.repeat + b.ok + b.rejected + b.busy + b.failed;
    served += b.reserved + b.repeat + b.ok + b.rejected;
  }
  let edgeRequests = 0;
  let busy = 0;
  let errors = 0;
  let unavailable = 0;
  for (const x of rec.outcomes.values()) {
    const n = x.latency.count;
    if (!EDGE_STEPS.has(x.step)) continue;
    edgeRequests += n;
    if (x.code === 'busy') busy += n;
    if (x.code === 'unavailable' || x.code === 'not_ready') unavailable += n;
    if ((x.status === 0 || x.status >= 500) && !NOT_EDGE_FAILURES.has(x.code)) errors += n;
  }
  const both = before && after ? { before, after } : null;
  const answers = both ? both.after.shadow.answers.total - both.before.shadow.answers.total : 0;
  const decided = both ? both.after.shadow.answers.decided - both.before.shadow.answers.decided : 0;
  // The origin's own busy answers reach the crowd as 503 busy too: they are the origin's, not the edge's.
  const originBusy = both ? both.after.shadow.busy - both.before.shadow.busy : 0;
  const p99 = both ? p99Between(both.before.redis.buckets, both.after.redis.buckets) : null;
  const saturated = a.readings.filter((s) => s.mysql.poolLimit > 0 && s.mysql.poolInUse >= s.mysql.poolLimit);
  return {
    step: a.index,
    targetRate: a.targetRate,
    seconds: Math.round(seconds * 10) / 10,
    offeredRate: requests / window,
    servedRate: served / window,
    edge: {
      requests: edgeRequests,
      tickets: rec.count('ticket'),
      ticketsRateLimited: rec.count('ticket', (s) => s === 429),
      busy: Math.max(0, busy - originBusy),
      errors,
      admittedRate: both ? answers / seconds : null,
      admissionRate: a.admissionRate,
    },
    origin: { answers, undecided: answers - decided, unavailable },
    redis: {
      calls: both ? countBetween(both.before.redis.buckets, both.after.redis.buckets) : 0,
      p99Ms: p99 === null ? null : Number.isFinite(p99) ? p99 : topBoundMs(both!.after.redis.buckets),
      p99Above: p99 !== null && !Number.isFinite(p99),
      errors: both ? both.after.redis.errors - both.before.redis.errors : 0,
    },
    stream: { backlogStart: before?.shadow.backlog ?? 0, backlogEnd: after?.shadow.backlog ?? 0 },
    mysql: {
      readings: a.readings.length,
      saturatedReadings: saturated.length,
      poolLimit: after?.mysql.poolLimit ?? 0,
      slowTransactions: both ? both.after.mysql.slowTransactions - both.before.mysql.slowTransactions : 0,
    },
    settlement: { behindStart: a.behind[0], behindEnd: a.behind[1] },
  };
}
