/**
 * Reading the closed entrant list (docs/design.md §10) the way the draw needs it at a million entrants: a
 * page at a time, in entry order (bucket 0's list first, then bucket 1's …, the order the digest
 * fixes), with several pages requested ahead — across buckets too — so Redis serves the next pages
 * while this process hashes the current one. Memory: at most `inFlight` pages at once.
 */
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { Sale } from '../redis/stock-store.js';

export interface ReadSettings {
  /** Entries per LRANGE (DRAW_READ_PAGE). */
  pageSize: number;
  /** Pages requested ahead of the one being processed (DRAW_READ_IN_FLIGHT). */
  inFlight: number;
}

type EntryReader = Pick<LotteryEntries, 'entryCounts' | 'entryPage'>;

/**
 * Calls `onPage` for every page ("userId:quantity" lines, parseEntry) in entry order, with the
 * 0-based place of its first entry in the whole list. Returns the number of entries. `onPage` may be async (its promise is awaited before
 * the next page is handed over; reads ahead go on meanwhile).
 */
export async function forEachEntryPage(
  stock: EntryReader,
  sale: Sale,
  read: ReadSettings,
  onPage: (lines: string[], first: number) => void | Promise<void>,
): Promise<number> {
  const counts = await stock.entryCounts(sale);
  const pages: { bucket: number; start: number; first: number }[] = [];
  let first = 0;
  counts.forEach((count, bucket) => {
    for (let start = 0; start < count; start += read.pageSize) pages.push({ bucket, start, first: first + start });
    first += count;
  });
  const fetch = (i: number) => {
    const p = pages[i]!;
    const answer = stock.entryPage(sale, p.bucket, p.start, read.pageSize);
    // Read ahead; a failure surfaces when its turn comes (not as an unhandled rejection meanwhile).
    answer.catch(() => {});
    return answer;
  };
  const ahead: Promise<string[]>[] = [];
  for (let i = 0; i < Math.min(read.inFlight, pages.length); i++) ahead.push(fetch(i));
  for (let i = 0; i < pages.length; i++) {
    const entries = await ahead.shift()!;
    if (i + read.inFlight < pages.length) ahead.push(fetch(i + read.inFlight));
    await onPage(entries, pages[i]!.first);
  }
  return first;
}
