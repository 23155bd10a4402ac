/**
 * UserGateDO (docs/design.md §4): per-user rate limit. Users are spread over N shards by hash; each shard
 * keeps a map key → token bucket in memory, pruned of idle (fully refilled) buckets. Exact per
 * user because one user always lands on the same shard. In memory only: an evicted shard forgets,
 * which at worst lets a user through once more — a rate limit, not a stock guard.
 *
 * The shard also keeps its users' deny-list entries (docs/design.md §10), because every ticket and purchase
 * already calls it: a denied user costs no extra call, and the check is one Set lookup. Unlike the
 * buckets the deny list must survive eviction, so it is stored (key `deny:<userId>`) and loaded into
 * the Set when the object starts. 100k denied users over 16 shards ≈ 6k ids per shard (docs/operations.md).
 *
 * Each stored entry is the revision of the origin's row, signed: +r denied at revision r, −r allowed
 * again at r (kept, so an older "denied" cannot come back either). A push older than or as old as
 * what the shard holds is ignored: a captured push replayed later, or two pushes crossing, never
 * undo a newer change. Entries stored before revisions were kept hold 1 (= denied at 1).
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

/** A deny-list change as the origin pushes it: the row's state and revision (≥ 1). */
export interface DenyChange {
  userId: string;
  denied: boolean;
  revision: number;
}

export class UserGateDO extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();
  private readonly denied = new Set<string>();
  private lastPrune = 0;
  private calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      for (const [key, revision] of await ctx.storage.list<number>({ prefix: DENY_PREFIX }))
        if (revision > 0) this.denied.add(key.slice(DENY_PREFIX.length));
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

  /**
   * Applies deny-list changes pushed by the origin (only those of this shard's users arrive here),
   * each only if its revision is newer than the one stored. Storage calls hold the object's input
   * gate, so no other push interleaves between the read and the write.
   */
  async setDenied(entries: DenyChange[]): Promise<{ applied: number; ignored: number }> {
    // The newest of each user's entries in this push; then only those newer than what is stored.
    const newest = new Map<string, DenyChange>();
    for (const e of entries) if (e.revision > (newest.get(e.userId)?.revision ?? 0)) newest.set(e.userId, e);
    const changes = [...newest.values()];
    const apply: DenyChange[] = [];
    // storage.get / put take at most 128 keys per call.
    for (let i = 0; i < changes.length; i += 128) {
      const part = changes.slice(i, i + 128);
      const held = await this.ctx.storage.get<number>(part.map((e) => DENY_PREFIX + e.userId));
      for (const e of part) if (e.revision > Math.abs(held.get(DENY_PREFIX + e.userId) ?? 0)) apply.push(e);
    }
    for (let i = 0; i < apply.length; i += 128)
      await this.ctx.storage.put(
        Object.fromEntries(
          apply.slice(i, i + 128).map((e) => [DENY_PREFIX + e.userId, e.denied ? e.revision : -e.revision]),
        ),
      );
    for (const e of apply) {
      if (e.denied) this.denied.add(e.userId);
      else this.denied.delete(e.userId);
    }
    return { applied: apply.length, ignored: entries.length - apply.length };
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
