/**
 * The waiting entries of one admission shard's line (edge/durable/waiting-line.ts, which holds the
 * rules), oldest first: parallel arrays with one slot per entry in each, no object per waiting
 * entry. The entries still waiting are those from index `head` on; the slots before it are spent
 * (their turn came) and stay until the next compaction. Sequence numbers ascend along the arrays, so
 * an entry is found by binary search. The line compacts them in its sweep (at most once a second),
 * which also removes the ghosts in the middle, so positions are exact up to that second.
 */
import type { Claims } from '../../contract/eligibility.js';
import type { KeptPurchase } from './line-entries.js';

export class WaitingSlots {
  readonly seqs: number[] = [];
  readonly users: string[] = [];
  readonly requests: string[] = [];
  readonly quantities: number[] = [];
  readonly claims: (Claims | undefined)[] = [];
  readonly enqueuedAt: number[] = [];
  readonly lastAnswerAt: number[] = [];
  readonly pollAfter: number[] = [];
  /** Index of the oldest waiting entry. */
  private first = 0;

  get head(): number {
    return this.first;
  }

  /** One past the newest slot: the waiting entries are the indexes head ≤ i < end. */
  get end(): number {
    return this.seqs.length;
  }

  /** Entries still waiting. */
  get count(): number {
    return this.seqs.length - this.first;
  }

  /** More than 1024 spent slots, and more spent than waiting: worth a compaction now. */
  get mostlySpent(): boolean {
    return this.first > 1024 && this.first * 2 > this.seqs.length;
  }

  /** A new entry at the end of the line (its `seq` above every other); its index. */
  push(seq: number, purchase: KeptPurchase, enqueuedAt: number, lastAnswerAt: number, pollAfterMs: number): number {
    this.seqs.push(seq);
    this.users.push(purchase.userId);
    this.requests.push(purchase.requestId);
    this.quantities.push(purchase.quantity);
    this.claims.push(purchase.claims);
    this.enqueuedAt.push(enqueuedAt);
    this.lastAnswerAt.push(lastAnswerAt);
    this.pollAfter.push(pollAfterMs);
    return this.seqs.length - 1;
  }

  /** The oldest waiting entry leaves the line (its turn came, or it was skipped); its index. */
  shift(): number {
    return this.first++;
  }

  /** Index of a waiting entry by its sequence number (ascending from head), or −1. */
  indexOf(seq: number): number {
    let lo = this.first;
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

  /**
   * Moves the waiting entries `keep` accepts to the front, in order, and drops the rest and the spent
   * slots. `keep` is asked once per waiting entry, oldest first.
   */
  compact(keep: (i: number) => boolean): void {
    let kept = 0;
    for (let i = this.first; i < this.seqs.length; i++) {
      if (!keep(i)) continue;
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
  }

  /** Keeps the first `length` slots, all waiting. */
  truncate(length: number): void {
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
    this.first = 0;
  }
}
