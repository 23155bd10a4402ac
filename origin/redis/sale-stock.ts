/**
 * A sale's stock in Redis as operators and jobs move it (patient client): warm-up, the switch the
 * scripts read, the figures (units left, per bucket, warm buckets), compensation (lua/release-3.lua),
 * refills of timed-out orders and tranches of held-back stock (lua/refill-2.lua), and warm-up's
 * verification reading. A sale's buckets are hidden here: figures are summed over them.
 */
import type { ActivitySwitch } from '../../contract/activity.js';
import { homeBucket, refillBucket, splitStock } from './buckets.js';
import type { RedisConnection } from './connection.js';
import type { ActivityKeys } from './keys.js';
import { SaleLedgerReader } from './sale-ledger.js';
import type { SaleRegistry } from './sale-registry.js';
import type { Sale } from './sale.js';
import { refillScript, trancheScript, type RefillResult } from './scripts/refill.js';
import { releaseScript, type ReleaseResult } from './scripts/release.js';
import { warmupScript } from './scripts/warmup.js';

export type WarmupResult =
  | { kind: 'loaded'; stock: number; holders: number }
  | { kind: 'already'; stock: number; holders: number }
  | { kind: 'has_history' };

export class SaleStock {
  private readonly ledger: SaleLedgerReader;

  constructor(
    private readonly redis: RedisConnection,
    private readonly registry: Pick<SaleRegistry, 'register'>,
  ) {
    this.ledger = new SaleLedgerReader(redis.ops);
  }

  private get ops() {
    return this.redis.ops.redis;
  }

  /** The keys of one bucket of the sale (warm-up's verification names them). */
  keys(sale: Sale, bucket = 0): ActivityKeys {
    return this.redis.keys(sale, bucket);
  }

  /** lua/warmup-4.lua on every bucket, the stock split evenly; never resets a sale in progress. */
  async warmup(sale: Sale, load: { stock: number; state: ActivitySwitch; maxPerUser: number }): Promise<WarmupResult> {
    const shares = splitStock(load.stock, sale.buckets);
    const replies = await Promise.all(
      this.redis.allKeys(sale).map((k, b) => this.redis.ops.run(warmupScript, k, { ...load, stock: shares[b]! })),
    );
    let loaded = false;
    const figures = { stock: 0, holders: 0 };
    for (const reply of replies) {
      if (reply.kind === 'has_history') return { kind: 'has_history' };
      loaded ||= reply.kind === 'loaded';
      figures.stock += reply.stock;
      figures.holders += reply.holders;
    }
    await this.registry.register(sale);
    return loaded ? { kind: 'loaded', ...figures } : { kind: 'already', ...figures };
  }

  /** True when every bucket's stock key exists (warmed and not lost). */
  async isWarm(sale: Sale): Promise<boolean> {
    return (await this.warmBuckets(sale)) === sale.buckets;
  }

  /** How many of the sale's buckets hold a stock key (a cluster master may lose its share alone). */
  async warmBuckets(sale: Sale): Promise<number> {
    const exists = await Promise.all(this.redis.allKeys(sale).map((k) => this.ops.exists(k.stock)));
    return exists.filter((n) => n === 1).length;
  }

  /** Units left in Redis over all buckets, or null when no bucket is warm. */
  async stock(sale: Sale): Promise<number | null> {
    const values = await Promise.all(this.redis.allKeys(sale).map((k) => this.ops.get(k.stock)));
    if (values.every((v) => v === null)) return null;
    return values.reduce((s, v) => s + Number(v ?? 0), 0);
  }

  /** Units left in each bucket (null where the bucket holds no stock key: not warmed, or lost). */
  async bucketStocks(sale: Sale): Promise<(number | null)[]> {
    const values = await Promise.all(this.redis.allKeys(sale).map((k) => this.ops.get(k.stock)));
    return values.map((v) => (v === null ? null : Number(v)));
  }

  /** Writes the switch the scripts read — only on warmed buckets (no half-activities). */
  async setState(sale: Sale, state: ActivitySwitch): Promise<void> {
    for (const k of this.redis.allKeys(sale))
      if (await this.ops.exists(k.stock)) await this.ops.hset(k.config, 'state', state);
  }

  /**
   * Writes the per-user limit the scripts read (reserve, enter, draw reserve) — only on warmed
   * buckets; an unwarmed sale gets it from MySQL at warm-up.
   */
  async setMaxPerUser(sale: Sale, maxPerUser: number): Promise<void> {
    for (const k of this.redis.allKeys(sale))
      if (await this.ops.exists(k.stock)) await this.ops.hset(k.config, 'maxPerUser', String(maxPerUser));
  }

  /**
   * lua/release-3.lua on the user's home bucket: compensation. `cap` = MySQL available (-1: give
   * nothing back); with buckets the other buckets' stock counts against it.
   */
  async release(
    sale: Sale,
    r: { reservationId: string; userId: string; quantity: number; cap: number },
  ): Promise<ReleaseResult> {
    const home = homeBucket(r.userId, sale.buckets);
    let cap = r.cap;
    if (cap >= 0 && sale.buckets > 1) {
      const others = this.redis.allKeys(sale).filter((_, b) => b !== home);
      const stocks = await Promise.all(others.map((o) => this.ops.get(o.stock)));
      cap -= stocks.reduce((s, v) => s + Number(v ?? 0), 0);
      cap = Math.max(cap, 0);
    }
    return this.redis.ops.run(releaseScript, this.redis.keys(sale, home), { ...r, cap });
  }

  /** lua/refill-2.lua: a timed-out order's units back on sale, once per reservation (one fixed bucket per reservation). */
  async refill(sale: Sale, r: { reservationId: string; quantity: number }): Promise<RefillResult> {
    const k = this.redis.keys(sale, refillBucket(r.reservationId, sale.buckets));
    return this.redis.ops.run(refillScript, k, { id: r.reservationId, units: r.quantity });
  }

  /**
   * A tranche of held-back units goes on sale, once per release id. The same atomic step as a
   * refill (lua/refill-2.lua: add units once per id, never create a stock key), on its own hash so
   * reconciliation tells tranches from refilled orders. With buckets the units are split evenly
   * over them, each bucket's share idempotent on its own: a release cut short by a crash is finished
   * by the retry, the buckets already done answering ALREADY.
   */
  async releaseTranche(sale: Sale, r: { releaseId: string; units: number }): Promise<RefillResult> {
    const shares = splitStock(r.units, sale.buckets);
    let stock = 0;
    let added = false;
    for (const [b, k] of this.redis.allKeys(sale).entries()) {
      if (shares[b] === 0) {
        stock += Number((await this.ops.get(k.stock)) ?? 0);
        continue;
      }
      const result = await this.redis.ops.run(trancheScript, k, { id: r.releaseId, units: shares[b]! });
      if (result.kind === 'not_warmed') return result;
      added ||= result.kind === 'refilled';
      stock += result.stock;
    }
    return added ? { kind: 'refilled', stock } : { kind: 'already', stock };
  }

  /**
   * Warm-up verification: what Redis holds for the sale — each bucket's stock key and value, bucket
   * 0's config hash, whether every bucket has its consumer group, and the settlement registry.
   */
  async warmState(sale: Sale): Promise<{
    stocks: { key: string; value: number | null }[];
    config: Record<string, string>;
    group: boolean;
    registered: boolean;
  }> {
    const all = this.redis.allKeys(sale);
    const [values, config, registered, groups] = await Promise.all([
      Promise.all(all.map((k) => this.ops.get(k.stock))),
      this.ops.hgetall(this.redis.keys(sale).config),
      this.ops.hexists(this.redis.space.registry, sale.activityId),
      Promise.all(all.map((k) => this.ledger.groupInfo(k))),
    ]);
    return {
      stocks: all.map((k, b) => ({ key: k.stock, value: values[b] === null ? null : Number(values[b]) })),
      config,
      group: groups.every((g) => g !== null),
      registered: registered === 1,
    };
  }
}
