/**
 * Which layer gave way first (docs/rehearsal.md "Reading the first to give way"): given each ramp
 * step's signals, the layers whose signal crossed its line in that step, and the first step where
 * one did, with its offered rate. Pure: the ramp (ramp.ts) gathers the signals, this judges them.
 *
 * Within one step a deeper layer's trouble shows in the layers above it (slow Redis calls make
 * the origin answer `unavailable`, the edge time out), so when several cross in the same step the
 * deepest is named first, in the order of LAYERS; the others are listed beside it.
 */

export const LAYERS = ['redis', 'mysql', 'settlement', 'stream', 'origin', 'edge'] as const;
export type Layer = (typeof LAYERS)[number];

/** The lines each signal is judged against. */
export const LAYER_LIMITS = {
  /** Edge: refusals (503 busy, 429 on a ticket) above this share of the step's requests ... */
  refusalShare: 0.01,
  /** ... with 503 busy counted only while the origin got less than this share of the admission rate. */
  admissionShare: 0.9,
  /** Edge 5xx / network errors, or origin answers it could not decide, above this share. */
  failureShare: 0.01,
  /** Redis call p99 (the origin's histogram, its bucket's upper bound) above this. */
  redisP99Ms: 100,
  /** The shadow sale's Stream backlog grew by more than this over the step. */
  backlogGrowth: 100,
  /** The MySQL pool had every connection in use in more than this share of the step's readings. */
  poolSaturatedShare: 0.5,
  /** Reservations granted but not yet orders grew by more than this over the step. */
  settlementGrowth: 100,
} as const;

export interface StepSignals {
  /** 1-based. */
  step: number;
  targetRate: number;
  seconds: number;
  /**
   * Answers per second over the step's planned seconds: all of them, and those that were not a 503 (busy,
   * unavailable, paused), another 5xx or a network error.
   */
  offeredRate: number;
  servedRate: number;
  edge: {
    requests: number;
    tickets: number;
    /** 429 on a ticket: a user asks for one once (again only after Retry-After), so never intended. */
    ticketsRateLimited: number;
    /** 503 busy the edge gave itself (the origin's own busy answers taken out). */
    busy: number;
    /** 5xx other than busy / paused / unavailable, and network errors. */
    errors: number;
    /** Reserve calls of the shadow sale that reached the origin, per second (null: not read). */
    admittedRate: number | null;
    admissionRate: number;
  };
  origin: { answers: number; undecided: number; unavailable: number };
  /** p99Above: the p99 is beyond the histogram's last bound, p99Ms (JSON has no Infinity). */
  redis: { calls: number; p99Ms: number | null; p99Above: boolean; errors: number };
  stream: { backlogStart: number; backlogEnd: number };
  mysql: { readings: number; saturatedReadings: number; poolLimit: number; slowTransactions: number };
  settlement: { behindStart: number; behindEnd: number };
}

export interface GaveWay {
  layer: Layer;
  why: string;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The layers whose signal crossed its line in this step, deepest first. */
export function layersGivingWay(s: StepSignals, limits = LAYER_LIMITS): GaveWay[] {
  const out: GaveWay[] = [];
  const { redis, mysql, settlement, stream, origin, edge } = s;
  if (redis.errors > 0) out.push({ layer: 'redis', why: `${redis.errors} Redis calls failed or timed out` });
  else if (
    redis.p99Ms !== null &&
    (redis.p99Above ? redis.p99Ms >= limits.redisP99Ms : redis.p99Ms > limits.redisP99Ms)
  )
    out.push({
      layer: 'redis',
      why: `Redis call p99 ${redis.p99Above ? `above ${redis.p99Ms} ms` : `≤ ${redis.p99Ms} ms`} (line ${limits.redisP99Ms} ms)`,
    });
  if (mysql.readings > 0 && mysql.saturatedReadings / mysql.readings > limits.poolSaturatedShare)
    out.push({
      layer: 'mysql',
      why: `every MySQL pool connection (${mysql.poolLimit}) in use in ${mysql.saturatedReadings} of ${mysql.readings} readings: callers wait for one`,
    });
  const behind = settlement.behindEnd - settlement.behindStart;
  if (behind > limits.settlementGrowth)
    out.push({
      layer: 'settlement',
      why: `reservations not yet orders grew by ${behind} (${settlement.behindStart} → ${settlement.behindEnd})`,
    });
  const backlog = stream.backlogEnd - stream.backlogStart;
  if (backlog > limits.backlogGrowth)
    out.push({
      layer: 'stream',
      why: `Stream backlog grew by ${backlog} (${stream.backlogStart} → ${stream.backlogEnd})`,
    });
  const originFailures = Math.max(origin.undecided, origin.unavailable);
  const originBase = Math.max(origin.answers, origin.unavailable, 1);
  if (originFailures / originBase > limits.failureShare)
    out.push({
      layer: 'origin',
      why: `${originFailures} of ${originBase} reserve calls answered busy / unavailable (${pct(originFailures / originBase)})`,
    });
  const requests = Math.max(edge.requests, 1);
  const underAdmission = edge.admittedRate === null || edge.admittedRate < edge.admissionRate * limits.admissionShare;
  const busy = underAdmission ? edge.busy : 0;
  const refused = busy + edge.ticketsRateLimited;
  if (edge.errors / requests > limits.failureShare)
    out.push({ layer: 'edge', why: `${edge.errors} of ${edge.requests} requests failed at the edge (5xx, network)` });
  else if (refused / requests > limits.refusalShare)
    out.push({
      layer: 'edge',
      why: `${refused} of ${edge.requests} requests refused beyond the settings (${busy} busy below the admission rate ${edge.admissionRate}/s, ${edge.ticketsRateLimited} tickets 429)`,
    });
  return out;
}

export interface LayerVerdict {
  /** null: no layer gave way in any step. */
  first: { layer: Layer; step: number; targetRate: number; offeredRate: number; why: string } | null;
  /** Other layers that crossed their line in the same step. */
  alongside: GaveWay[];
  text: string;
}

export function firstToGiveWay(steps: StepSignals[], limits = LAYER_LIMITS): LayerVerdict {
  for (const s of steps) {
    const gave = layersGivingWay(s, limits);
    if (gave.length === 0) continue;
    const [top, ...rest] = gave as [GaveWay, ...GaveWay[]];
    return {
      first: { layer: top.layer, step: s.step, targetRate: s.targetRate, offeredRate: s.offeredRate, why: top.why },
      alongside: rest,
      text:
        `${top.layer} gave way first, at step ${s.step} (${Math.round(s.offeredRate)} req/s offered of ${Math.round(s.targetRate)} planned): ${top.why}` +
        (rest.length ? `; alongside: ${rest.map((g) => g.layer).join(', ')}` : ''),
    };
  }
  const top = steps.at(-1);
  return {
    first: null,
    alongside: [],
    text: top
      ? `no layer gave way up to step ${top.step} (${Math.round(top.offeredRate)} req/s offered of ${Math.round(top.targetRate)} planned)`
      : 'no step ran',
  };
}
