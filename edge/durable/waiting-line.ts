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
 * (`full`), which bounds the shard's memory and storage whatever number of accounts joins. The line is
 * kept as parallel arrays (no object per waiting entry) and compacted by a sweep at most once a
 * second, which also drops the ghosts in the middle, so positions are exact up to that second.
 *
 * Persistence (AdmissionDO, edge/durable/line-store.ts): a line made with `trackChanges` notes the
 * sequence number of every entry that changed; the shard writes those entries' rows (`entryRow`) in
 * batches, and a restarted shard rebuilds the line from them (`WaitingLine.restore`) in the same
 * order, with a grace so the time it was down counts against nobody's poll deadline.
 */
import type { Claims } from '../../contract/eligibility.js';
import {
  MISSED_POLLS_TO_DROP,
  OUTCOME_KEPT_MS,
  SWEEP_EVERY_MS,
  TIME_IN_LINE_BUCKETS_MS,
  type KeptPurchase,
  type LineAnswer,
  type LineFigures,
  type LineLimits,
  type LineMeta,
  type LineOutcome,
  type StoredEntry,
} from './line-entries.js';
import { level, type Bucket } from './token-bucket.js';

const UNKNOWN: LineAnswer = { kind: 'gone', reason: { why: 'unknown' } };

interface Admitted extends KeptPurchase {
  enqueuedAt: number;
  lastAnswerAt: number;
  pollAfterMs: number;
  /** Its purchase was forwarded and the outcome is unknown (origin timeout): only the origin can say. */
  tried: boolean;
}

export class WaitingLine {
  private bucket: Bucket | undefined;
  // The waiting entries, oldest first, from index `head` on: one slot per entry in each array.
  private seqs: number[] = [];
  private users: string[] = [];
  private requests: string[] = [];
  private quantities: number[] = [];
  private claims: (Claims | undefined)[] = [];
  private enqueuedAt: number[] = [];
  private lastAnswerAt: number[] = [];
  private pollAfter: number[] = [];
  private head = 0;
  private nextSeq = 1;
  private lastSweep = 0;
  private readonly admittedEntries = new Map<number, Admitted>();
  private readonly outcomes = new Map<number, { userId: string; outcome: LineOutcome; at: number }>();
  /** Entries dropped as ghosts, kept OUTCOME_KEPT_MS so a late poll learns why its place is gone. */
  private readonly expired = new Map<number, { userId: string; limitMs: number; at: number }>();
  /** Every entry a user holds here (waiting, admitted or finished): one per user. */
  private readonly byUser = new Map<string, number>();
  /** Sequence numbers of the entries changed since `takeChanges` (only with `trackChanges`). */
  private readonly changed: Set<number> | undefined;
  private figures = {
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

  constructor(opts: { trackChanges?: boolean } = {}) {
    if (opts.trackChanges) this.changed = new Set();
  }

  get waitingCount(): number {
    return this.seqs.length - this.head;
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
    const existing = this.byUser.get(purchase.userId);
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
    const seq = this.nextSeq++;
    this.seqs.push(seq);
    this.users.push(purchase.userId);
    this.requests.push(purchase.requestId);
    this.quantities.push(purchase.quantity);
    this.claims.push(purchase.claims);
    this.enqueuedAt.push(now);
    this.lastAnswerAt.push(now);
    this.pollAfter.push(limits.pollMinMs);
    this.byUser.set(purchase.userId, seq);
    this.figures.entered++;
    this.changed?.add(seq);
    return this.waitingAnswer(this.seqs.length - 1, limits, now);
  }

  /** A poll of entry `seq` by `userId`: waiting (position, ETA), its turn, its outcome, too soon, or gone. */
  poll(seq: number, userId: string, limits: LineLimits, now: number): LineAnswer {
    this.advance(limits, now);
    return this.answer(seq, userId, limits, now, true);
  }

  /** The outcome of an admitted entry's purchase; later polls answer it without the origin. */
  finish(seq: number, userId: string, outcome: LineOutcome, now: number): void {
    const entry = this.admittedEntries.get(seq);
    if (!entry || entry.userId !== userId) return;
    this.admittedEntries.delete(seq);
    this.outcomes.set(seq, { userId, outcome, at: now });
    this.changed?.add(seq);
    // A refused purchase may be tried again (a smaller quantity, a reopened sale): a new click gets a
    // new entry. A reservation stays the user's one entry: a repeat click answers it without the origin.
    if (!('reservationId' in outcome)) this.byUser.delete(userId);
  }

  /** An admitted entry's purchase could not be run for now (origin unavailable): its turn is kept, its deadline renewed. */
  retryLater(seq: number, userId: string, limits: LineLimits, now: number): void {
    const entry = this.admittedEntries.get(seq);
    if (!entry || entry.userId !== userId) return;
    entry.lastAnswerAt = now;
    entry.pollAfterMs = limits.pollMinMs;
    entry.tried = true;
    this.figures.retried++;
    this.changed?.add(seq);
  }

  /**
   * The sale closed (sold out, paused, ended): every waiting and admitted entry resolves to `code`.
   * Ghosts whose deadline has passed are dropped first: they are gone either way.
   */
  close(code: string, limits: LineLimits, now: number): void {
    this.advance(limits, now);
    for (let i = this.head; i < this.seqs.length; i++) {
      if (this.expired.has(this.seqs[i]!)) continue; // dropped by a late poll: it keeps its reason
      this.outcomes.set(this.seqs[i]!, { userId: this.users[i]!, outcome: { error: code }, at: now });
      this.figures.closed++;
      this.changed?.add(this.seqs[i]!);
    }
    for (const [seq, entry] of this.admittedEntries) {
      // A tried purchase may have reserved a unit (its answer was lost): it keeps its turn, and its
      // next poll asks the origin, whose holder lookup tells the truth. Untried ones cannot hold one.
      if (entry.tried) continue;
      this.admittedEntries.delete(seq);
      this.outcomes.set(seq, { userId: entry.userId, outcome: { error: code }, at: now });
      this.figures.closed++;
      this.changed?.add(seq);
    }
    this.truncate(0);
    // A paused sale may reopen: the resolved users' next click takes a new place.
    for (const [userId, seq] of this.byUser) {
      const done = this.outcomes.get(seq);
      if (done && !('reservationId' in done.outcome)) this.byUser.delete(userId);
    }
  }

  figuresAt(now: number): LineFigures {
    const f = this.figures;
    let cumulative = 0;
    return {
      waiting: this.waitingCount,
      oldestWaitMs: this.waitingCount > 0 ? now - this.enqueuedAt[this.head]! : 0,
      turnsPending: this.admittedEntries.size,
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

  /** The entries changed since the last call (their rows are to be written), and forgets them. */
  takeChanges(): number[] {
    if (!this.changed || this.changed.size === 0) return [];
    const seqs = [...this.changed];
    this.changed.clear();
    return seqs;
  }

  get hasChanges(): boolean {
    return (this.changed?.size ?? 0) > 0;
  }

  /** Entry `seq` as stored now; undefined when the line no longer knows it (its row is deleted). */
  entryRow(seq: number): StoredEntry | undefined {
    const admitted = this.admittedEntries.get(seq);
    if (admitted) return { seq, state: 'admitted', ...admitted };
    const done = this.outcomes.get(seq);
    if (done) return { seq, state: 'done', userId: done.userId, outcome: done.outcome, endedAt: done.at };
    const gone = this.expired.get(seq);
    if (gone) return { seq, state: 'dropped', userId: gone.userId, limitMs: gone.limitMs, endedAt: gone.at };
    const i = this.indexOf(seq);
    if (i < 0) return undefined;
    const claims = this.claims[i];
    return {
      seq,
      state: 'waiting',
      userId: this.users[i]!,
      requestId: this.requests[i]!,
      quantity: this.quantities[i]!,
      ...(claims ? { claims } : {}),
      enqueuedAt: this.enqueuedAt[i]!,
      lastAnswerAt: this.lastAnswerAt[i]!,
      pollAfterMs: this.pollAfter[i]!,
      tried: false,
    };
  }

  meta(): LineMeta {
    const f = this.figures;
    return { nextSeq: this.nextSeq, figures: { ...f, timeInLine: [...f.timeInLine] } };
  }

  /**
   * A line rebuilt from its stored entries at `loadAt`, in sequence order. The time the shard was
   * down counts against nobody: each entry's pacing clock restarts so that its poll is allowed at
   * once and its deadline is 2 × its stored pollAfterMs after the load (a buyer told to come back in
   * pollAfterMs just before a crash is still on time; the stored interval is never shorter than the
   * last one given). The bucket restarts empty: no burst of
   * turns for the seconds nobody could be served.
   */
  static restore(
    rows: Iterable<StoredEntry>,
    meta: LineMeta | undefined,
    loadAt: number,
    opts: { trackChanges?: boolean } = {},
  ): WaitingLine {
    const line = new WaitingLine(opts);
    const sorted = [...rows].sort((a, b) => a.seq - b.seq);
    // Stored pacing may be older than the last poll (polls write only a longer interval): the clock
    // restarts so the next poll is allowed now and is due within 2 × the stored interval.
    const graced = (pollAfterMs: number) => loadAt - pollAfterMs;
    let maxSeq = 0;
    for (const row of sorted) {
      maxSeq = Math.max(maxSeq, row.seq);
      switch (row.state) {
        case 'waiting':
          line.seqs.push(row.seq);
          line.users.push(row.userId);
          line.requests.push(row.requestId);
          line.quantities.push(row.quantity);
          line.claims.push(row.claims);
          line.enqueuedAt.push(row.enqueuedAt);
          line.lastAnswerAt.push(graced(row.pollAfterMs));
          line.pollAfter.push(row.pollAfterMs);
          line.byUser.set(row.userId, row.seq);
          break;
        case 'admitted': {
          const { seq, state: _state, ...entry } = row;
          line.admittedEntries.set(seq, { ...entry, lastAnswerAt: graced(row.pollAfterMs) });
          line.byUser.set(row.userId, seq);
          break;
        }
        case 'done':
          line.outcomes.set(row.seq, { userId: row.userId, outcome: row.outcome, at: row.endedAt });
          // A reservation stays the user's one entry (a repeat click answers it); a refusal does not.
          if ('reservationId' in row.outcome) line.byUser.set(row.userId, row.seq);
          break;
        case 'dropped':
          line.expired.set(row.seq, { userId: row.userId, limitMs: row.limitMs, at: row.endedAt });
          break;
      }
    }
    if (meta)
      line.figures = {
        ...meta.figures,
        refusedFull: meta.figures.refusedFull ?? 0,
        timeInLine: [...meta.figures.timeInLine],
      };
    line.nextSeq = Math.max(meta?.nextSeq ?? 1, maxSeq + 1);
    line.bucket = { tokens: 0, updatedAt: loadAt, ratePerSec: 1, capacity: 1 };
    line.lastSweep = loadAt;
    return line;
  }

  private answer(seq: number, userId: string, limits: LineLimits, now: number, paced: boolean): LineAnswer {
    const admitted = this.admittedEntries.get(seq);
    if (admitted) {
      if (admitted.userId !== userId) return UNKNOWN;
      if (paced && now < admitted.lastAnswerAt + admitted.pollAfterMs) {
        return { kind: 'too_soon', retryAfterMs: admitted.lastAnswerAt + admitted.pollAfterMs - now };
      }
      // No write: the turn's pacing only shortens (pollMinMs), and a load restarts its deadline anyway.
      admitted.lastAnswerAt = now;
      admitted.pollAfterMs = limits.pollMinMs;
      const { userId: u, requestId, quantity, claims } = admitted;
      return { kind: 'turn', seq, purchase: { userId: u, requestId, quantity, ...(claims ? { claims } : {}) } };
    }
    const done = this.outcomes.get(seq);
    if (done) return done.userId === userId ? { kind: 'done', seq, outcome: done.outcome } : UNKNOWN;
    const expired = this.expired.get(seq);
    if (expired) {
      return expired.userId === userId
        ? { kind: 'gone', reason: { why: 'expired', limitMs: expired.limitMs } }
        : UNKNOWN;
    }
    const i = this.indexOf(seq);
    if (i < 0 || this.users[i] !== userId) return UNKNOWN;
    const limitMs = MISSED_POLLS_TO_DROP * this.pollAfter[i]!;
    if (now > this.lastAnswerAt[i]! + limitMs) {
      // Past its own deadline and not yet swept: gone now, not revived by a late poll (the sweep
      // removes the slot later without counting it again).
      this.drop(seq, userId, limitMs, now);
      return { kind: 'gone', reason: { why: 'expired', limitMs } };
    }
    const nextAllowed = this.lastAnswerAt[i]! + this.pollAfter[i]!;
    if (!paced) {
      // A repeat click: where the entry stands, and the time left until the poll it was told to make.
      const view = this.waitingAnswer(i, limits, now, false);
      return { ...view, pollAfterMs: Math.max(1, nextAllowed - now) };
    }
    if (now < nextAllowed) return { kind: 'too_soon', retryAfterMs: nextAllowed - now };
    return this.waitingAnswer(i, limits, now);
  }

  /**
   * Position = waiting entries ahead; ETA = when the tokens for them and this one will have accrued.
   * pollAfterMs shrinks as the turn nears (a fraction of the ETA, never below pollMinMs), and the
   * fraction grows with the line so the whole line's polls stay near the shard's poll budget: with
   * pollAfter ≈ k·ETA, n entries poll about rate/k · (1 + ln n) times a second. It is never above
   * pollMaxMs, so a place at the back must show its holder is still there every pollMaxMs or so
   * (3 × it at most), which adds at most maxWaiting / pollMaxMs polls a second.
   */
  private waitingAnswer(
    i: number,
    limits: LineLimits,
    now: number,
    record = true,
  ): Extract<LineAnswer, { kind: 'waiting' }> {
    const position = i - this.head;
    const available = level(this.bucket, limits.ratePerSec, capacityOf(limits), now);
    const etaMs = Math.max(0, ((position + 1 - available) * 1000) / limits.ratePerSec);
    const k = Math.max(
      0.5,
      (limits.ratePerSec * (1 + Math.log(Math.max(1, this.waitingCount)))) / limits.pollBudgetPerSec,
    );
    const pollAfterMs = Math.max(
      limits.pollMinMs,
      Math.min(limits.pollMaxMs ?? Number.POSITIVE_INFINITY, Math.ceil(etaMs * k)),
    );
    if (record) {
      // Stored pacing only has to be no shorter than any pollAfterMs given since (a load restarts the
      // deadlines from it): a poll writes its row only when it lengthens the interval, so most polls
      // write nothing (pollAfterMs shrinks as the turn nears).
      if (pollAfterMs > this.pollAfter[i]!) this.changed?.add(this.seqs[i]!);
      this.lastAnswerAt[i] = now;
      this.pollAfter[i] = pollAfterMs;
    }
    return { kind: 'waiting', seq: this.seqs[i]!, position, etaMs: Math.ceil(etaMs), pollAfterMs };
  }

  /** Hands the tokens accrued since the last call to the head of the line, each at the time it accrued. */
  private advance(limits: LineLimits, now: number): void {
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
    const { ratePerSec } = limits;
    const capacity = capacityOf(limits);
    for (const [seq, entry] of this.admittedEntries) {
      if (now <= entry.lastAnswerAt + MISSED_POLLS_TO_DROP * entry.pollAfterMs) continue;
      // An admitted ghost: its unspent token goes to the next in line.
      this.admittedEntries.delete(seq);
      this.drop(seq, entry.userId, MISSED_POLLS_TO_DROP * entry.pollAfterMs, now);
      const current = level(this.bucket, ratePerSec, capacity, now);
      this.bucket = { tokens: Math.min(capacity, current + 1), updatedAt: now, ratePerSec, capacity };
    }
    if (this.waitingCount === 0) return;
    let available = level(this.bucket, ratePerSec, capacity, now);
    // When the bucket last held `base` tokens: token number k (k > base) accrued at from + (k − base)/rate.
    const from = this.bucket ? Math.min(now, this.bucket.updatedAt) : now;
    const base = this.bucket ? this.bucket.tokens : available;
    let spent = 0;
    while (available >= 1 && this.waitingCount > 0) {
      const i = this.head++;
      const accrued = from + ((spent + 1 - base) * 1000) / ratePerSec;
      const turnAt = Math.min(now, Math.max(from, this.enqueuedAt[i]!, accrued));
      const seq = this.seqs[i]!;
      const userId = this.users[i]!;
      if (this.expired.has(seq) || turnAt > this.lastAnswerAt[i]! + MISSED_POLLS_TO_DROP * this.pollAfter[i]!) {
        // Gone before its turn came (or dropped already by a late poll): skipped, the token stays for the next.
        if (!this.expired.has(seq)) this.drop(seq, userId, MISSED_POLLS_TO_DROP * this.pollAfter[i]!, now);
        continue;
      }
      this.admittedEntries.set(seq, {
        userId,
        requestId: this.requests[i]!,
        quantity: this.quantities[i]!,
        claims: this.claims[i],
        enqueuedAt: this.enqueuedAt[i]!,
        lastAnswerAt: this.lastAnswerAt[i]!,
        pollAfterMs: this.pollAfter[i]!,
        tried: false,
      });
      this.changed?.add(seq);
      this.record(turnAt - this.enqueuedAt[i]!);
      available--;
      spent++;
    }
    this.bucket = { tokens: available, updatedAt: now, ratePerSec, capacity };
    if (this.head > 1024 && this.head * 2 > this.seqs.length) this.sweep(now);
  }

  /** Drops waiting ghosts anywhere in the line, compacts the arrays, forgets old outcomes. */
  private sweep(now: number): void {
    this.lastSweep = now;
    let kept = 0;
    for (let i = this.head; i < this.seqs.length; i++) {
      if (this.expired.has(this.seqs[i]!)) continue; // dropped by a late poll: only its slot is left
      if (now > this.lastAnswerAt[i]! + MISSED_POLLS_TO_DROP * this.pollAfter[i]!) {
        this.drop(this.seqs[i]!, this.users[i]!, MISSED_POLLS_TO_DROP * this.pollAfter[i]!, now);
        continue;
      }
      this.seqs[kept] = this.seqs[i]!;
      this.users[kept] = this.users[i]!;
      this.requests[kept] = this.requests[i]!;
      this.quantities[kept] = this.quantities[i]!;
      this.claims[kept] = this.claims[i];
      this.enqueuedAt[kept] = this.enqueuedAt[i]!;
      this.lastAnswerAt[kept] = this.lastAnswerAt[i]!;
      this.pollAfter[kept] = this.pollAfter[i]!;
      kept++;
    }
    this.truncate(kept);
    for (const [seq, done] of this.outcomes) {
      if (now - done.at <= OUTCOME_KEPT_MS) continue;
      this.outcomes.delete(seq);
      this.changed?.add(seq);
      if (this.byUser.get(done.userId) === seq) this.byUser.delete(done.userId);
    }
    for (const [seq, gone] of this.expired) {
      if (now - gone.at <= OUTCOME_KEPT_MS) continue;
      this.expired.delete(seq);
      this.changed?.add(seq);
    }
  }

  /** A ghost leaves the line; its tombstone answers a late poll with the reason. */
  private drop(seq: number, userId: string, limitMs: number, now: number): void {
    this.byUser.delete(userId);
    this.figures.dropped++;
    this.expired.set(seq, { userId, limitMs, at: now });
    this.changed?.add(seq);
  }

  private truncate(length: number): void {
    for (const a of [
      this.seqs,
      this.users,
      this.requests,
      this.quantities,
      this.claims,
      this.enqueuedAt,
      this.lastAnswerAt,
      this.pollAfter,
    ]) {
      a.length = length;
    }
    this.head = 0;
  }

  /** Index of a waiting entry by its sequence number (ascending from head), or −1. */
  private indexOf(seq: number): number {
    let lo = this.head;
    let hi = this.seqs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.seqs[mid]!;
      if (s === seq) return mid;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  private record(ms: number): void {
    this.figures.admitted++;
    this.figures.timeInLineSumMs += ms;
    let b = TIME_IN_LINE_BUCKETS_MS.findIndex((bound) => ms <= bound);
    if (b < 0) b = TIME_IN_LINE_BUCKETS_MS.length;
    this.figures.timeInLine[b]!++;
  }
}

/** A shard's burst: one second of its rate, at least one token. */
function capacityOf(limits: LineLimits): number {
  return Math.max(1, limits.ratePerSec);
}
