/**
 * The settlement registry (the warmed sales consumers and jobs look after, written by warm-up and
 * recover) and a sale's end of life in Redis: its keys set to expire, and the cleanup checklist's
 * reading of what is left.
 */
import type { RedisConnection } from './connection.js';
import type { Sale } from './sale.js';

export class SaleRegistry {
  constructor(private readonly redis: RedisConnection) {}

  private get ops() {
    return this.redis.ops.redis;
  }

  /**
   * Lists the sale for settlement (warm-up and recover, once its buckets are loaded): `sku`,
   * `sku:buckets`, or `sku:buckets:shadow` for a shadow sale (its consumers write the shadow tables).
   */
  async register(sale: Sale): Promise<void> {
    const value = sale.shadow
      ? `${sale.skuId}:${sale.buckets}:shadow`
      : sale.buckets === 1
        ? sale.skuId
        : `${sale.skuId}:${sale.buckets}`;
    await this.ops.hset(this.redis.space.registry, sale.activityId, value);
  }

  /** Whether the settlement registry still lists the sale. */
  async isRegistered(activityId: string): Promise<boolean> {
    return (await this.ops.hexists(this.redis.space.registry, activityId)) === 1;
  }

  /** Warmed sales (the registry written by warm-up and recover): what consumers and jobs look after. */
  async warmedSales(): Promise<Sale[]> {
    const registry = await this.ops.hgetall(this.redis.space.registry);
    return Object.entries(registry).map(([activityId, value]) => {
      const [skuId, buckets, kind] = value.split(':');
      return {
        activityId,
        skuId: skuId!,
        buckets: Number(buckets ?? 1),
        ...(kind === 'shadow' ? { shadow: true } : {}),
      };
    });
  }

  /** After a sale: every key expires after `seconds`, and settlement forgets the sale. */
  async expire(sale: Sale, seconds: number): Promise<void> {
    for (const k of this.redis.allKeys(sale))
      await Promise.all((Object.values(k) as string[]).map((key) => this.ops.expire(key, seconds)));
    await this.ops.hdel(this.redis.space.registry, sale.activityId);
  }

  /** A shadow sale's end: every key deleted now (not left to expire), and settlement forgets it. */
  async remove(sale: Sale): Promise<void> {
    for (const k of this.redis.allKeys(sale)) await this.ops.del(...(Object.values(k) as string[]));
    await this.ops.hdel(this.redis.space.registry, sale.activityId);
  }

  /**
   * After cleanup, every key of the sale that still exists must expire (the console's checklist):
   * each existing key with its time to live in ms (-1: no expiry). Keys that are gone are left out.
   */
  async keyTtls(sale: Sale): Promise<{ key: string; ttlMs: number }[]> {
    const keys = this.redis.allKeys(sale).flatMap((k) => Object.values(k) as string[]);
    const ttls = await Promise.all(keys.map((key) => this.ops.pttl(key)));
    return keys.map((key, i) => ({ key, ttlMs: ttls[i]! })).filter((k) => k.ttlMs !== -2);
  }
}
