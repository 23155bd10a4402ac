/**
 * The console's signal and funnel readings from a metrics registry by name: numbers for the metrics
 * a registry has (with the names and labels the five-signals work fixes), null ("n/a") for the ones
 * it lacks, and a sale's figures never mixed with another sale's.
 */
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LoopDelay, readFunnel, readSignals, waitingLineMetric } from '../../../origin/console/sale-signals.js';

const A = '1001';
const B = '2002';

function registryWithSignals() {
  const registry = new client.Registry();
  const counter = (name: string, labelNames: string[] = []) =>
    new client.Counter({ name, help: name, labelNames, registers: [registry] });
  const gauge = (name: string, labelNames: string[] = []) =>
    new client.Gauge({ name, help: name, labelNames, registers: [registry] });
  const answers = counter('seckill_order_answers_total', ['outcome', 'decided']);
  answers.inc({ outcome: 'reserved', decided: 'true' }, 7);
  answers.inc({ outcome: 'sold_out', decided: 'true' }, 2);
  answers.inc({ outcome: 'unavailable', decided: 'false' }, 1);
  const slowlog = counter('seckill_redis_slowlog_entries_total', ['node']);
  slowlog.inc({ node: 'a' }, 3);
  slowlog.inc({ node: 'b' }, 4);
  const clients = gauge('seckill_redis_connected_clients', ['node']);
  clients.set({ node: 'a' }, 10);
  clients.set({ node: 'b' }, 12);
  gauge('seckill_mysql_threads_running').set(5);
  gauge('seckill_mysql_threads_connected').set(20);
  counter('seckill_mysql_slow_queries_total').inc(6);
  const clicks = counter('seckill_edge_clicks_total', ['activity']);
  clicks.inc({ activity: A }, 100);
  clicks.inc({ activity: B }, 999);
  counter('seckill_edge_tickets_total', ['activity']).inc({ activity: A }, 40);
  counter('seckill_edge_admitted_total', ['activity']).inc({ activity: A }, 30);
  const reserve = counter('seckill_reserve_total', ['code']);
  reserve.inc({ code: 'ok' }, 20);
  reserve.inc({ code: 'sold_out' }, 50);
  counter('seckill_orders_settled_total').inc(18);
  const lifecycle = counter('seckill_order_lifecycle_total', ['transition']);
  lifecycle.inc({ transition: 'payment_paid' }, 9);
  lifecycle.inc({ transition: 'timeout' }, 4);
  const line = gauge('seckill_edge_waiting_line_length', ['activity']);
  line.set({ activity: A }, 42);
  line.set({ activity: B }, 7);
  return registry;
}

describe('reading the signals by metric name', () => {
  it('with every metric registered: sums over nodes, decided answers apart, one sale’s funnel and line', async () => {
    const registry = registryWithSignals();
    const loop = new LoopDelay();
    const signals = await readSignals(registry, loop);
    expect(signals.orderAnswers).toEqual({ decided: 9, total: 10 });
    expect(signals.redis).toEqual({ slowlogEntries: 7, connectedClients: 22 });
    expect(signals.mysql).toEqual({ threadsRunning: 5, threadsConnected: 20, slowQueries: 6 });
    expect(signals.runtime.gcSeconds).toBeNull(); // this registry has no GC histogram
    expect(await readFunnel(registry, A)).toEqual({
      clicks: 100,
      tickets: 40,
      admitted: 30,
      reserved: 20,
      settled: 18,
      paid: 9,
    });
    expect(await waitingLineMetric(registry, A)).toBe(42);
    expect(await waitingLineMetric(registry, '3003')).toBe(0);
  });

  it('with none of them registered: every figure is null, nothing throws', async () => {
    const registry = new client.Registry();
    const signals = await readSignals(registry, new LoopDelay());
    expect(signals.orderAnswers).toEqual({ decided: null, total: null });
    expect(signals.redis).toEqual({ slowlogEntries: null, connectedClients: null });
    expect(signals.mysql).toEqual({ threadsRunning: null, threadsConnected: null, slowQueries: null });
    expect([signals.runtime.gcSeconds, signals.runtime.gcCount]).toEqual([null, null]);
    expect(Object.values(await readFunnel(registry, A))).toEqual([null, null, null, null, null, null]);
    expect(await waitingLineMetric(registry, A)).toBeNull();
  });

  it('the default GC histogram is read by its _sum and _count series; the event-loop p99 is the console’s own', async () => {
    const registry = new client.Registry();
    const gc = new client.Histogram({
      name: 'nodejs_gc_duration_seconds',
      help: 'gc',
      labelNames: ['kind'],
      buckets: [0.01, 0.1],
      registers: [registry],
    });
    gc.observe({ kind: 'minor' }, 0.004);
    gc.observe({ kind: 'major' }, 0.05);
    const loop = new LoopDelay();
    // The delay monitor samples every 10 ms on an unref'd timer; on a busy machine the first samples
    // can take longer than a fixed wait, so read until one arrives (each reading resets it).
    let runtime = (await readSignals(registry, loop)).runtime;
    for (let waited = 0; runtime.eventLoopLagP99Seconds === null && waited < 5_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      runtime = (await readSignals(registry, loop)).runtime;
    }
    expect(runtime.gcCount).toBe(2);
    expect(runtime.gcSeconds).toBeCloseTo(0.054, 6);
    expect(runtime.eventLoopLagP99Seconds).toBeGreaterThan(0);
  });
});
