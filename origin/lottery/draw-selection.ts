/**
 * The draw order taken in bounded memory: one pass over the closed list keeps only the
 * `capacity` entrants with the smallest tickets (strictly after a given ticket) in a binary max-heap,
 * so a million entrants for 100k units hold 100k candidates, not a million. The draw walks the
 * candidates in ascending ticket order; when they run out with units left (entrants excluded or
 * asking for more than was left), it takes the next `capacity` after the last one in another pass.
 * Tickets and entrant ids are kept as 32-bit words in typed arrays: an entrant that does not make the
 * cut costs one comparison and nothing is allocated for it.
 */
import { hexOf } from './draw-hmac.js';

/** Above any slot index of the packed sort (a larger selection sorts with the comparator alone). */
const SLOT_SPAN = 2 ** 21;

export interface Candidate {
  userId: string;
  quantity: number;
  /** 1-based place in the closed list. */
  entry: number;
  entrant: string;
  ticket: string;
}

/**
 * The entrants a selection kept, in no particular order, as plain arrays (what a hashing worker sends
 * back: draw-hash-threads.ts); `users.length` of them.
 */
export interface KeptCandidates {
  tickets: Int32Array;
  entrants: Int32Array;
  users: string[];
  quantities: Int32Array;
  entries: Int32Array;
}

/** Unsigned comparison of two 8-word hashes: <0, 0, >0. */
export function compareWords(a: Int32Array, ai: number, b: Int32Array, bi: number): number {
  for (let i = 0; i < 8; i++) {
    const x = a[ai + i]! >>> 0;
    const y = b[bi + i]! >>> 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

export class DrawSelection {
  private readonly tickets: Int32Array;
  private readonly entrants: Int32Array;
  private readonly users: string[];
  private readonly quantities: Int32Array;
  private readonly entries: Int32Array;
  /** Slot indexes, a max-heap by (ticket, entrant) over [0, size). */
  private readonly heap: Int32Array;
  private size = 0;

  constructor(readonly capacity: number) {
    this.tickets = new Int32Array(capacity * 8);
    this.entrants = new Int32Array(capacity * 8);
    this.users = new Array<string>(capacity);
    this.quantities = new Int32Array(capacity);
    this.entries = new Int32Array(capacity);
    this.heap = new Int32Array(capacity);
  }

  get length(): number {
    return this.size;
  }

  get isFull(): boolean {
    return this.size === this.capacity;
  }

  /** The first word (unsigned) of the largest ticket kept; meaningful once full. */
  largestFirstWord(): number {
    return this.size === 0 ? 0xffffffff : this.tickets[this.heap[0]! * 8]! >>> 0;
  }

  /** Whether `offer` would keep this entrant now (a cheap test before building its record). */
  wouldKeep(ticket: Int32Array, ti: number, entrant: Int32Array, ei: number): boolean {
    if (this.size < this.capacity) return true;
    if (this.capacity === 0) return false;
    const slot = this.heap[0]!;
    const c = compareWords(ticket, ti, this.tickets, slot * 8);
    return c < 0 || (c === 0 && compareWords(entrant, ei, this.entrants, slot * 8) < 0);
  }

  /** Offers one entrant (`ticket[ti..]`, `entrant[ei..]` as words); kept if among the smallest so far. */
  offer(
    ticket: Int32Array,
    ti: number,
    entrant: Int32Array,
    ei: number,
    userId: string,
    quantity: number,
    entry: number,
  ) {
    if (this.size < this.capacity) {
      const slot = this.size;
      this.write(slot, ticket, ti, entrant, ei, userId, quantity, entry);
      this.heap[this.size] = slot;
      this.size++;
      this.siftUp(this.size - 1);
      return;
    }
    if (this.capacity === 0) return;
    // Full: only an entrant before the last one kept gets in, in that one's slot.
    const slot = this.heap[0]!;
    const c = compareWords(ticket, ti, this.tickets, slot * 8);
    if (c > 0 || (c === 0 && compareWords(entrant, ei, this.entrants, slot * 8) >= 0)) return;
    this.write(slot, ticket, ti, entrant, ei, userId, quantity, entry);
    this.siftDown(0);
  }

  /** The kept entrants as plain arrays (slots [0, size) are the ones in use). */
  kept(): KeptCandidates {
    const n = this.size;
    return {
      tickets: this.tickets.slice(0, n * 8),
      entrants: this.entrants.slice(0, n * 8),
      users: this.users.slice(0, n),
      quantities: this.quantities.slice(0, n),
      entries: this.entries.slice(0, n),
    };
  }

  /**
   * Offers every entrant another selection kept. The smallest `capacity` of a union are among the
   * smallest `capacity` of each part, and the order is total (ticket, then entrant id): selections over
   * parts of the list, merged, keep exactly what one selection over the whole list keeps.
   */
  offerKept(k: KeptCandidates): void {
    for (let i = 0; i < k.users.length; i++)
      if (this.wouldKeep(k.tickets, i * 8, k.entrants, i * 8))
        this.offer(k.tickets, i * 8, k.entrants, i * 8, k.users[i]!, k.quantities[i]!, k.entries[i]!);
  }

  private write(
    slot: number,
    ticket: Int32Array,
    ti: number,
    entrant: Int32Array,
    ei: number,
    userId: string,
    quantity: number,
    entry: number,
  ) {
    this.tickets.set(ticket.subarray(ti, ti + 8), slot * 8);
    this.entrants.set(entrant.subarray(ei, ei + 8), slot * 8);
    this.users[slot] = userId;
    this.quantities[slot] = quantity;
    this.entries[slot] = entry;
  }

  /** The kept entrants in draw order (ascending ticket, then entrant id). */
  sorted(): Candidate[] {
    // Numeric sort on (first ticket word, slot) packed in one double (32 + 17 bits < 53), then the few
    // runs that share a first word put in full order: ~20× faster than a comparator sort.
    const n = this.size;
    if (this.capacity > SLOT_SPAN) {
      const all = Array.from(this.heap.subarray(0, n)).sort((a, b) => this.compareSlots(a, b));
      return all.map((s) => this.candidate(s));
    }
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const slot = this.heap[i]!;
      keys[i] = (this.tickets[slot * 8]! >>> 0) * SLOT_SPAN + slot;
    }
    keys.sort();
    const slots = Array.from(keys, (k) => k % SLOT_SPAN);
    for (let i = 0; i < n;) {
      let j = i + 1;
      const first = this.tickets[slots[i]! * 8];
      while (j < n && this.tickets[slots[j]! * 8] === first) j++;
      if (j - i > 1) {
        const run = slots.slice(i, j).sort((a, b) => this.compareSlots(a, b));
        for (let k = i; k < j; k++) slots[k] = run[k - i]!;
      }
      i = j;
    }
    return slots.map((s) => this.candidate(s));
  }

  private candidate(s: number): Candidate {
    return {
      userId: this.users[s]!,
      quantity: this.quantities[s]!,
      entry: this.entries[s]!,
      entrant: hexOf(this.entrants, s * 8),
      ticket: hexOf(this.tickets, s * 8),
    };
  }

  private compareSlots(a: number, b: number): number {
    return (
      compareWords(this.tickets, a * 8, this.tickets, b * 8) || compareWords(this.entrants, a * 8, this.entrants, b * 8)
    );
  }

  private siftUp(at: number): void {
    const heap = this.heap;
    const moving = heap[at]!;
    let i = at;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compareSlots(heap[parent]!, moving) >= 0) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = moving;
  }

  private siftDown(at: number): void {
    const heap = this.heap;
    const moving = heap[at]!;
    let i = at;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.compareSlots(heap[right]!, heap[left]!) > 0 ? right : left;
      if (this.compareSlots(heap[child]!, moving) <= 0) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = moving;
  }
}
