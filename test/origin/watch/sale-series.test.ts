/**
 * The console's series store (origin/watch/sale-series.ts): bounded memory over a long run, the whole
 * run kept (older seconds merged into coarser points), each column merged by its rule. Pure memory;
 * the bound measured here is the one docs/console.md states.
 */
import { describe, expect, it } from 'vitest';
import {
  COARSE_START_SECONDS,
  SERIES_COLUMNS,
  SaleSeriesStore,
  SeriesTable,
  viewOf,
  type SeriesSample,
} from '../../../origin/watch/sale-series.js';

/** Second `s` of a simulated sale: a ramp of clicks, a backlog peak, units falling. */
function sample(s: number, buckets: number): SeriesSample {
  const out = Object.fromEntries(SERIES_COLUMNS.map(([name]) => [name, 1])) as unknown as SeriesSample;
  out.clicks = s < 600 ? s : 10;
  out.answers = 10;
  out.decided = 9;
  out.backlog = s === 3_000 ? 5_000 : 3;
  out.unitsLeft = Math.max(0, 7_200 - s);
  out.buckets = Array.from({ length: buckets }, (_, b) => b + s);
  return out;
}

const START = 1_800_000_000;
const TWO_HOURS = 7_200;

describe('the series store', () => {
  it('keeps a 2 h sale in at most 2 × points + 1 points, at a fixed size, from its first second to its last', () => {
    const table = new SeriesTable(1, 600);
    const bytes = table.bytes();
    let most = 0;
    for (let s = 0; s < TWO_HOURS; s++) {
      table.push(START + s, 1, sample(s, 1));
      most = Math.max(most, table.size());
    }
    expect(most).toBeLessThanOrEqual(2 * 600 + 1);
    expect(table.bytes()).toBe(bytes);
    // (2 × 600 + 1) points and the one being pushed × (2 + 17 columns + 1 bucket) × 8 bytes.
    expect(bytes).toBe(1_202 * 20 * 8);
    const view = viewOf(table);
    // The whole run: the first point starts at the first second, the last ends at the last.
    expect(view.t[0]! - view.dur[0]!).toBe(START);
    expect(view.t.at(-1)).toBe(START + TWO_HOURS);
    expect(view.dur.reduce((a, b) => a + b, 0)).toBe(TWO_HOURS);
    // The newest 600 seconds one a second, the rest coarser (5 s doubled as the table filled).
    expect(view.dur.slice(-600).every((d) => d === 1)).toBe(true);
    expect(view.resolution.coarse).toBe(20);
    expect(COARSE_START_SECONDS).toBe(5);
    // Counts merge by sum (per second unchanged), peaks by max, units by the last value.
    expect(view.series.answers.every((v) => v === 10)).toBe(true);
    expect(view.successRate.every((v) => v === 0.9)).toBe(true);
    expect(Math.max(...view.series.backlog.map(Number))).toBe(5_000);
    expect(view.series.unitsLeft.at(-1)).toBe(1);
    console.log(
      `2 h at 1 sample/s, 1 bucket: ${view.t.length} points kept (most ${most}), ${table.bytes()} bytes of tables, coarse ${view.resolution.coarse} s`,
    );
  });

  it('holds at most `sales` tables: a 20-sale, 2 h run stays within 20 × one table, measured on the heap too', () => {
    const store = new SaleSeriesStore(600, 20);
    const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    for (let sale = 0; sale < 25; sale++)
      for (let s = 0; s < TWO_HOURS; s++) store.tableOf(`9${sale}`, 4, START + sale).push(START + s, 1, sample(s, 4));
    globalThis.gc?.();
    const heapAfter = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    // The five sales that ended first were dropped.
    expect(store.has('90')).toBe(false);
    expect(store.has('924')).toBe(true);
    const perTable = 1_202 * (2 + SERIES_COLUMNS.length + 4) * 8;
    expect(store.bytes()).toBe(20 * perTable);
    console.log(
      `25 sales × 2 h, 20 kept, 4 buckets each: ${store.bytes()} bytes of tables (${perTable} per sale); heap + array buffers grew ${heapBefore === 0 ? 'n/a' : heapAfter - heapBefore} bytes`,
    );
  });

  it('a table of 64 buckets (the most a sale has) is its fixed size too', () => {
    const table = new SeriesTable(64, 600);
    for (let s = 0; s < 3_600; s++) table.push(START + s, 1, sample(s, 64));
    expect(table.bytes()).toBe(1_202 * (2 + SERIES_COLUMNS.length + 64) * 8);
    expect(viewOf(table).buckets).toHaveLength(64);
  });

  it('a missed second is one point covering both; a missing value stays missing', () => {
    const table = new SeriesTable(1, 60);
    table.push(START, 1, sample(0, 1));
    const gap = sample(1, 1);
    gap.clicks = 20;
    gap.backlog = null;
    table.push(START + 1, 2, gap);
    const view = viewOf(table);
    expect(view.dur).toEqual([1, 2]);
    expect(view.series.clicks).toEqual([0, 10]);
    expect(view.series.backlog).toEqual([3, null]);
  });
});
