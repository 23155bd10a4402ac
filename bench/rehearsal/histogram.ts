/**
 * Latency histogram with fixed memory: logarithmic buckets 2% wide from 10 µs to ~10 min, so a
 * million samples cost the same as ten. Percentiles are read from bucket upper bounds (≤ 2% high);
 * min, max and mean are exact.
 */
const BASE_MS = 0.01;
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(600_000 / BASE_MS) / LOG_GROWTH) + 1;

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  count = 0;
  private sum = 0;
  max = 0;

  record(ms: number): void {
    const i = ms <= BASE_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / BASE_MS) / LOG_GROWTH));
    this.counts[i]!++;
    this.count++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.count += other.count;
    this.sum += other.sum;
    this.max = Math.max(this.max, other.max);
  }

  /** A plain-data copy, to send from a worker process to the coordinator (`fromJSON`). */
  toJSON(): { counts: [number, number][]; count: number; sum: number; max: number } {
    const counts: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]) counts.push([i, this.counts[i]!]);
    return { counts, count: this.count, sum: this.sum, max: this.max };
  }

  static fromJSON(data: ReturnType<LatencyHistogram['toJSON']>): LatencyHistogram {
    const h = new LatencyHistogram();
    for (const [i, n] of data.counts) h.counts[i] = n;
    h.count = data.count;
    h.sum = data.sum;
    h.max = data.max;
    return h;
  }

  /** One histogram holding all of `list`'s samples. */
  static combine(list: LatencyHistogram[]): LatencyHistogram {
    const all = new LatencyHistogram();
    for (const h of list) all.merge(h);
    return all;
  }

  percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(this.max, BASE_MS * GROWTH ** i);
    }
    return this.max;
  }

  summary(): LatencySummary {
    const r = (n: number) => Math.round(n * 100) / 100;
    return {
      count: this.count,
      mean: r(this.count ? this.sum / this.count : 0),
      p50: r(this.percentile(50)),
      p90: r(this.percentile(90)),
      p99: r(this.percentile(99)),
      max: r(this.max),
    };
  }
}
