/** Stream pending and lag per warmed activity, read on /metrics scrape (XINFO GROUPS). */
import type { OriginContext } from '../context.js';
import { ACTIVITY_REGISTRY_KEY, CONSUMER_GROUP, activityKeys } from '../redis/keys.js';
import { fieldsOf } from '../redis/stream.js';

export interface GroupInfo {
  pending: number;
  lag: number;
  lastDeliveredId: string;
}

export async function groupInfo(ctx: Pick<OriginContext, 'redis'>, events: string): Promise<GroupInfo | null> {
  const groups = (await ctx.redis.xinfo('GROUPS', events).catch(() => [])) as unknown[][];
  for (const g of groups) {
    const f = fieldsOf(g);
    if (f.name === CONSUMER_GROUP) {
      return {
        pending: Number(f.pending ?? 0),
        lag: Number(f.lag ?? 0),
        lastDeliveredId: String(f['last-delivered-id'] ?? '0-0'),
      };
    }
  }
  return null;
}

export async function collectStreamGauges(ctx: OriginContext): Promise<void> {
  const registry = await ctx.redis.hgetall(ACTIVITY_REGISTRY_KEY);
  for (const [activityId, skuId] of Object.entries(registry)) {
    const info = await groupInfo(ctx, activityKeys(activityId, skuId).events);
    if (!info) continue;
    ctx.metrics.streamPending.set({ activity: activityId }, info.pending);
    ctx.metrics.streamLag.set({ activity: activityId }, info.lag);
  }
}
