/**
 * The signals the stack already exports, read from the origin's /metrics (Prometheus text) for the
 * shadow ramp: the real traffic's own series (seckill_order_answers_total, the reserve latency
 * histogram, seckill_stream_lag — a shadow sale's traffic is never in them) for the guard, and the
 * layers' signals (Redis call latency and errors, the MySQL pool, the shadow sale's own answers,
 * backlog and settled orders) for the "first to give way" verdict. `parseSample` is pure.
 */
import { orderAnswersFrom, type OrderAnswers } from './baseline.js';

/** Cumulative histogram buckets: upper bound in seconds (Infinity for +Inf) → count. */
export type Buckets = [number, number][];

export interface StackSample {
  /** Epoch ms of the read. */
  at: number;
  real: {
    answers: OrderAnswers;
    /** seckill_reserve_duration_seconds over every outcome (real reserve calls only). */
    reserveBuckets: Buckets;
    /** The largest seckill_stream_lag of any real sale (undelivered entries). */
    streamLagMax: number;
  };
  shadow: {
    answers: OrderAnswers;
    /** Of them, the origin's own 503 busy (its in-flight gate): the edge passes these on as its busy. */
    busy: number;
    /** seckill_shadow_stream_backlog of the rehearsal's sale (undelivered + unacknowledged). */
    backlog: number;
    settled: number;
  };
  redis: { buckets: Buckets; errors: number };
  mysql: { poolInUse: number; poolLimit: number; slowTransactions: number };
}

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function seriesOf(text: string): Series[] {
  const out: Series[] = [];
  for (const m of text.matchAll(/^([A-Za-z_:][\w:]*)(?:\{([^}]*)\})? (\S+)/gm)) {
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function bucketsOf(series: Series[], name: string): Buckets {
  const byLe = new Map<number, number>();
  for (const s of series) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  return [...byLe].sort((a, b) => a[0] - b[0]);
}

export function parseSample(text: string, shadowActivityId: string, at: number): StackSample {
  const series = seriesOf(text);
  const sum = (name: string, where: (l: Record<string, string>) => boolean = () => true) =>
    series.filter((s) => s.name === name && where(s.labels)).reduce((n, s) => n + s.value, 0);
  const shadowAnswers = { decided: 0, total: 0 };
  let shadowBusy = 0;
  for (const s of series.filter((x) => x.name === 'seckill_shadow_order_answers_total')) {
    shadowAnswers.total += s.value;
    if (s.labels.decided === 'true') shadowAnswers.decided += s.value;
    if (s.labels.outcome === 'busy') shadowBusy += s.value;
  }
  return {
    at,
    real: {
      answers: orderAnswersFrom(text),
      reserveBuckets: bucketsOf(series, 'seckill_reserve_duration_seconds'),
      streamLagMax: Math.max(0, ...series.filter((s) => s.name === 'seckill_stream_lag').map((s) => s.value)),
    },
    shadow: {
      answers: shadowAnswers,
      busy: shadowBusy,
      backlog: sum('seckill_shadow_stream_backlog', (l) => l.activity === shadowActivityId),
      settled: sum('seckill_shadow_orders_settled_total'),
    },
    redis: {
      buckets: bucketsOf(series, 'seckill_redis_call_duration_seconds'),
      errors: sum('seckill_redis_errors_total'),
    },
    mysql: {
      poolInUse: sum('seckill_db_pool_connections', (l) => l.state === 'in_use'),
      poolLimit: sum('seckill_db_pool_limit'),
      slowTransactions: sum('seckill_db_slow_transactions_total'),
    },
  };
}

/**
 * p99 in ms of the observations between two readings of a histogram: the upper bound of the bucket
 * holding it (Infinity above the last bound), or null when nothing was observed.
 */
export function p99Between(before: Buckets, after: Buckets): number | null {
  const was = new Map(before);
  const delta = after.map(([le, n]) => [le, n - (was.get(le) ?? 0)] as const);
  const total = delta.at(-1)?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = Math.ceil(0.99 * total);
  const hit = delta.find(([, n]) => n >= rank);
  return hit ? hit[0] * 1000 : Infinity;
}

/** The histogram's last finite bound in ms (what a p99 beyond it is reported as being above). */
export function topBoundMs(buckets: Buckets): number | null {
  const finite = buckets.filter(([le]) => Number.isFinite(le));
  return finite.length ? finite.at(-1)![0] * 1000 : null;
}

/** Observations between two readings of a histogram. */
export function countBetween(before: Buckets, after: Buckets): number {
  return (after.at(-1)?.[1] ?? 0) - (before.at(-1)?.[1] ?? 0);
}

/** /metrics read timeout: a scrape that takes longer is a failed read (the sampler keeps going). */
export const METRICS_READ_TIMEOUT_MS = 5_000;

export async function readSample(originUrl: string, activityId: string, metricsToken?: string): Promise<StackSample> {
  const res = await fetch(`${originUrl}/metrics`, {
    headers: metricsToken ? { authorization: `Bearer ${metricsToken}` } : {},
    signal: AbortSignal.timeout(METRICS_READ_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`origin /metrics: HTTP ${res.status}`);
  return parseSample(await res.text(), activityId, Date.now());
}

/** Reads the stack's signals every `everyMs` until stopped; each new sample goes to `onSample`. */
export class StackSampler {
  readonly samples: StackSample[] = [];
  readFailures = 0;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly read: () => Promise<StackSample>,
    private readonly everyMs: number,
    private readonly onSample: (s: StackSample) => void = () => undefined,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.readNow().catch(() => undefined), this.everyMs);
  }

  /** A sample now (also added to `samples`). */
  async readNow(): Promise<StackSample> {
    const next = this.reading.then(() => this.read());
    this.reading = next.then(
      () => undefined,
      () => undefined,
    );
    try {
      const s = await next;
      this.samples.push(s);
      this.onSample(s);
      return s;
    } catch (err) {
      this.readFailures++;
      throw err;
    }
  }

  /** Samples read between two instants (epoch ms). */
  between(from: number, to: number): StackSample[] {
    return this.samples.filter((s) => s.at >= from && s.at <= to);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reading;
  }
}
