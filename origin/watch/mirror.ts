/**
 * Mirrors a counter someone else keeps (a Redis slowlog id, MySQL's Slow_queries, the edge's
 * figures) into a prom-client Counter read at scrape time. The first read sets the counter to the
 * source's value; later reads add the growth; a source that went back (a restart) adds its new
 * value, as Prometheus' own counter-reset rule would read it.
 */
import type { Counter } from 'prom-client';

export class CounterMirror {
  private readonly last = new Map<string, number>();

  constructor(private readonly counter: Counter<string>) {}

  set(value: number, labels: Record<string, string> = {}): void {
    if (!Number.isFinite(value) || value < 0) return;
    const key = JSON.stringify(labels);
    const before = this.last.get(key);
    this.last.set(key, value);
    const growth = before === undefined || value < before ? value : value - before;
    this.counter.inc(labels, growth);
  }
}
