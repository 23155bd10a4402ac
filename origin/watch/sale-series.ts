/**
 * The per-second series the operator console charts (docs/console.md, "Charts"), kept in this
 * process's memory, bounded: a console opened late still sees the sale's whole run.
 *
 * Each sale has a fixed-size table of points. The newest `points` seconds are kept one point per
 * second (a ring); an older second moves into a coarse table of at most `points` points, each
 * covering `resolution` seconds. When the coarse table is full its neighbours are merged pairwise
 * and its resolution doubles (5 s, 10 s, 20 s, …), so a sale of any length keeps its whole run in
 * at most 2 × `points` + 1 points. The tables are Float64Arrays allocated once, so a sale's memory
 * is exactly `(2 × points + 2) × (2 + columns) × 8` bytes whatever its length (bytes()), and at
 * most `sales` sales are kept (the oldest ended one is dropped first).
 *
 * Columns are summed when points merge (counts over the interval: clicks, answers, …), take their
 * maximum (pressures: backlog, clients, threads — a peak must survive downsampling) or keep the last
 * value (units left). A missing value is NaN, answered as null.
 */

/** How a column's values combine when points merge. */
export type Merge = 'sum' | 'max' | 'last';

/** The columns every sale has, in table order; a sale's units per bucket follow them. */
export const SERIES_COLUMNS = [
  ['clicks', 'sum'],
  ['tickets', 'sum'],
  ['admitted', 'sum'],
  ['reserved', 'sum'],
  ['settled', 'sum'],
  ['paid', 'sum'],
  ['answers', 'sum'],
  ['decided', 'sum'],
  ['slowlog', 'sum'],
  ['slowQueries', 'sum'],
  ['backlog', 'max'],
  ['redisClients', 'max'],
  ['mysqlRunning', 'max'],
  ['mysqlConnected', 'max'],
  ['poolInUse', 'max'],
  ['poolLimit', 'last'],
  ['unitsLeft', 'last'],
] as const satisfies readonly (readonly [string, Merge])[];

export type SeriesColumn = (typeof SERIES_COLUMNS)[number][0];
/** One second's figures: counts over the second, gauges at its end; null where not read. */
export type SeriesSample = Record<SeriesColumn, number | null> & { buckets: (number | null)[] };

/** The coarse table's first resolution: one point per this many seconds. */
export const COARSE_START_SECONDS = 5;

/** A point's header: its start (Unix seconds) and the seconds it covers. */
const T = 0;
const DUR = 1;
const HEAD = 2;

/** One sale's bounded table (see the file comment). */
export class SeriesTable {
  private readonly width: number;
  private readonly merges: Merge[];
  private readonly fine: Float64Array;
  private fineStart = 0;
  private fineCount = 0;
  private readonly coarse: Float64Array;
  private coarseCount = 0;
  /** The coarse point being filled: older seconds gather here until it covers `resolution`. */
  private readonly pending: Float64Array;
  private pendingUsed = false;
  /** The point being pushed, before it is copied into the ring (no allocation per second). */
  private readonly scratch: Float64Array;
  resolution = COARSE_START_SECONDS;

  constructor(
    readonly buckets: number,
    readonly points: number,
  ) {
    this.merges = [...SERIES_COLUMNS.map(([, m]) => m), ...Array<Merge>(buckets).fill('last')];
    this.width = HEAD + this.merges.length;
    this.fine = new Float64Array(points * this.width);
    this.coarse = new Float64Array(points * this.width);
    this.pending = new Float64Array(this.width);
    this.scratch = new Float64Array(this.width);
  }

  /** Bytes of the tables: fixed at construction. */
  bytes(): number {
    return this.fine.byteLength + this.coarse.byteLength + this.pending.byteLength + this.scratch.byteLength;
  }

  /** Points held now (at most 2 × points + 1). */
  size(): number {
    return this.fineCount + this.coarseCount + (this.pendingUsed ? 1 : 0);
  }

  /** Adds the interval [t, t + dur) (Unix seconds) with its figures. */
  push(t: number, dur: number, sample: SeriesSample): void {
    const row = this.scratch;
    row[T] = t;
    row[DUR] = dur;
    SERIES_COLUMNS.forEach(([name], i) => (row[HEAD + i] = sample[name] ?? NaN));
    for (let b = 0; b < this.buckets; b++) row[HEAD + SERIES_COLUMNS.length + b] = sample.buckets[b] ?? NaN;
    if (this.fineCount === this.points) {
      this.toCoarse(this.fine.subarray(this.fineStart * this.width, (this.fineStart + 1) * this.width));
      this.fine.set(row, this.fineStart * this.width);
      this.fineStart = (this.fineStart + 1) % this.points;
    } else {
      this.fine.set(row, ((this.fineStart + this.fineCount) % this.points) * this.width);
      this.fineCount++;
    }
  }

  private toCoarse(row: Float64Array): void {
    if (!this.pendingUsed) {
      this.pending.set(row);
      this.pendingUsed = true;
    } else this.mergeInto(this.pending, 0, row);
    if (this.pending[DUR]! < this.resolution) return;
    if (this.coarseCount === this.points) this.halve();
    this.coarse.set(this.pending, this.coarseCount * this.width);
    this.coarseCount++;
    this.pendingUsed = false;
  }

  /** Merges neighbouring coarse points pairwise: half the points, twice the resolution. */
  private halve(): void {
    const w = this.width;
    let out = 0;
    for (let i = 0; i < this.coarseCount; i += 2) {
      if (out !== i) this.coarse.copyWithin(out * w, i * w, (i + 1) * w);
      if (i + 1 < this.coarseCount)
        this.mergeInto(this.coarse, out * w, this.coarse.subarray((i + 1) * w, (i + 2) * w));
      out++;
    }
    this.coarse.fill(0, out * w);
    this.coarseCount = out;
    this.resolution *= 2;
  }

  /** Folds `later` into the point at `into[at…]` (which comes first in time). */
  private mergeInto(into: Float64Array, at: number, later: Float64Array): void {
    into[at + DUR] = later[T]! + later[DUR]! - into[at + T]!;
    this.merges.forEach((merge, i) => {
      const a = into[at + HEAD + i]!;
      const b = later[HEAD + i]!;
      if (Number.isNaN(b)) return;
      if (Number.isNaN(a)) into[at + HEAD + i] = b;
      else if (merge === 'sum') into[at + HEAD + i] = a + b;
      else if (merge === 'max') into[at + HEAD + i] = Math.max(a, b);
      else into[at + HEAD + i] = b;
    });
  }

  /** Every point, oldest first, as rows (header, then columns). */
  rows(): Float64Array[] {
    const w = this.width;
    const out: Float64Array[] = [];
    for (let i = 0; i < this.coarseCount; i++) out.push(this.coarse.subarray(i * w, (i + 1) * w));
    if (this.pendingUsed) out.push(this.pending);
    for (let i = 0; i < this.fineCount; i++) {
      const at = ((this.fineStart + i) % this.points) * w;
      out.push(this.fine.subarray(at, at + w));
    }
    return out;
  }
}

/** A sale's series as the console charts it: per point its end time and per-second figures. */
export interface SeriesView {
  /** Seconds per point: 1 for the newest, `coarse` for the older ones. */
  resolution: { fine: number; coarse: number };
  /** Each point's end (Unix seconds). */
  t: number[];
  /** Seconds each point covers. */
  dur: number[];
  /** Counts per second (clicks … slowQueries), gauges as read (backlog … unitsLeft). */
  series: Record<SeriesColumn, (number | null)[]>;
  /** Decided answers ÷ all answers over each point; null without answers. */
  successRate: (number | null)[];
  /** Units left per bucket. */
  buckets: (number | null)[][];
}

const orNull = (v: number) => (Number.isNaN(v) ? null : v);
const round3 = (v: number) => Math.round(v * 1000) / 1000;

export function viewOf(table: SeriesTable): SeriesView {
  const rows = table.rows();
  const series = Object.fromEntries(SERIES_COLUMNS.map(([name]) => [name, [] as (number | null)[]])) as Record<
    SeriesColumn,
    (number | null)[]
  >;
  const view: SeriesView = {
    resolution: { fine: 1, coarse: table.resolution },
    t: [],
    dur: [],
    series,
    successRate: [],
    buckets: Array.from({ length: table.buckets }, () => []),
  };
  const answers = SERIES_COLUMNS.findIndex(([n]) => n === 'answers');
  const decided = SERIES_COLUMNS.findIndex(([n]) => n === 'decided');
  for (const row of rows) {
    const dur = row[DUR]!;
    view.t.push(row[T]! + dur);
    view.dur.push(dur);
    SERIES_COLUMNS.forEach(([name, merge], i) => {
      const v = row[HEAD + i]!;
      series[name].push(Number.isNaN(v) ? null : merge === 'sum' ? round3(v / dur) : v);
    });
    const a = row[HEAD + answers]!;
    const d = row[HEAD + decided]!;
    view.successRate.push(Number.isNaN(a) || Number.isNaN(d) || a <= 0 ? null : round3(d / a));
    for (let b = 0; b < table.buckets; b++) view.buckets[b]!.push(orNull(row[HEAD + SERIES_COLUMNS.length + b]!));
  }
  return view;
}

/** Every tracked sale's table, at most `maxSales` of them. */
export class SaleSeriesStore {
  private readonly tables = new Map<string, { table: SeriesTable; endsAt: number }>();

  constructor(
    readonly points: number,
    readonly maxSales: number,
  ) {}

  /** The sale's table, made on first use; beyond `maxSales` the sale that ended first is dropped. */
  tableOf(activityId: string, buckets: number, endsAt: number): SeriesTable {
    const kept = this.tables.get(activityId);
    if (kept && kept.table.buckets === buckets) {
      kept.endsAt = endsAt;
      return kept.table;
    }
    this.tables.delete(activityId);
    while (this.tables.size >= this.maxSales) {
      const [oldest] = [...this.tables.entries()].sort((a, b) => a[1].endsAt - b[1].endsAt)[0]!;
      this.tables.delete(oldest);
    }
    const table = new SeriesTable(buckets, this.points);
    this.tables.set(activityId, { table, endsAt });
    return table;
  }

  has(activityId: string): boolean {
    return this.tables.has(activityId);
  }

  view(activityId: string): SeriesView | null {
    const kept = this.tables.get(activityId);
    return kept ? viewOf(kept.table) : null;
  }

  /** The last `n` points of one column (per second for counts), for a sparkline. */
  recent(activityId: string, column: SeriesColumn | 'successRate', n: number): (number | null)[] {
    const view = this.view(activityId);
    if (!view) return [];
    const values = column === 'successRate' ? view.successRate : view.series[column];
    return values.slice(-n);
  }

  /** Bytes of every table held. */
  bytes(): number {
    let total = 0;
    for (const { table } of this.tables.values()) total += table.bytes();
    return total;
  }
}
