/**
 * The seeds' five signals and the sale funnel (signal 3, the Stream backlog, is read live from Redis
 * by the console's live view, not from the gauges /metrics refreshes at scrape time), read from this origin's prom-client registry by
 * metric name. A metric not (yet) registered reads as null — the console shows "n/a" — so the
 * console works whichever metrics this build exports. Figures are running totals (counters) or
 * current values (gauges); the console turns totals into per-second rates from successive readings.
 *
 * Counters are this process's: with several origin processes, each shows its own share (Prometheus
 * sums them; the console is one operator's view of the process it talks to).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;
interface Reading {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** Every value of metric `name`, or null when the registry has no such metric. */
async function readingsOf(registry: Registry, name: string): Promise<Reading[] | null> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return null;
  const got = await metric.get();
  return got.values as Reading[];
}

/**
 * Σ of metric `name` over the values `where` keeps (a histogram: its `_sum` or `_count` series by
 * `series`); null when not registered. A value labelled with another activity is never counted.
 */
export async function total(
  registry: Registry,
  name: string,
  opts: { where?: (l: Labels) => boolean; activityId?: string; series?: string } = {},
): Promise<number | null> {
  const values = await readingsOf(registry, name);
  if (values === null) return null;
  return values
    .filter((v) => (opts.series ? v.metricName === `${name}${opts.series}` : true))
    .filter(
      (v) =>
        opts.activityId === undefined ||
        v.labels.activity === undefined ||
        String(v.labels.activity) === opts.activityId,
    )
    .filter((v) => !opts.where || opts.where(v.labels))
    .reduce((s, v) => s + v.value, 0);
}

/**
 * The console's own event-loop delay monitor. prom-client's `nodejs_eventloop_lag_*` gauges are
 * computed from a histogram that each reading resets, so a console reading them every second would
 * shrink the window Prometheus's scrape sees; this one is read by the console alone (p99 since the
 * previous reading; several open consoles share it).
 */
export class LoopDelay {
  // Node's delay monitor runs on an unref'd timer: it never keeps a stopping origin alive.
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.histogram.enable();
  }

  p99Seconds(): number | null {
    const p99 = this.histogram.count > 0 ? this.histogram.percentile(99) / 1e9 : null;
    this.histogram.reset();
    return p99;
  }
}

/** A decided answer (reserved, sold out, duplicate, …) as the order-answer metric labels it. */
const DECIDED = new Set(['true', 'yes', '1', 'decided']);

export interface SaleSignals {
  /** (1) Order answers: decided ones and all of them (success rate = decided / all). */
  orderAnswers: { decided: number | null; total: number | null };
  /** (2) Redis slow-log entries so far and connected clients, over every node. */
  redis: { slowlogEntries: number | null; connectedClients: number | null };
  /** (4) MySQL threads running and connected, slow queries so far. */
  mysql: { threadsRunning: number | null; threadsConnected: number | null; slowQueries: number | null };
  /** (5) Event-loop delay p99 and GC pauses so far (seconds, count). */
  runtime: { eventLoopLagP99Seconds: number | null; gcSeconds: number | null; gcCount: number | null };
}

/** Running totals of the funnel, clicks to paid; null where the metric is not registered. */
export interface SaleFunnel {
  clicks: number | null;
  tickets: number | null;
  admitted: number | null;
  reserved: number | null;
  settled: number | null;
  paid: number | null;
}

export async function readSignals(registry: Registry, loop: LoopDelay): Promise<SaleSignals> {
  const [decided, answers, slowlog, clients, running, connected, slow, gcSum, gcCount] = await Promise.all([
    total(registry, 'seckill_order_answers_total', { where: (l) => DECIDED.has(String(l.decided)) }),
    total(registry, 'seckill_order_answers_total'),
    total(registry, 'seckill_redis_slowlog_entries_total'),
    total(registry, 'seckill_redis_connected_clients'),
    total(registry, 'seckill_mysql_threads_running'),
    total(registry, 'seckill_mysql_threads_connected'),
    total(registry, 'seckill_mysql_slow_queries_total'),
    total(registry, 'nodejs_gc_duration_seconds', { series: '_sum' }),
    total(registry, 'nodejs_gc_duration_seconds', { series: '_count' }),
  ]);
  return {
    orderAnswers: { decided, total: answers },
    redis: { slowlogEntries: slowlog, connectedClients: clients },
    mysql: { threadsRunning: running, threadsConnected: connected, slowQueries: slow },
    runtime: { eventLoopLagP99Seconds: loop.p99Seconds(), gcSeconds: gcSum, gcCount },
  };
}

export async function readFunnel(registry: Registry, activityId: string): Promise<SaleFunnel> {
  const [clicks, tickets, admitted, reserved, settled, paid] = await Promise.all([
    total(registry, 'seckill_edge_clicks_total', { activityId }),
    total(registry, 'seckill_edge_tickets_total', { activityId }),
    total(registry, 'seckill_edge_admitted_total', { activityId }),
    total(registry, 'seckill_reserve_total', { activityId, where: (l) => l.code === 'ok' }),
    total(registry, 'seckill_orders_settled_total', { activityId }),
    total(registry, 'seckill_order_lifecycle_total', { activityId, where: (l) => l.transition === 'payment_paid' }),
  ]);
  return { clicks, tickets, admitted, reserved, settled, paid };
}

/** The waiting line's length from the edge's gauge, when that metric is registered. */
export function waitingLineMetric(registry: Registry, activityId: string): Promise<number | null> {
  return total(registry, 'seckill_edge_waiting_line_length', { where: (l) => String(l.activity) === activityId });
}
