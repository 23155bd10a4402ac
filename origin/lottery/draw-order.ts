/**
 * The draw order (origin/lottery/draw-rule.ts) taken lazily: the draw needs the entrants in
 * ascending ticket order only until the units are gone — usually the first few percent — so
 * sorting every entrant (O(n log n)) is wasted work on the path to the final winners. A binary
 * min-heap over all tickets is built in O(n) and yields the next entrant in O(log n): the same
 * entrants in exactly the order `drawOrder` sorts them (same comparison, `compareDrawOrder`, and
 * input position last, as the stable sort keeps equal entries), for any number taken.
 * Every entrant is still hashed once: the order needs every ticket, and the published list too.
 */
import { createHmac } from 'node:crypto';
import { compareDrawOrder, type Entrant, type OrderedEntrant } from './draw-rule.js';

export class DrawQueue {
  /** Every entrant with their ticket, in input order (what publishing the list needs). */
  readonly entrants: OrderedEntrant[];
  /** Indexes into `entrants`, a min-heap in draw order over [0, size). */
  private readonly heap: Int32Array;
  private size: number;

  /** Hashes every entrant (ticket = HMAC-SHA256(seed, userId), as `ticketOf`) and heapifies. */
  static of(seed: string, entrants: Iterable<Entrant>): DrawQueue {
    const key = Buffer.from(seed, 'utf8');
    const withTickets: OrderedEntrant[] = [];
    for (const e of entrants)
      withTickets.push({
        userId: e.userId,
        quantity: e.quantity,
        ticket: createHmac('sha256', key).update(e.userId, 'utf8').digest('hex'),
      });
    return new DrawQueue(withTickets);
  }

  /** Entrants whose tickets are already known (tests force ties this way). */
  constructor(entrants: OrderedEntrant[]) {
    this.entrants = entrants;
    this.size = entrants.length;
    this.heap = new Int32Array(this.size);
    for (let i = 0; i < this.size; i++) this.heap[i] = i;
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Entrants not taken yet. */
  get remaining(): number {
    return this.size;
  }

  /** The next `count` entrants in draw order (fewer when fewer are left). */
  take(count: number): OrderedEntrant[] {
    const out: OrderedEntrant[] = [];
    while (out.length < count && this.size > 0) {
      const top = this.heap[0]!;
      this.heap[0] = this.heap[--this.size]!;
      this.siftDown(0);
      out.push(this.entrants[top]!);
    }
    return out;
  }

  /** Draw order between two entrants by index; the index breaks full ties like a stable sort. */
  private before(i: number, j: number): boolean {
    const c = compareDrawOrder(this.entrants[i]!, this.entrants[j]!);
    return c < 0 || (c === 0 && i < j);
  }

  private siftDown(at: number): void {
    const heap = this.heap;
    const moving = heap[at]!;
    let i = at;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, moving)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = moving;
  }
}
