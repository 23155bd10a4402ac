/** Stream pending and lag per warmed activity, read on /metrics scrape (XINFO GROUPS). */
import type { OriginContext } from '../context.js';

/** What the Stream gauges use of the origin's context. */
export type StreamGaugeDeps = Pick<OriginContext, 'metrics' | 'stock'>;

export type { GroupInfo } from '../redis/sale-ledger.js';

export async function collectStreamGauges(ctx: StreamGaugeDeps): Promise<void> {
  const sales = await ctx.stock.registry.warmedSales();
  const infos = await Promise.all(sales.map((sale) => ctx.stock.streams.groupInfo(sale)));
  // Set only after every read succeeded, so a failed read keeps the last values; a sale no longer
  // warmed (cleaned up) leaves the gauges.
  ctx.metrics.streamPending.reset();
  ctx.metrics.streamLag.reset();
  sales.forEach((sale, i) => {
    const info = infos[i];
    if (!info) return;
    ctx.metrics.streamPending.set({ activity: sale.activityId }, info.pending);
    ctx.metrics.streamLag.set({ activity: sale.activityId }, info.lag);
  });
}
