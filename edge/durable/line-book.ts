/**
 * Every entry one admission shard's line knows, by state (the rules that move them are
 * edge/durable/waiting-line.ts): waiting (edge/durable/waiting-slots.ts), admitted (its turn came:
 * its next poll runs the kept purchase), done (its outcome) and dropped (a ghost's tombstone); and
 * the entry each user holds.
 *
 * Persistence (AdmissionDO, edge/durable/line-store.ts): a book made with `trackChanges` notes the
 * sequence number of every entry that changed; the shard writes those entries' rows (`row`) in
 * batches, and a restarted shard rebuilds the book from them (`load`) in the same order, with a
 * grace so the time it was down counts against nobody's poll deadline.
 */
import { OUTCOME_KEPT_MS, type KeptPurchase, type LineOutcome, type StoredEntry } from './line-entries.js';
import { WaitingSlots } from './waiting-slots.js';

interface Admitted extends KeptPurchase {
  enqueuedAt: number;
  lastAnswerAt: number;
  pollAfterMs: number;
  /** Its purchase was forwarded and the outcome is unknown (origin timeout): only the origin can say. */
  tried: boolean;
}

export class LineBook {
  /** The waiting entries, oldest first. */
  readonly waiting = new WaitingSlots();
  readonly admitted = new Map<number, Admitted>();
  readonly outcomes = new Map<number, { userId: string; outcome: LineOutcome; at: number }>();
  /** Entries dropped as ghosts, kept OUTCOME_KEPT_MS so a late poll learns why its place is gone. */
  readonly expired = new Map<number, { userId: string; limitMs: number; at: number }>();
  /** Every entry a user holds here (waiting, admitted or finished): one per user. */
  readonly byUser = new Map<string, number>();
  /** Sequence numbers of the entries changed since `takeChanges` (only with `trackChanges`). */
  readonly changed: Set<number> | undefined;
  /** The next entry's sequence number: numbers only grow, across restarts too. */
  nextSeq = 1;
  /**
   * Waiting entries that left the slots since `takeChanges` whose new row is not written yet: a
   * restart would put them back in line. Those that left at the head (a turn, a skipped ghost) are
   * ahead of every entry still waiting; those swept from the middle are kept by sequence number.
   */
  private unstoredAtHead = 0;
  private readonly unstoredSwept: number[] = [];

  constructor(trackChanges: boolean) {
    if (trackChanges) this.changed = new Set();
  }

  /** The entries changed since the last call (their rows are to be written), and forgets them. */
  takeChanges(): number[] {
    if (!this.changed || this.changed.size === 0) return [];
    const seqs = [...this.changed];
    this.changed.clear();
    this.unstoredAtHead = 0;
    this.unstoredSwept.length = 0;
    return seqs;
  }

  /**
   * Waiting entry `seq` left the slots, at the head or swept from the middle. Until its row is
   * written (the next `takeChanges`) it still counts as ahead of those behind it (`unstoredAhead`).
   */
  left(seq: number, atHead: boolean): void {
    if (!this.changed?.has(seq)) return; // its row already says it left
    if (atHead) this.unstoredAtHead++;
    else this.unstoredSwept.push(seq);
  }

  /**
   * Entries ahead of waiting entry `seq` that left the line in memory but not yet in storage. A
   * position told counts them, so it is the position a restart would give: it never rises after one.
   */
  unstoredAhead(seq: number): number {
    let n = this.unstoredAtHead;
    for (const swept of this.unstoredSwept) if (swept < seq) n++;
    return n;
  }

  get hasChanges(): boolean {
    return (this.changed?.size ?? 0) > 0;
  }

  /** A new waiting entry at the end of the line, numbered next; its index among the waiting slots. */
  join(purchase: KeptPurchase, now: number, pollAfterMs: number): number {
    const seq = this.nextSeq++;
    const i = this.waiting.push(seq, purchase, now, now, pollAfterMs);
    this.byUser.set(purchase.userId, seq);
    this.changed?.add(seq);
    return i;
  }

  /** Waiting entry `i` (just taken by WaitingSlots.shift) is admitted, with its pacing as it stands. */
  admit(i: number): void {
    const s = this.waiting;
    const seq = s.seqs[i]!;
    this.admitted.set(seq, {
      userId: s.users[i]!,
      requestId: s.requests[i]!,
      quantity: s.quantities[i]!,
      claims: s.claims[i],
      enqueuedAt: s.enqueuedAt[i]!,
      lastAnswerAt: s.lastAnswerAt[i]!,
      pollAfterMs: s.pollAfter[i]!,
      tried: false,
    });
    this.changed?.add(seq);
  }

  /** Entry `seq` of `userId` ended with `outcome`, kept OUTCOME_KEPT_MS for repeated polls. */
  resolve(seq: number, userId: string, outcome: LineOutcome, now: number): void {
    this.outcomes.set(seq, { userId, outcome, at: now });
    this.changed?.add(seq);
  }

  /** The users whose entry ended refused hold none any more: their next click takes a new place. */
  releaseRefused(): void {
    for (const [userId, seq] of this.byUser) {
      const done = this.outcomes.get(seq);
      if (done && !('reservationId' in done.outcome)) this.byUser.delete(userId);
    }
  }

  /** A ghost leaves the line; its tombstone answers a late poll with the reason. */
  drop(seq: number, userId: string, limitMs: number, now: number): void {
    this.byUser.delete(userId);
    this.expired.set(seq, { userId, limitMs, at: now });
    this.changed?.add(seq);
  }

  /** Entry `seq` as stored now; undefined when the line no longer knows it (its row is deleted). */
  row(seq: number): StoredEntry | undefined {
    const admitted = this.admitted.get(seq);
    if (admitted) return { seq, state: 'admitted', ...admitted };
    const done = this.outcomes.get(seq);
    if (done) return { seq, state: 'done', userId: done.userId, outcome: done.outcome, endedAt: done.at };
    const gone = this.expired.get(seq);
    if (gone) return { seq, state: 'dropped', userId: gone.userId, limitMs: gone.limitMs, endedAt: gone.at };
    const s = this.waiting;
    const i = s.indexOf(seq);
    if (i < 0) return undefined;
    const claims = s.claims[i];
    return {
      seq,
      state: 'waiting',
      userId: s.users[i]!,
      requestId: s.requests[i]!,
      quantity: s.quantities[i]!,
      ...(claims ? { claims } : {}),
      enqueuedAt: s.enqueuedAt[i]!,
      lastAnswerAt: s.lastAnswerAt[i]!,
      pollAfterMs: s.pollAfter[i]!,
      tried: false,
    };
  }

  /**
   * The stored entries, loaded in sequence order at `loadAt` into this (empty) book, numbering on
   * from `nextSeq` (as stored) or past the highest of them. The time the shard was down counts
   * against nobody: each waiting or admitted entry's pacing clock restarts so that its poll is allowed
   * at once and its deadline is 2 × its stored pollAfterMs after the load (a buyer told to come back
   * in pollAfterMs just before a crash is still on time; the stored interval is never shorter than
   * the last one given).
   */
  load(rows: Iterable<StoredEntry>, nextSeq: number, loadAt: number): void {
    const sorted = [...rows].sort((a, b) => a.seq - b.seq);
    // Stored pacing may be older than the last poll (polls write only a longer interval): the clock
    // restarts so the next poll is allowed now and is due within 2 × the stored interval.
    const graced = (pollAfterMs: number) => loadAt - pollAfterMs;
    let maxSeq = 0;
    for (const row of sorted) {
      maxSeq = Math.max(maxSeq, row.seq);
      switch (row.state) {
        case 'waiting':
          this.waiting.push(row.seq, row, row.enqueuedAt, graced(row.pollAfterMs), row.pollAfterMs);
          this.byUser.set(row.userId, row.seq);
          break;
        case 'admitted': {
          const { seq, state: _state, ...entry } = row;
          this.admitted.set(seq, { ...entry, lastAnswerAt: graced(row.pollAfterMs) });
          this.byUser.set(row.userId, seq);
          break;
        }
        case 'done':
          this.outcomes.set(row.seq, { userId: row.userId, outcome: row.outcome, at: row.endedAt });
          // A reservation stays the user's one entry (a repeat click answers it); a refusal does not.
          if ('reservationId' in row.outcome) this.byUser.set(row.userId, row.seq);
          break;
        case 'dropped':
          this.expired.set(row.seq, { userId: row.userId, limitMs: row.limitMs, at: row.endedAt });
          break;
      }
    }
    this.nextSeq = Math.max(nextSeq, maxSeq + 1);
  }

  /** Forgets the outcomes and the tombstones older than OUTCOME_KEPT_MS (their rows are deleted). */
  forgetOld(now: number): void {
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
}
