/**
 * Pushes the edge a fresh snapshot when a reservation moves the units left across a line the edge
 * shows (docs/design.md §10): the `stockHint` buckets (50 %, 10 %, empty) and the `soldOutThreshold`. So
 * the hint and the early sold-out flag are in force at the edge within a push, while the edge is
 * told at most a handful of times per sale instead of once per reservation. The ActivityDO's own
 * refresh (ACTIVITY_REFRESH_MS) repairs anything a lost push left behind.
 *
 * The request path never waits here: figures (units on sale, threshold) are cached per activity
 * for FIGURES_TTL_MS and reloaded in the background. With stock buckets a reservation only knows its
 * home bucket's units, so the total is sampled instead (at most every SAMPLE_MS, in the background)
 * and the edge is pushed when its level changed since the last sample.
 */
import { hintOf } from '../../contract/activity.js';

/** How long the units-on-sale and threshold of an activity are trusted before a background reload. */
const FIGURES_TTL_MS = 1_000;
/** How often (at most) the total units of a bucketed sale are read while it sells. */
const SAMPLE_MS = 250;
const MAX_ACTIVITIES = 10_000;

export interface WatchFigures {
  onSale: number;
  threshold: number;
}

interface Entry extends WatchFigures {
  at: number;
  /** Bucketed sales: when the total was last read, and its level then. */
  sampledAt?: number;
  sampledLevel?: string;
}

export class StockWatch {
  private readonly figures = new Map<string, Entry>();
  private readonly loading = new Set<string>();

  constructor(
    private readonly load: (activityId: string) => Promise<WatchFigures | null>,
    private readonly push: (activityId: string) => void,
    /** Units left over all buckets (null: not warm). */
    private readonly readLeft: (sale: { activityId: string; skuId: string; buckets: number }) => Promise<number | null>,
  ) {}

  /** A reservation took the units left (of its home bucket, with buckets) from `before` to `after`. */
  observe(
    sale: { activityId: string; skuId: string; buckets: number },
    before: number,
    after: number,
    now = Date.now(),
  ): void {
    const { activityId } = sale;
    const f = this.figures.get(activityId);
    if (!f || now - f.at > FIGURES_TTL_MS) this.reload(activityId);
    if (!f) return;
    if (sale.buckets <= 1) {
      if (level(before, f) !== level(after, f)) this.push(activityId);
      return;
    }
    if (f.sampledAt !== undefined && now - f.sampledAt < SAMPLE_MS) return;
    f.sampledAt = now;
    this.readLeft(sale)
      .then((left) => {
        if (left === null) return;
        const next = level(left, f);
        if (f.sampledLevel !== undefined && next !== f.sampledLevel) this.push(activityId);
        f.sampledLevel = next;
      })
      .catch(() => undefined);
  }

  /** Settings changed (threshold, a release): reload before the next comparison. */
  forget(activityId: string): void {
    this.figures.delete(activityId);
  }

  private reload(activityId: string): void {
    if (this.loading.has(activityId)) return;
    this.loading.add(activityId);
    this.load(activityId)
      .then((f) => {
        if (!f) return;
        if (this.figures.size >= MAX_ACTIVITIES) this.figures.clear();
        this.figures.set(activityId, { ...f, at: Date.now() });
      })
      .catch(() => undefined)
      .finally(() => this.loading.delete(activityId));
  }
}

/** What the edge would show for `left` units: the early sold-out line first, then the hint bucket. */
export function level(left: number, f: WatchFigures): string {
  if (left <= f.threshold) return 'sold_out';
  return hintOf(left, f.onSale);
}
