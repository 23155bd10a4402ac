/**
 * Pulls the edge's figures (clicks, tickets, admissions, refusals by reason, origin calls, waiting
 * lines) over the signed internal channel when /metrics is scraped, so Prometheus scrapes one
 * target and the edge grows no public route (docs/watching-a-sale.md explains the choice).
 */
import { EDGE_FIGURES_PATH, edgeFiguresSchema, type EdgeFigures } from '../../contract/edge-figures.js';
import { signEdgeRequest } from '../../contract/signing.js';
import type { Metrics } from '../platform/metrics.js';
import { CounterMirror } from './mirror.js';

export async function fetchEdgeFigures(edgeUrl: string, secret: string, timeoutMs: number): Promise<EdgeFigures> {
  const headers = await signEdgeRequest(secret, { method: 'GET', pathWithQuery: EDGE_FIGURES_PATH, body: '' });
  const res = await fetch(new URL(EDGE_FIGURES_PATH, edgeUrl), { headers, signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`edge figures: HTTP ${res.status}`);
  }
  return edgeFiguresSchema.parse(await res.json());
}

type TrafficFigures = EdgeFigures['shadow'];
type Counter = Metrics['edgeClicks'];

/** Mirrors one kind of traffic's counts into its counters. */
function trafficSink(counters: Record<keyof TrafficFigures, Counter>) {
  const clicks = new CounterMirror(counters.clicks);
  const tickets = new CounterMirror(counters.tickets);
  const admitted = new CounterMirror(counters.admitted);
  const refusals = new CounterMirror(counters.refusals);
  const originCalls = new CounterMirror(counters.originCalls);
  return (f: TrafficFigures) => {
    clicks.set(f.clicks);
    tickets.set(f.tickets);
    admitted.set(f.admitted);
    for (const [reason, n] of Object.entries(f.refusals)) refusals.set(n, { reason });
    for (const [key, n] of Object.entries(f.originCalls)) {
      const [call = 'other', result = 'answered'] = key.split('/');
      originCalls.set(n, { call, result });
    }
  };
}

/**
 * Sets the `seckill_edge_*` series (real traffic) and the `seckill_shadow_edge_*` series (shadow
 * tokens') from one reading of the edge's figures.
 */
export function edgeFiguresSink(metrics: Metrics) {
  const real = trafficSink({
    clicks: metrics.edgeClicks,
    tickets: metrics.edgeTickets,
    admitted: metrics.edgeAdmitted,
    refusals: metrics.edgeRefusals,
    originCalls: metrics.edgeOriginCalls,
  });
  const shadow = trafficSink({
    clicks: metrics.shadowEdgeClicks,
    tickets: metrics.shadowEdgeTickets,
    admitted: metrics.shadowEdgeAdmitted,
    refusals: metrics.shadowEdgeRefusals,
    originCalls: metrics.shadowEdgeOriginCalls,
  });
  return (f: EdgeFigures) => {
    real(f);
    shadow(f.shadow);
    // A level: activities no longer live leave the gauge.
    metrics.edgeWaitingLine.reset();
    for (const [activity, n] of Object.entries(f.waitingLine)) metrics.edgeWaitingLine.set({ activity }, n);
    metrics.edgeWaitingLineLongestShard.reset();
    for (const [activity, n] of Object.entries(f.waitingLineLongestShard))
      metrics.edgeWaitingLineLongestShard.set({ activity }, n);
    metrics.edgeWaitingLineBytes.reset();
    for (const [activity, n] of Object.entries(f.waitingLineBytes)) metrics.edgeWaitingLineBytes.set({ activity }, n);
  };
}
