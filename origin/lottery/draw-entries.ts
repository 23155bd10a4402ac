/**
 * Reading the closed entrant list (docs/design.md §10) the way the draw needs it at a million entrants: a
 * page at a time, in entry order (bucket 0's list first, then bucket 1's …, the order the digest
 * fixes), with several pages requested ahead — across buckets too — so Redis serves the next pages
 * while this process hashes the current one. Memory: at most `inFlight` pages at once.
 */
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { Sale } from '../redis/redis-store.js';

export interface ReadSettings {
  /** Entries per page read (DRAW_READ_PAGE; lua/entry-page-1.lua). */
  pageSize: number;
  /** Pages requested ahead of the one being processed (DRAW_READ_IN_FLIGHT). */
  inFlight: number;
}

/** What the passes read the list with. */
export type EntryReader = Pick<LotteryEntries, 'entryCounts' | 'entryPage'>;

/**
 * Calls `onPage` for every page in entry order — its "userId:quantity" lines joined by "\n" in one
 * string (forEachLine walks them) — with the 0-based place of its first entry in the whole list.
 * Returns the number of entries. `onPage` may be async (its promise is awaited before the next page
 * is handed over; reads ahead go on meanwhile).
 */
export async function forEachEntryPage(
  stock: EntryReader,
  sale: Sale,
  read: ReadSettings,
  onPage: (page: string, first: number) => void | Promise<void>,
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
  const ahead: Promise<string>[] = [];
  for (let i = 0; i < Math.min(read.inFlight, pages.length); i++) ahead.push(fetch(i));
  for (let i = 0; i < pages.length; i++) {
    const entries = await ahead.shift()!;
    if (i + read.inFlight < pages.length) ahead.push(fetch(i + read.inFlight));
    await onPage(entries, pages[i]!.first);
  }
  return first;
}

/**
 * Calls `line(start, colon, end, index)` for each line of a page: `page[start, colon)` is the user id,
 * `page[colon + 1, end)` the quantity, `index` the line's 0-based place in the page. No string is made.
 */
export function forEachLine(
  page: string,
  line: (start: number, colon: number, end: number, index: number) => void,
): void {
  for (let start = 0, index = 0; start < page.length; index++) {
    let end = page.indexOf('\n', start);
    if (end < 0) end = page.length;
    line(start, page.lastIndexOf(':', end - 1), end, index);
    start = end + 1;
  }
}
