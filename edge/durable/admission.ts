/**
 * AdmissionDO (DESIGN §4): one of N shards per activity, each a token bucket of
 * admissionRatePerSec / N that caps what the edge forwards to the origin. `take(n)` grants up to n
 * tokens: isolates lease small batches and spend them from memory (edge/gates.ts) instead of
 * calling a shard per purchase.
 */
import { DurableObject } from 'cloudflare:workers';
import { take, type Bucket } from './token-bucket.js';

export interface AdmissionGrant {
  granted: number;
  /** When nothing was granted: how long until one token is available. */
  retryAfterMs: number;
}

export class AdmissionDO extends DurableObject<Env> {
  private bucket: Bucket | undefined;
  private calls = 0;
  private granted = 0;

  /** Calls and tokens granted since this object started (diagnostics and tests). */
  async stats(): Promise<{ calls: number; granted: number }> {
    return { calls: this.calls, granted: this.granted };
  }

  async take(n: number, ratePerSec: number): Promise<AdmissionGrant> {
    const now = Date.now();
    this.calls++;
    const limits = { ratePerSec, capacity: Math.max(1, ratePerSec) };
    // Grant as many of the n as are available, at least one or none.
    for (let want = Math.max(1, Math.floor(n)); want >= 1; want = Math.floor(want / 2)) {
      const result = take(this.bucket, want, limits, now);
      if (result.ok) {
        this.bucket = result.bucket;
        this.granted += want;
        return { granted: want, retryAfterMs: 0 };
      }
      if (want === 1) return { granted: 0, retryAfterMs: result.retryAfterMs };
    }
    return { granted: 0, retryAfterMs: 1000 };
  }
}
