/**
 * The draw's work on one page of the closed list (docs/lottery.md), the same on the main thread and
 * in a hashing worker (draw-hash-threads.ts): pass 1 spells each entrant's digest line, pass 2
 * computes each entrant's ticket and keeps the best candidates. Also the messages a worker answers.
 */
import { forEachLine } from './draw-entries.js';
import { DrawHmac, hexInto } from './draw-hmac.js';
import { compareWords, DrawSelection, type KeptCandidates } from './draw-selection.js';

/** Pass 1: the digest lines of a page. */
export class DigestLines {
  private readonly hmac: DrawHmac;
  private readonly words = new Int32Array(8);

  constructor(seed: string) {
    this.hmac = new DrawHmac(seed);
  }

  /**
   * The page's lines "<entrant>:<quantity>\n" (entrant = HMAC(seed, userId) in hex), in its order, as
   * `bytes[0, length)`: one buffer per page, no string per entrant (at a million entrants the garbage
   * collector, not the hashing, was the cost).
   */
  of(page: string): { bytes: Uint8Array; length: number } {
    // Each line becomes 64 hex + ":<quantity>" + "\n"; the buffer grows if short user ids need more.
    let bytes = new Uint8Array(8 * page.length + 1024);
    let at = 0;
    forEachLine(page, (start, colon, end) => {
      if (at + 64 + (end - colon) + 1 > bytes.length) {
        const larger = new Uint8Array(2 * bytes.length);
        larger.set(bytes.subarray(0, at));
        bytes = larger;
      }
      this.hmac.ofAscii(page, start, colon, this.words);
      hexInto(this.words, 0, bytes, at);
      at += 64;
      // ":<quantity>" as entered (ASCII), then the newline.
      for (let k = colon; k < end; k++) bytes[at++] = page.charCodeAt(k);
      bytes[at++] = 10;
    });
    return { bytes, length: at };
  }
}

/**
 * Pass 2 on several threads: each thread's largest first ticket word once its selection is full, in
 * shared memory (a SharedArrayBuffer, one slot per thread). A full selection holds `capacity` entrants
 * whose tickets are at most its largest, so an entrant whose ticket's first word is above that is not
 * among the `capacity` smallest of the whole list and need not be kept anywhere: each thread offers
 * about what one thread alone would, instead of filling its own selection from its share of the list.
 * A slot only ever falls (a selection's largest does), so a value read late is only a looser cut.
 */
export class SharedCut {
  constructor(
    readonly slots: Int32Array,
    private readonly own: number,
  ) {}

  /** Slots for `threads` threads, none full yet (0xffffffff: no entrant is above it). */
  static slotsFor(threads: number): Int32Array {
    return new Int32Array(new SharedArrayBuffer(4 * threads)).fill(-1);
  }

  publish(firstWord: number): void {
    Atomics.store(this.slots, this.own, firstWord | 0);
  }

  /** The lowest cut any thread has published, unsigned. */
  lowest(): number {
    let low = 0xffffffff;
    for (let i = 0; i < this.slots.length; i++) low = Math.min(low, Atomics.load(this.slots, i) >>> 0);
    return low;
  }
}

/** Pass 2: the `capacity` smallest tickets strictly after `after`, over the pages it is given. */
export class TicketPicker {
  readonly selection: DrawSelection;
  private readonly hmac: DrawHmac;
  private readonly ticketHmac: DrawHmac;
  private readonly entrant = new Int32Array(8);
  private readonly ticket = new Int32Array(8);

  constructor(
    seed: string,
    digest: string,
    capacity: number,
    private readonly after: Int32Array | null,
    private readonly cut: SharedCut | null = null,
  ) {
    this.hmac = new DrawHmac(seed);
    this.ticketHmac = new DrawHmac(seed, digest);
    this.selection = new DrawSelection(capacity);
  }

  /** Offers every entrant of a page whose first entry is the list's `first` (0-based). */
  add(page: string, first: number): void {
    const { hmac, ticketHmac, selection, entrant, ticket, after, cut } = this;
    forEachLine(page, (start, colon, end, i) => {
      hmac.ofAscii(page, start, colon, entrant);
      ticketHmac.ofHex(entrant, 0, ticket);
      if (after && compareWords(ticket, 0, after, 0) <= 0) return;
      if (!selection.wouldKeep(ticket, 0, entrant, 0)) return;
      if (cut && ticket[0]! >>> 0 > cut.lowest()) return;
      // Only an entrant that makes the cut costs a string (most do not).
      selection.offer(
        ticket,
        0,
        entrant,
        0,
        page.slice(start, colon),
        Number(page.slice(colon + 1, end)),
        first + i + 1,
      );
      if (cut && selection.isFull) cut.publish(selection.largestFirstWord());
    });
  }
}

/**
 * What a hashing worker is told, in order. `digest` and `select` start a pass (no answer); each
 * `page` is answered with `lines` (pass 1) or `picked` (pass 2), `kept` with the worker's candidates.
 */
export type HashRequest =
  | { kind: 'digest'; seed: string }
  | {
      kind: 'select';
      seed: string;
      digest: string;
      capacity: number;
      after: Int32Array | null;
      /** SharedCut's slots (shared, not copied) and this worker's slot. */
      cutSlots: Int32Array;
      cutSlot: number;
    }
  | { kind: 'page'; page: string; first: number }
  | { kind: 'kept' };

/** What a hashing worker answers: one answer per `page` or `kept`, in order. */
export type HashReply =
  { kind: 'lines'; bytes: Uint8Array; length: number } | { kind: 'picked' } | { kind: 'kept'; kept: KeptCandidates };
