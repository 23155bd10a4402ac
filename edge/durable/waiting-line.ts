/**
 * One admission shard's token bucket and its waiting room (docs/design.md §4, §10 `overflow: "queue"`): pure
 * data and functions of `now`, so the order, the positions and the ETAs are testable without workerd.
 *
 * The bucket refills at the shard's rate. While nobody waits, tokens go to whoever asks (isolates
 * lease small batches of them). Once a purchase finds no token, it is kept in a FIFO and every later
 * one queues behind it — leases included — and each token that accrues goes to the head of the line,
 * at the moment it accrued. A waiting entry whose turn came is "admitted": its next poll runs the
 * kept purchase (the edge forwards it) and reports the outcome back, which later polls repeat.
 *
 * Polls keep an entry alive: one not polled for 3 × the pollAfterMs it was last given is dropped —
 * skipped at no token cost while waiting, its token handed on if it had been admitted. pollAfterMs is
 * never longer than `pollMaxMs`, so a place nobody polls is gone within 3 × pollMaxMs wherever it
 * stands, and the line holds at most `maxWaiting` waiting entries: a join beyond that is refused
 * (`full`), which bounds the shard's memory and storage whatever number of accounts joins. A sweep,
 * at most once a second, drops the ghosts anywhere in the line, so positions are exact up to that second.
 *
 * The entries, and their rows in the shard's storage: edge/durable/line-book.ts. What a waiting entry
 * is told: edge/durable/line-pacing.ts. The counters: edge/durable/line-figures.ts.
 */
import { LineBook } from './line-book.js';
import {
  MISSED_POLLS_TO_DROP,
  SWEEP_EVERY_MS,
  type KeptPurchase,
  type LineAnswer,
  type LineFigures,
  type LineLimits,
  type LineMeta,
  type LineOutcome,
  type StoredEntry,
} from './line-entries.js';
import { countsFrom, countTurn, figuresOf, newCounts } from './line-figures.js';
import { capacityOf, waitingAnswer } from './line-pacing.js';
import { level, type Bucket } from './token-bucket.js';

const UNKNOWN: LineAnswer = { kind: 'gone', reason: { why: 'unknown' } };

/** An admitted entry not polled by then is a ghost: 3 × the pollAfterMs it was last given. */
const deadlineOf = (e: { lastAnswerAt: number; pollAfterMs: number }) =>
  e.lastAnswerAt + MISSED_POLLS_TO_DROP * e.pollAfterMs;

export class WaitingLine {
  private bucket: Bucket | undefined;
  private lastSweep = 0;
  /**
   * No admitted entry misses its deadline before this time (a lower bound: exact after each check,
   * lowered when an entry is admitted or renewed), so a call checks the admitted entries only once
   * one may be a ghost, not one by one on every call: a fast line has thousands admitted at a time.
   */
  private admittedCheckAt = 0;
  /** Every entry the line knows, by state. */
  private readonly book: LineBook;
  private figures = newCounts();

  constructor(opts: { trackChanges?: boolean } = {}) {
    this.book = new LineBook(opts.trackChanges === true);
  }

  get waitingCount(): number {
    return this.book.waiting.count;
  }

  /**
   * Up to `want` tokens for an isolate's lease — none while anyone waits (leases never jump the line).
   * `retryAfterMs` says when one token would be available.
   */
  grant(want: number, limits: LineLimits, now: number): { granted: number; retryAfterMs: number } {
    this.advance(limits, now);
    const capacity = capacityOf(limits);
    const available = level(this.bucket, limits.ratePerSec, capacity, now);
    if (this.waitingCount > 0 || available < 1) {
      const retryAfterMs = Math.ceil(((this.waitingCount + 1 - available) * 1000) / limits.ratePerSec);
      return { granted: 0, retryAfterMs: Math.max(1, retryAfterMs) };
    }
    const granted = Math.min(Math.max(1, Math.floor(want)), Math.floor(available));
    this.bucket = { tokens: available - granted, updatedAt: now, ratePerSec: limits.ratePerSec, capacity };
    this.figures.tokensGranted += granted;
    return { granted, retryAfterMs: 0 };
  }

  /**
   * A purchase that found no token in its isolate's lease: this user's existing entry if any, else
   * up to `want` tokens when nobody waits (the purchase goes on, the rest refill the lease), else the
   * next place in line.
   */
  enter(
    purchase: KeptPurchase,
    want: number,
    limits: LineLimits,
    now: number,
  ): LineAnswer | { kind: 'admitted'; granted: number } {
    this.advance(limits, now);
    const existing = this.book.byUser.get(purchase.userId);
    // A repeat click is answered like a poll, without the pacing check (the user's gate paces clicks)
    // and without moving the entry's pacing clock (so the poll it was told to make stays on time).
    if (existing !== undefined) return this.answer(existing, purchase.userId, limits, now, false);
    if (limits.maxWaiting !== undefined && this.waitingCount >= limits.maxWaiting) {
      // Nothing is kept (no entry, no row): a refused join costs the shard this comparison.
      this.figures.refusedFull++;
      const available = level(this.bucket, limits.ratePerSec, capacityOf(limits), now);
      return { kind: 'full', retryAfterMs: Math.max(1, Math.ceil(((1 - available) * 1000) / limits.ratePerSec)) };
    }
    const { granted } = this.grant(want, limits, now);
    if (granted > 0) return { kind: 'admitted', granted };
    const i = this.book.join(purchase, now, limits.pollMinMs);
    this.figures.entered++;
    return waitingAnswer(this.book, this.bucket, i, limits, now, true);
  }

  /** A poll of entry `seq` by `userId`: waiting (position, ETA), its turn, its outcome, too soon, or gone. */
  poll(seq: number, userId: string, limits: LineLimits, now: number): LineAnswer {
    this.advance(limits, now);
    return this.answer(seq, userId, limits, now, true);
  }

  /** The outcome of an admitted entry's purchase; later polls answer it without the origin. */
  finish(seq: number, userId: string, outcome: LineOutcome, now: number): void {
    const entry = this.book.admitted.get(seq);
    if (!entry || entry.userId !== userId) return;
    this.book.admitted.delete(seq);
    this.book.resolve(seq, userId, outcome, now);
    // A refused purchase may be tried again (a smaller quantity, a reopened sale): a new click gets a
    // new entry. A reservation stays the user's one entry: a repeat click answers it without the origin.
    if (!('reservationId' in outcome)) this.book.byUser.delete(userId);
  }

  /** An admitted entry's purchase could not be run for now (origin unavailable): its turn is kept, its deadline renewed. */
  retryLater(seq: number, userId: string, limits: LineLimits, now: number): void {
    const entry = this.book.admitted.get(seq);
    if (!entry || entry.userId !== userId) return;
    entry.lastAnswerAt = now;
    entry.pollAfterMs = limits.pollMinMs;
    this.admittedDeadline(entry);
    entry.tried = true;
    this.figures.retried++;
    this.book.changed?.add(seq);
  }

  /**
   * The sale closed (sold out, paused, ended): every waiting and admitted entry resolves to `code`.
   * Ghosts whose deadline has passed are dropped first: they are gone either way.
   */
  close(code: string, limits: LineLimits, now: number): void {
    this.advance(limits, now);
    const s = this.book.waiting;
    for (let i = s.head; i < s.end; i++) {
      if (this.book.expired.has(s.seqs[i]!)) continue; // dropped by a late poll: it keeps its reason
      this.book.resolve(s.seqs[i]!, s.users[i]!, { error: code }, now);
      this.figures.closed++;
    }
    for (const [seq, entry] of this.book.admitted) {
      // A tried purchase may have reserved a unit (its answer was lost): it keeps its turn, and its
      // next poll asks the origin, whose holder lookup tells the truth. Untried ones cannot hold one.
      if (entry.tried) continue;
      this.book.admitted.delete(seq);
      this.book.resolve(seq, entry.userId, { error: code }, now);
      this.figures.closed++;
    }
    s.truncate(0);
    // A paused sale may reopen: the resolved users' next click takes a new place.
    this.book.releaseRefused();
  }

  figuresAt(now: number): LineFigures {
    const s = this.book.waiting;
    return figuresOf(this.figures, s.count, s.count > 0 ? now - s.enqueuedAt[s.head]! : 0, this.book.admitted.size);
  }

  /** The entries changed since the last call (their rows are to be written), and forgets them. */
  takeChanges(): number[] {
    return this.book.takeChanges();
  }

  get hasChanges(): boolean {
    return this.book.hasChanges;
  }

  /** Entry `seq` as stored now; undefined when the line no longer knows it (its row is deleted). */
  entryRow(seq: number): StoredEntry | undefined {
    return this.book.row(seq);
  }

  meta(): LineMeta {
    const f = this.figures;
    return { nextSeq: this.book.nextSeq, figures: { ...f, timeInLine: [...f.timeInLine] } };
  }

  /**
   * A line rebuilt from its stored entries at `loadAt`, in sequence order (LineBook.load: the time the
   * shard was down counts against nobody's poll deadline). The bucket restarts empty: no burst of
   * turns for the seconds nobody could be served.
   */
  static restore(
    rows: Iterable<StoredEntry>,
    meta: LineMeta | undefined,
    loadAt: number,
    opts: { trackChanges?: boolean } = {},
  ): WaitingLine {
    const line = new WaitingLine(opts);
    line.book.load(rows, meta?.nextSeq ?? 1, loadAt);
    if (meta) line.figures = countsFrom(meta.figures);
    line.bucket = { tokens: 0, updatedAt: loadAt, ratePerSec: 1, capacity: 1 };
    line.lastSweep = loadAt;
    return line;
  }

  private answer(seq: number, userId: string, limits: LineLimits, now: number, paced: boolean): LineAnswer {
    const admitted = this.book.admitted.get(seq);
    if (admitted) {
      if (admitted.userId !== userId) return UNKNOWN;
      if (paced && now < admitted.lastAnswerAt + admitted.pollAfterMs) {
        return { kind: 'too_soon', retryAfterMs: admitted.lastAnswerAt + admitted.pollAfterMs - now };
      }
      // No write: the turn's pacing only shortens (pollMinMs), and a load restarts its deadline anyway.
      admitted.lastAnswerAt = now;
      admitted.pollAfterMs = limits.pollMinMs;
      this.admittedDeadline(admitted);
      const { userId: u, requestId, quantity, claims } = admitted;
      return { kind: 'turn', seq, purchase: { userId: u, requestId, quantity, ...(claims ? { claims } : {}) } };
    }
    const done = this.book.outcomes.get(seq);
    if (done) return done.userId === userId ? { kind: 'done', seq, outcome: done.outcome } : UNKNOWN;
    const expired = this.book.expired.get(seq);
    if (expired) {
      return expired.userId === userId
        ? { kind: 'gone', reason: { why: 'expired', limitMs: expired.limitMs } }
        : UNKNOWN;
    }
    const s = this.book.waiting;
    const i = s.indexOf(seq);
    if (i < 0 || s.users[i] !== userId) return UNKNOWN;
    const limitMs = MISSED_POLLS_TO_DROP * s.pollAfter[i]!;
    if (now > s.lastAnswerAt[i]! + limitMs) {
      // Past its own deadline and not yet swept: gone now, not revived by a late poll (the sweep
      // removes the slot later without counting it again).
      this.drop(seq, userId, limitMs, now);
      return { kind: 'gone', reason: { why: 'expired', limitMs } };
    }
    const nextAllowed = s.lastAnswerAt[i]! + s.pollAfter[i]!;
    if (!paced) {
      // A repeat click: where the entry stands, and the time left until the poll it was told to make.
      const view = waitingAnswer(this.book, this.bucket, i, limits, now, false);
      return { ...view, pollAfterMs: Math.max(1, nextAllowed - now) };
    }
    if (now < nextAllowed) return { kind: 'too_soon', retryAfterMs: nextAllowed - now };
    return waitingAnswer(this.book, this.bucket, i, limits, now, true);
  }

  /** Hands the tokens accrued since the last call to the head of the line, each at the time it accrued. */
  private advance(limits: LineLimits, now: number): void {
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
    const { ratePerSec } = limits;
    const capacity = capacityOf(limits);
    if (now > this.admittedCheckAt && this.book.admitted.size > 0) {
      let next = Number.POSITIVE_INFINITY;
      for (const [seq, entry] of this.book.admitted) {
        const deadline = deadlineOf(entry);
        if (now <= deadline) {
          next = Math.min(next, deadline);
          continue;
        }
        // An admitted ghost: its unspent token goes to the next in line.
        this.book.admitted.delete(seq);
        this.drop(seq, entry.userId, MISSED_POLLS_TO_DROP * entry.pollAfterMs, now);
        const current = level(this.bucket, ratePerSec, capacity, now);
        this.bucket = { tokens: Math.min(capacity, current + 1), updatedAt: now, ratePerSec, capacity };
      }
      this.admittedCheckAt = next;
    }
    if (this.waitingCount === 0) return;
    let available = level(this.bucket, ratePerSec, capacity, now);
    // When the bucket last held `base` tokens: token number k (k > base) accrued at from + (k − base)/rate.
    const from = this.bucket ? Math.min(now, this.bucket.updatedAt) : now;
    const base = this.bucket ? this.bucket.tokens : available;
    let spent = 0;
    const s = this.book.waiting;
    while (available >= 1 && this.waitingCount > 0) {
      const i = s.shift();
      const accrued = from + ((spent + 1 - base) * 1000) / ratePerSec;
      const turnAt = Math.min(now, Math.max(from, s.enqueuedAt[i]!, accrued));
      const seq = s.seqs[i]!;
      const userId = s.users[i]!;
      if (this.book.expired.has(seq) || turnAt > s.lastAnswerAt[i]! + MISSED_POLLS_TO_DROP * s.pollAfter[i]!) {
        // Gone before its turn came (or dropped already by a late poll): skipped, the token stays for the next.
        if (!this.book.expired.has(seq)) this.drop(seq, userId, MISSED_POLLS_TO_DROP * s.pollAfter[i]!, now);
        this.book.left(seq, true);
        continue;
      }
      this.book.admit(i);
      this.admittedDeadline(this.book.admitted.get(seq)!);
      this.book.left(seq, true);
      countTurn(this.figures, turnAt - s.enqueuedAt[i]!);
      available--;
      spent++;
    }
    this.bucket = { tokens: available, updatedAt: now, ratePerSec, capacity };
    if (s.mostlySpent) this.sweep(now);
  }

  /** An admitted entry's deadline was set: the next check of admitted entries comes no later than it. */
  private admittedDeadline(entry: { lastAnswerAt: number; pollAfterMs: number }): void {
    this.admittedCheckAt = Math.min(this.admittedCheckAt, deadlineOf(entry));
  }

  /** Drops waiting ghosts anywhere in the line, compacts the slots, forgets old outcomes. */
  private sweep(now: number): void {
    this.lastSweep = now;
    const s = this.book.waiting;
    s.compact((i) => {
      const seq = s.seqs[i]!;
      if (now > s.lastAnswerAt[i]! + MISSED_POLLS_TO_DROP * s.pollAfter[i]! && !this.book.expired.has(seq)) {
        this.drop(seq, s.users[i]!, MISSED_POLLS_TO_DROP * s.pollAfter[i]!, now);
      }
      if (!this.book.expired.has(seq)) return true;
      // Dropped now, or by a late poll earlier (only its slot was left): out of the line.
      this.book.left(seq, false);
      return false;
    });
    this.book.forgetOld(now);
  }

  /** A ghost leaves the line (LineBook.drop), counted. */
  private drop(seq: number, userId: string, limitMs: number, now: number): void {
    this.figures.dropped++;
    this.book.drop(seq, userId, limitMs, now);
  }
}
