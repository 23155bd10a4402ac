/**
 * The access rules the scripts read (origin/access/sale-rules.ts decides when): the sale's
 * eligibility rule in every bucket's config hash, and the deny list in every bucket's `denied` hash.
 */
import type { RedisConnection } from './connection.js';
import type { Sale } from './sale.js';
import { denyScript, type DenyRevision } from './scripts/deny.js';

/** Config-hash field: the sale's eligibility rule as JSON, "" = everyone (lua/includes/access-rules.lua). */
const ELIGIBILITY_FIELD = 'eligibility';
/** Deny-list rows per lua/deny-1.lua call. */
const DENY_BATCH = 500;

export class SaleAccess {
  constructor(private readonly redis: RedisConnection) {}

  /**
   * The eligibility rule (JSON, "" = everyone) into every bucket's config hash, warm or not: a bucket
   * warmed later keeps it (warm-up only seeds an absent field). `onlyIfAbsent`: warm-up's seed, so a
   * rule an operator's PATCH wrote meanwhile is never overwritten by warm-up's older read.
   */
  async setEligibility(sale: Sale, rule: string, onlyIfAbsent = false): Promise<void> {
    const ops = this.redis.ops.redis;
    await Promise.all(
      this.redis
        .allKeys(sale)
        .map((k) =>
          onlyIfAbsent ? ops.hsetnx(k.config, ELIGIBILITY_FIELD, rule) : ops.hset(k.config, ELIGIBILITY_FIELD, rule),
        ),
    );
  }

  /** Deny-list rows into every bucket's `denied` hash (lua/deny-1.lua: newer revisions only). */
  async applyDeny(sale: Sale, rows: DenyRevision[]): Promise<void> {
    for (let i = 0; i < rows.length; i += DENY_BATCH) {
      const batch = rows.slice(i, i + DENY_BATCH);
      await Promise.all(this.redis.allKeys(sale).map((k) => this.redis.ops.run(denyScript, k, batch)));
    }
  }
}
