/** Stream pending and lag per warmed activity, read on /metrics scrape (XINFO GROUPS). */
import type { OriginContext } from '../context.js';

/** What the Stream gauges use of the origin's context. */
export type StreamGaugeDeps = Pick<OriginContext, 'metrics' | 'stock'>;

export type { GroupInfo } from '../redis/sale-ledger.js';

export async function collectStreamGauges(ctx: StreamGaugeDeps): Promise<void> {
  for (const sale of await ctx.stock.warmedSales()) {
    const info = await ctx.stock.groupInfo(sale);
    if (!info) continue;
    ctx.metrics.streamPending.set({ activity: sale.activityId }, info.pending);
    ctx.metrics.streamLag.set({ activity: sale.activityId }, info.lag);
  }
}
