/**
 * The counters of one admission shard's line (edge/durable/waiting-line.ts counts): kept beside its
 * entries in storage (LineMeta.figures, read back on a restart), and read as LineFigures by the
 * shard's figures and the origin's /metrics.
 */
import { TIME_IN_LINE_BUCKETS_MS, type LineFigures, type LineMeta } from './line-entries.js';

type LineCounts = ReturnType<typeof newCounts>;

export function newCounts() {
  return {
    entered: 0,
    admitted: 0,
    dropped: 0,
    closed: 0,
    retried: 0,
    refusedFull: 0,
    tokensGranted: 0,
    timeInLineSumMs: 0,
    timeInLine: new Array<number>(TIME_IN_LINE_BUCKETS_MS.length + 1).fill(0),
  };
}

/** The counters as stored (LineMeta.figures) read back; refusedFull is absent in rows stored before the cap. */
export function countsFrom(stored: LineMeta['figures']): LineCounts {
  return { ...stored, refusedFull: stored.refusedFull ?? 0, timeInLine: [...stored.timeInLine] };
}

/** One more entry admitted, after `ms` in line. */
export function countTurn(counts: LineCounts, ms: number): void {
  counts.admitted++;
  counts.timeInLineSumMs += ms;
  let b = TIME_IN_LINE_BUCKETS_MS.findIndex((bound) => ms <= bound);
  if (b < 0) b = TIME_IN_LINE_BUCKETS_MS.length;
  counts.timeInLine[b]!++;
}

/** The counters with the line's state now: entries waiting, the oldest one's wait, turns not yet run. */
export function figuresOf(f: LineCounts, waiting: number, oldestWaitMs: number, turnsPending: number): LineFigures {
  let cumulative = 0;
  return {
    waiting,
    oldestWaitMs,
    turnsPending,
    entered: f.entered,
    admitted: f.admitted,
    dropped: f.dropped,
    closed: f.closed,
    retried: f.retried,
    refusedFull: f.refusedFull,
    tokensGranted: f.tokensGranted,
    timeInLineBuckets: f.timeInLine.map((n) => (cumulative += n)),
    timeInLineSumMs: f.timeInLineSumMs,
  };
}
