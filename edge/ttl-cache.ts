/**
 * A bounded isolate-memory map whose entries expire (after upstash ratelimit's `Cache`): the edge's
 * module-level caches (verified tokens, activity snapshots, rate-limit refusals, admission leases,
 * waiting-room poll pacing) each state their
 * TTL and bound and share this one implementation. Expired entries read as missing and are dropped;
 * when the map is full, expired entries are pruned and, if it is still full, it is cleared —
 * forgetting only ever costs a re-check, never a wrong answer.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries: number) {}

  /** The value while `now` is before its expiry; undefined once expired or never set. */
  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, expiresAt: number, now = Date.now()): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries) this.entries.clear();
    }
    this.entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
