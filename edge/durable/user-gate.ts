/**
 * UserGateDO (DESIGN §4): per-user rate limit. Users are spread over N shards by hash; each shard
 * keeps a map key → token bucket in memory, pruned of idle (fully refilled) buckets. Exact per
 * user because one user always lands on the same shard. In memory only: an evicted shard forgets,
 * which at worst lets a user through once more — a rate limit, not a stock guard.
 *
 * The shard also keeps its users' deny-list entries (DESIGN §10), because every ticket and purchase
 * already calls it: a denied user costs no extra call, and the check is one Set lookup. Unlike the
 * buckets the deny list must survive eviction, so it is stored (key `deny:<userId>`) and loaded into
 * the Set when the object starts. 100k denied users over 16 shards ≈ 6k ids per shard (docs/operations.md).
 */
import { DurableObject } from 'cloudflare:workers';
import { isIdle, msUntilToken, take, type Bucket } from './token-bucket.js';

/** How often (at most) a shard sweeps idle buckets out of its map. */
const PRUNE_EVERY_MS = 10_000;

/**
 * `emptyForMs`: after this take the key has no token left for that long (0 = one is left). The
 * isolate remembers it as a refusal the gate already gave, so the user's next click (a repeat after
 * a purchase, a double click) is refused without another call (edge/gates.ts).
 */
export type GateAnswer =
  { ok: true; emptyForMs: number } | { ok: false; retryAfterMs: number } | { ok: false; denied: true };

const DENY_PREFIX = 'deny:';

export class UserGateDO extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();
  private readonly denied = new Set<string>();
  private lastPrune = 0;
  private calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      for (const key of (await ctx.storage.list({ prefix: DENY_PREFIX })).keys())
        this.denied.add(key.slice(DENY_PREFIX.length));
    });
  }

  /**
   * One request by `key` (e.g. `purchase:<activity>:<user>`) at `ratePerSec`, burst 1 s worth (≥ 1).
   * With `userId`: a denied user is refused before any token is taken.
   */
  async admit(key: string, ratePerSec: number, userId?: string): Promise<GateAnswer> {
    this.calls++;
    if (userId !== undefined && this.denied.has(userId)) return { ok: false, denied: true };
    const now = Date.now();
    this.prune(now);
    const result = take(this.buckets.get(key), 1, { ratePerSec, capacity: Math.max(1, ratePerSec) }, now);
    if (!result.ok) return result;
    this.buckets.set(key, result.bucket);
    return { ok: true, emptyForMs: msUntilToken(result.bucket) };
  }

  /** Applies deny-list changes pushed by the origin (only those of this shard's users arrive here). */
  async setDenied(entries: { userId: string; denied: boolean }[]): Promise<number> {
    const add = entries.filter((e) => e.denied).map((e) => DENY_PREFIX + e.userId);
    const remove = entries.filter((e) => !e.denied).map((e) => DENY_PREFIX + e.userId);
    // storage.put / delete take at most 128 keys per call.
    for (let i = 0; i < add.length; i += 128)
      await this.ctx.storage.put(Object.fromEntries(add.slice(i, i + 128).map((k) => [k, 1])));
    for (let i = 0; i < remove.length; i += 128) await this.ctx.storage.delete(remove.slice(i, i + 128));
    for (const e of entries) {
      if (e.denied) this.denied.add(e.userId);
      else this.denied.delete(e.userId);
    }
    return this.denied.size;
  }

  /** Number of users currently tracked (for tests and diagnostics). */
  async size(): Promise<number> {
    return this.buckets.size;
  }

  /** `admit` calls since this object started (tests and diagnostics). */
  async stats(): Promise<{ calls: number; tracked: number }> {
    return { calls: this.calls, tracked: this.buckets.size };
  }

  private prune(now: number): void {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    for (const [key, bucket] of this.buckets) if (isIdle(bucket, now)) this.buckets.delete(key);
  }
}
