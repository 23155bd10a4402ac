/**
 * The draw's pass 2 shared out between threads (origin/lottery/draw-page-hash.ts, draw-hash-threads.ts),
 * here in one thread: pages handed to several pickers in any order, each with its slot of a shared cut,
 * then merged, give exactly the candidates of one picker over the whole list — entrant for entrant,
 * in draw order — for any capacity, with and without a ticket to start after.
 */
import { describe, expect, it, vi } from 'vitest';
import { DigestLines, SharedCut, TicketPicker } from '../../../origin/lottery/draw-page-hash.js';
import { createHash, randomBytes } from 'node:crypto';

const SEED = randomBytes(32).toString('hex');

/** Pages of "userId:quantity" lines, as lua/entry-page-1.lua returns them. */
function pagesOf(entrants: number, pageSize: number): { page: string; first: number }[] {
  const pages: { page: string; first: number }[] = [];
  for (let first = 0; first < entrants; first += pageSize) {
    const lines: string[] = [];
    for (let i = first; i < Math.min(entrants, first + pageSize); i++)
      lines.push(`${5_000_000 + i * 13}:${1 + (i % 3)}`);
    pages.push({ page: lines.join('\n'), first });
  }
  return pages;
}

function digestOf(pages: { page: string }[]): string {
  const lines = new DigestLines(SEED);
  const hash = createHash('sha256');
  for (const { page } of pages) {
    const { bytes, length } = lines.of(page);
    hash.update(bytes.subarray(0, length));
  }
  return hash.digest('hex');
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('pass 2 on several threads', () => {
  const pages = pagesOf(2_000, 50);
  const digest = digestOf(pages);

  for (const capacity of [1, 7, 150, 2_000, 2_500])
    for (const threads of [2, 3])
      it(`${threads} pickers with a shared cut, merged, keep what one keeps (capacity ${capacity})`, () => {
        const alone = new TicketPicker(SEED, digest, capacity, null);
        for (const p of pages) alone.add(p.page, p.first);
        const expected = alone.selection.sorted();
        // And the next passes, after the last one taken, while there is one.
        const after = expected.length > 0 ? wordsOf(expected.at(-1)!.ticket) : null;
        const next = new TicketPicker(SEED, digest, capacity, after);
        for (const p of pages) next.add(p.page, p.first);
        const expectedNext = next.selection.sorted();

        for (const [start, want] of [
          [null, expected],
          [after, expectedNext],
        ] as const) {
          const slots = SharedCut.slotsFor(threads);
          const pickers = Array.from(
            { length: threads },
            (_, t) => new TicketPicker(SEED, digest, capacity, start, new SharedCut(slots, t)),
          );
          // The same shares without the cut, to count what each way offers to the selections.
          const uncut = Array.from({ length: threads }, () => new TicketPicker(SEED, digest, capacity, start));
          const offers = [...pickers, ...uncut].map((p) => vi.spyOn(p.selection, 'offer'));
          for (const p of shuffled(pages)) {
            const t = Math.floor(Math.random() * threads);
            pickers[t]!.add(p.page, p.first);
            uncut[t]!.add(p.page, p.first);
          }
          const offered = (from: number, to: number) =>
            offers.slice(from, to).reduce((n, spy) => n + spy.mock.calls.length, 0);
          // The cut did work where the shares are larger than a selection: fewer entrants were offered.
          if (capacity === 150) expect(offered(0, threads)).toBeLessThan(offered(threads, 2 * threads));
          const [main, ...others] = pickers;
          for (const o of others) main!.selection.offerKept(o.selection.kept());
          expect(main!.selection.sorted()).toEqual(want);
        }
      });
});

function wordsOf(hex: string): Int32Array {
  const out = new Int32Array(8);
  for (let i = 0; i < 8; i++) out[i] = Number.parseInt(hex.slice(8 * i, 8 * i + 8), 16) | 0;
  return out;
}
