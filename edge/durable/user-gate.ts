/**
 * UserGateDO (DESIGN §4): per-user rate limit. Users are spread over N shards by hash; each shard
 * keeps a map key → token bucket in memory, pruned of idle (fully refilled) buckets. Exact per
 * user because one user always lands on the same shard. In memory only: an evicted shard forgets,
 * which at worst lets a user through once more — a rate limit, not a stock guard.
 */
import { DurableObject } from 'cloudflare:workers';
import { isIdle, take, type Bucket } from './token-bucket.js';

/** How often (at most) a shard sweeps idle buckets out of its map. */
const PRUNE_EVERY_MS = 10_000;

export type GateAnswer = { ok: true } | { ok: false; retryAfterMs: number };

export class UserGateDO extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();
  private lastPrune = 0;

  /** One request by `key` (e.g. `purchase:<activity>:<user>`) at `ratePerSec`, burst 1 s worth (≥ 1). */
  async admit(key: string, ratePerSec: number): Promise<GateAnswer> {
    const now = Date.now();
    this.prune(now);
    const result = take(this.buckets.get(key), 1, { ratePerSec, capacity: Math.max(1, ratePerSec) }, now);
    if (!result.ok) return result;
    this.buckets.set(key, result.bucket);
    return { ok: true };
  }

  /** Number of users currently tracked (for tests and diagnostics). */
  async size(): Promise<number> {
    return this.buckets.size;
  }

  private prune(now: number): void {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    for (const [key, bucket] of this.buckets) if (isIdle(bucket, now)) this.buckets.delete(key);
  }
}
