/**
 * The console's alert banners (origin/console/sale-alerts.ts) from their facts: each failure says
 * what happened in words, since when, the next step and its docs section; the backlog and success
 * rate are judged from the kept series. The Chromium test (test/e2e/console-charts.test.ts) causes
 * most of them on a real stack; a bucket short of replicas needs a Redis replica down, so its banner
 * is checked here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  FirstSeen,
  readBaseline,
  saleAlerts,
  seriesFacts,
  type AlertFacts,
} from '../../../origin/console/sale-alerts.js';
import { SeriesTable, viewOf, SERIES_COLUMNS, type SeriesSample } from '../../../origin/watch/sale-series.js';

const NOW = Date.parse('2026-12-03T20:00:00Z');
const quiet = (): AlertFacts => ({
  now: NOW,
  timedOut: { orders: 0, units: 0, since: null },
  warmupStatus: 'verified',
  failover: { closedSince: null, reopened: null },
  shortBuckets: [],
  reconciliationFailing: 0,
  parked: { events: 0 },
  deadLetters: { open: 0, units: 0, since: null },
  backlog: { now: 0, growingSeconds: 0 },
  successRate: { recent: 1, answers: 100, baseline: 1 },
});

describe('alert banners', () => {
  it('none when every check holds', () => {
    expect(saleAlerts(quiet(), new FirstSeen(), '1')).toEqual([]);
  });

  it('a bucket short of replicas names its buckets and units, since first seen', () => {
    const seen = new FirstSeen();
    const facts = {
      ...quiet(),
      shortBuckets: [
        { bucket: 1, units: 40 },
        { bucket: 3, units: 2 },
      ],
    };
    const [alert] = saleAlerts(facts, seen, '1');
    expect(alert).toMatchObject({
      id: 'short_replicas',
      level: 'critical',
      title:
        '42 units cannot be sold: their bucket’s Redis primary has too few replicas in sync (bucket 1: 40 units, bucket 3: 2 units).',
      since: new Date(NOW).toISOString(),
      docs: { file: 'docs/console.md', section: 'A bucket short of replicas', anchor: 'a-bucket-short-of-replicas' },
    });
    // Still short a minute later: since stays; cleared, then short again: since starts over.
    expect(saleAlerts({ ...facts, now: NOW + 60_000 }, seen, '1')[0]!.since).toBe(new Date(NOW).toISOString());
    expect(saleAlerts({ ...quiet(), now: NOW + 61_000 }, seen, '1')).toEqual([]);
    expect(saleAlerts({ ...facts, now: NOW + 62_000 }, seen, '1')[0]!.since).toBe(new Date(NOW + 62_000).toISOString());
  });

  it('each failure its banner, most urgent first', () => {
    const facts: AlertFacts = {
      ...quiet(),
      timedOut: { orders: 3, units: 4, since: NOW - 5_000 },
      warmupStatus: 'mismatch',
      failover: { closedSince: NOW - 20_000, reopened: null },
      reconciliationFailing: 2,
      parked: { events: 1 },
      deadLetters: { open: 2, units: 2, since: NOW - 9_000 },
      backlog: { now: 120, growingSeconds: 45 },
      successRate: { recent: 0.5, answers: 300, baseline: 0.98 },
    };
    const alerts = saleAlerts(facts, new FirstSeen(), '1');
    expect(alerts.map((a) => a.id)).toEqual([
      'failover',
      'success_rate',
      'backlog',
      'reconciliation',
      'warmup',
      'dead_letters',
      'parked',
      'timed_out',
    ]);
    for (const a of alerts) {
      expect(a.title.length).toBeGreaterThan(20);
      expect(a.next.length).toBeGreaterThan(20);
    }
    expect(alerts[0]!.since).toBe(new Date(NOW - 20_000).toISOString());
    expect(alerts.find((a) => a.id === 'timed_out')!.title).toBe(
      '3 orders timed out unpaid (4 units returned to stock).',
    );
  });

  it('a reopened sale shows for ten minutes after its reopening', () => {
    const reopened = { closedAt: NOW - 30_000, reopenedAt: NOW - 12_500 };
    const facts = { ...quiet(), failover: { closedSince: null, reopened } };
    expect(saleAlerts(facts, new FirstSeen(), '1')[0]!.title).toBe(
      'Reopened after a Redis failover: it was closed for 17.5 s.',
    );
    expect(saleAlerts({ ...facts, now: NOW + 11 * 60_000 }, new FirstSeen(), '1')).toEqual([]);
  });

  it('every docs section a banner names is a heading of docs/console.md', () => {
    const doc = readFileSync(new URL('../../../docs/console.md', import.meta.url), 'utf8');
    const facts: AlertFacts = {
      ...quiet(),
      timedOut: { orders: 1, units: 1, since: NOW },
      warmupStatus: 'mismatch',
      failover: { closedSince: NOW, reopened: null },
      shortBuckets: [{ bucket: 0, units: 1 }],
      reconciliationFailing: 1,
      parked: { events: 1 },
      deadLetters: { open: 1, units: 1, since: NOW },
      backlog: { now: 1, growingSeconds: 60 },
      successRate: { recent: 0.1, answers: 10, baseline: 1 },
    };
    const reopened = saleAlerts(
      { ...quiet(), failover: { closedSince: null, reopened: { closedAt: NOW - 1, reopenedAt: NOW } } },
      new FirstSeen(),
      '1',
    );
    for (const a of [...saleAlerts(facts, new FirstSeen(), '1'), ...reopened])
      expect(doc).toContain(`\n### ${a.docs.section}\n`);
  });
});

describe('facts from the series', () => {
  const sample = (backlog: number, answers: number, decided: number): SeriesSample => {
    const s = Object.fromEntries(SERIES_COLUMNS.map(([n]) => [n, 0])) as unknown as SeriesSample;
    return { ...s, backlog, answers, decided, buckets: [1] };
  };

  it('a backlog that grew for 40 s without emptying; the success rate of the last 30 s', () => {
    const table = new SeriesTable(1, 600);
    const start = NOW / 1000 - 60;
    for (let s = 0; s < 20; s++) table.push(start + s, 1, sample(0, 10, 10));
    for (let s = 20; s < 60; s++) table.push(start + s, 1, sample(s - 19, 10, s >= 45 ? 2 : 10));
    const facts = seriesFacts(viewOf(table), NOW);
    expect(facts.backlog).toEqual({ now: 40, growingSeconds: 40 });
    // 15 s at 10/10, 15 s at 2/10.
    expect(facts.recent.rate).toBeCloseTo(0.6, 5);
  });

  it('a backlog that is large but not growing is not an alert', () => {
    const table = new SeriesTable(1, 600);
    for (let s = 0; s < 60; s++) table.push(NOW / 1000 - 60 + s, 1, sample(500, 0, 0));
    expect(seriesFacts(viewOf(table), NOW).backlog.growingSeconds).toBe(0);
    expect(seriesFacts(viewOf(table), NOW).recent.rate).toBeNull();
  });

  it('reads the rehearsal baseline from ops/prometheus/baseline.yml', () => {
    expect(readBaseline()).toBe(1);
  });
});
