/**
 * Recovery of a sale's Redis state (origin/recovery/recover.ts, the failover watch): stop selling
 * by dropping the stock keys, rewrite every bucket from proven figures (lua/recover-9.lua), and give
 * up borrows a dead process left half-done (borrow.ts).
 */
import type { ActivitySwitch } from '../../contract/activity.js';
import { returnStranded, type StrandedBorrow } from './borrow.js';
import { homeBucket, refillBucket, splitStock } from './buckets.js';
import type { RedisConnection } from './connection.js';
import type { ReservationEvent } from './reservation-event.js';
import type { SaleRegistry } from './sale-registry.js';
import type { SaleStock } from './sale-stock.js';
import type { Sale } from './sale.js';
import { recoverScript, type RecoverArgs } from './scripts/recover.js';

export interface RecoverInput {
  stock: number;
  state: ActivitySwitch;
  maxPerUser: number;
  /** userId → reservationId */
  holders: Map<string, string>;
  /** reservationId → units given back, and whose reservation it was */
  released: Map<string, { units: number; userId: string }>;
  /** reservationId → units refilled */
  refilled: Map<string, number>;
  /** Tranche id → units of the releases the stock holds (MySQL applied them); split over the buckets as releaseTranche does. */
  tranches: Map<string, number>;
  /** Reservations MySQL proves (orders) that the surviving Stream lacks: appended again (failover). */
  restore?: Omit<ReservationEvent, 'streamId'>[];
}

export type RecoverResult =
  { kind: 'recovered'; stock: number; holders: number } | { kind: 'warm' } | { kind: 'no_stream' };

export class SaleRecovery {
  constructor(
    private readonly redis: RedisConnection,
    private readonly stock: Pick<SaleStock, 'warmBuckets'>,
    private readonly registry: Pick<SaleRegistry, 'register'>,
  ) {}

  /**
   * Failover recovery's first step: drop every bucket's stock key, so every origin process's reserve
   * script answers "not warmed" (503 `not_ready`) until recover rebuilds the stock from MySQL and the
   * Stream. Holders, the Stream and its group stay: recover reads and rewrites them.
   */
  async stopForRecovery(sale: Sale): Promise<void> {
    await Promise.all(this.redis.allKeys(sale).map((k) => this.redis.ops.redis.del(k.stock)));
  }

  /**
   * lua/recover-9.lua on every bucket: rewrites the sale's Redis state from proven figures. Each
   * bucket is all or nothing; the stock is split evenly, holders go to their home bucket.
   */
  async recover(sale: Sale, input: RecoverInput): Promise<RecoverResult> {
    // The stock is proven for the whole sale only: a bucket still selling would be counted twice.
    if ((await this.stock.warmBuckets(sale)) > 0) return { kind: 'warm' };
    const shares = splitStock(input.stock, sale.buckets);
    const per: RecoverArgs[] = shares.map((stock) => ({
      stock,
      state: input.state,
      maxPerUser: input.maxPerUser,
      holders: new Map<string, string>(),
      released: new Map<string, number>(),
      refilled: new Map<string, number>(),
      tranches: new Map<string, number>(),
      restore: [],
    }));
    for (const [userId, rid] of input.holders) per[homeBucket(userId, sale.buckets)]!.holders.set(userId, rid);
    for (const [rid, r] of input.released) per[homeBucket(r.userId, sale.buckets)]!.released.set(rid, r.units);
    for (const [rid, units] of input.refilled) per[refillBucket(rid, sale.buckets)]!.refilled.set(rid, units);
    for (const [id, units] of input.tranches)
      for (const [b, share] of splitStock(units, sale.buckets).entries())
        if (share > 0) per[b]!.tranches.set(id, share);
    for (const e of input.restore ?? []) per[homeBucket(e.userId, sale.buckets)]!.restore.push(e);
    let holders = 0;
    for (const [b, k] of this.redis.allKeys(sale).entries()) {
      const reply = await this.redis.ops.run(recoverScript, k, per[b]!);
      if (reply.kind !== 'recovered') return reply;
      holders += reply.holders;
    }
    await this.registry.register(sale);
    return { kind: 'recovered', stock: input.stock, holders };
  }

  /**
   * Borrows left half-done (marked pending, or units lent, then the process died) older than
   * `staleMs`: given up at home and their units returned to the donor. Returns what was returned.
   */
  returnStranded(sale: Sale, staleMs: number): Promise<StrandedBorrow[]> {
    return returnStranded(
      { scripts: this.redis.ops, keys: (s: Sale, b: number) => this.redis.keys(s, b), log: this.redis.log },
      sale,
      Date.now() - staleMs,
    );
  }
}
