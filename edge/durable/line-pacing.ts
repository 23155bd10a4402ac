/**
 * What one admission shard's line (edge/durable/waiting-line.ts) tells a waiting entry: where it
 * stands, when its turn comes, and when to poll next. Position = waiting entries ahead; ETA = when the
 * tokens for them and this one will have accrued. pollAfterMs shrinks as the turn nears (a fraction of
 * the ETA, never below pollMinMs), and the fraction grows with the line so the whole line's polls stay
 * near the shard's poll budget: with pollAfter ≈ k·ETA, n entries poll about rate/k · (1 + ln n) times
 * a second. It is never above pollMaxMs, so a place at the back must show its holder is still there
 * every pollMaxMs or so (3 × it at most), which adds at most maxWaiting / pollMaxMs polls a second.
 */
import type { LineBook } from './line-book.js';
import type { LineAnswer, LineLimits } from './line-entries.js';
import { level, type Bucket } from './token-bucket.js';

/** A shard's burst: one second of its rate, at least one token. */
export function capacityOf(limits: LineLimits): number {
  return Math.max(1, limits.ratePerSec);
}

/**
 * The answer to waiting entry `i` of `book`, the shard's bucket being `bucket`. With `record` (a poll)
 * the entry's pacing clock restarts now at the pollAfterMs given; without (a repeat click) it stays.
 */
export function waitingAnswer(
  book: LineBook,
  bucket: Bucket | undefined,
  i: number,
  limits: LineLimits,
  now: number,
  record: boolean,
): Extract<LineAnswer, { kind: 'waiting' }> {
  const s = book.waiting;
  const ahead = i - s.head;
  const available = level(bucket, limits.ratePerSec, capacityOf(limits), now);
  const etaMs = Math.max(0, ((ahead + 1 - available) * 1000) / limits.ratePerSec);
  const k = Math.max(0.5, (limits.ratePerSec * (1 + Math.log(Math.max(1, s.count)))) / limits.pollBudgetPerSec);
  const pollAfterMs = Math.max(
    limits.pollMinMs,
    Math.min(limits.pollMaxMs ?? Number.POSITIVE_INFINITY, Math.ceil(etaMs * k)),
  );
  if (record) {
    // Stored pacing only has to be no shorter than any pollAfterMs given since (a load restarts the
    // deadlines from it): a poll writes its row only when it lengthens the interval, so most polls
    // write nothing (pollAfterMs shrinks as the turn nears).
    if (pollAfterMs > s.pollAfter[i]!) book.changed?.add(s.seqs[i]!);
    s.lastAnswerAt[i] = now;
    s.pollAfter[i] = pollAfterMs;
  }
  // The position told also counts those ahead whose leaving is not stored yet (LineBook.unstoredAhead):
  // it is never lower than the one a restart would give, so a buyer's position only falls.
  const position = ahead + book.unstoredAhead(s.seqs[i]!);
  return { kind: 'waiting', seq: s.seqs[i]!, position, etaMs: Math.ceil(etaMs), pollAfterMs };
}
