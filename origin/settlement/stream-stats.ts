/** Stream pending and lag per warmed activity, read on /metrics scrape (XINFO GROUPS). */
import type { Metrics } from '../platform/metrics.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { SaleStreams } from '../redis/sale-streams.js';

/** What the Stream gauges use: the warmed sales, their consumer groups, the gauges. */
export interface StreamGaugeDeps {
  registry: Pick<SaleRegistry, 'warmedSales'>;
  streams: Pick<SaleStreams, 'groupInfo'>;
  metrics: Metrics;
}

export async function collectStreamGauges(deps: StreamGaugeDeps): Promise<void> {
  const sales = await deps.registry.warmedSales();
  const infos = await Promise.all(sales.map((sale) => deps.streams.groupInfo(sale)));
  // Set only after every read succeeded, so a failed read keeps the last values; a sale no longer
  // warmed (cleaned up) leaves the gauges.
  deps.metrics.streamPending.reset();
  deps.metrics.streamLag.reset();
  deps.metrics.shadowStreamBacklog.reset();
  sales.forEach((sale, i) => {
    const info = infos[i];
    if (!info) return;
    // A shadow sale's backlog in its own gauge: the real alerts and panels never see a rehearsal's.
    if (sale.shadow) deps.metrics.shadowStreamBacklog.set({ activity: sale.activityId }, info.lag + info.pending);
    else {
      deps.metrics.streamPending.set({ activity: sale.activityId }, info.pending);
      deps.metrics.streamLag.set({ activity: sale.activityId }, info.lag);
    }
  });
}
