/**
 * The waiting room as the crowd saw it (`--overflow queue`, docs/design.md §10): buyers who were given a
 * place in line, what their wait ended in (a reservation, sold out, dropped, given up), the time in
 * line from the first `waiting` answer to the result, and the line's length second by second.
 */
import { LatencyHistogram, type LatencySummary } from './histogram.js';

export interface WaitingRoomReport {
  waited: number;
  admitted: number;
  reserved: number;
  soldOut: number;
  otherRefusals: number;
  dropped: number;
  gaveUp: number;
  timeInLine: LatencySummary;
  /** Per second since the start: entered, left (any outcome), and still waiting at its end. */
  line: { second: number; entered: number; left: number; waiting: number }[];
}

export class WaitingRoomStats {
  /** Users currently in line → when they entered (bounded by the line's length). */
  readonly inLine = new Map<string, number>();
  waited = 0;
  admitted = 0;
  reserved = 0;
  soldOut = 0;
  otherRefusals = 0;
  dropped = 0;
  gaveUp = 0;
  readonly timeInLine = new LatencyHistogram();
  private readonly perSecond = new Map<number, { entered: number; left: number }>();

  constructor(private readonly startsAt: number) {}

  /** A purchase answered `waiting`; false when this user already waits (a repeat click: the same entry). */
  entered(userId: string): boolean {
    if (this.inLine.has(userId)) return false;
    this.inLine.set(userId, Date.now());
    this.waited++;
    this.bucket().entered++;
    return true;
  }

  /** The wait ended: `outcome` is the answer's code (queued = a reservation), `dropped`, or `gave_up`. */
  left(userId: string, outcome: string): void {
    const since = this.inLine.get(userId);
    if (since === undefined) return;
    this.inLine.delete(userId);
    this.bucket().left++;
    if (outcome === 'dropped') this.dropped++;
    else if (outcome === 'gave_up') this.gaveUp++;
    else {
      this.admitted++;
      this.timeInLine.record(Date.now() - since);
      if (outcome === 'queued') this.reserved++;
      else if (outcome === 'sold_out') this.soldOut++;
      else this.otherRefusals++;
    }
  }

  report(): WaitingRoomReport {
    const seconds = [...this.perSecond.keys()].sort((a, b) => a - b);
    let waiting = 0;
    const line = seconds.length
      ? Array.from({ length: seconds.at(-1)! - seconds[0]! + 1 }, (_, i) => {
          const second = seconds[0]! + i;
          const b = this.perSecond.get(second) ?? { entered: 0, left: 0 };
          waiting += b.entered - b.left;
          return { second, ...b, waiting };
        })
      : [];
    const { waited, admitted, reserved, soldOut, otherRefusals, dropped, gaveUp } = this;
    return {
      waited,
      admitted,
      reserved,
      soldOut,
      otherRefusals,
      dropped,
      gaveUp,
      timeInLine: this.timeInLine.summary(),
      line,
    };
  }

  private bucket() {
    const second = Math.floor((Date.now() - this.startsAt) / 1000);
    let b = this.perSecond.get(second);
    if (!b) this.perSecond.set(second, (b = { entered: 0, left: 0 }));
    return b;
  }
}
