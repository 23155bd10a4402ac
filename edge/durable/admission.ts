/**
 * AdmissionDO (DESIGN §4): one of N shards per activity, each a token bucket of
 * admissionRatePerSec / N that caps what the edge forwards to the origin. `take(n)` grants up to n
 * tokens so an isolate can later lease a small batch and spend it from memory instead of calling a
 * shard per request; today the edge takes one per purchase.
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

  async take(n: number, ratePerSec: number): Promise<AdmissionGrant> {
    const now = Date.now();
    const limits = { ratePerSec, capacity: Math.max(1, ratePerSec) };
    // Grant as many of the n as are available, at least one or none.
    for (let want = Math.max(1, Math.floor(n)); want >= 1; want = Math.floor(want / 2)) {
      const result = take(this.bucket, want, limits, now);
      if (result.ok) {
        this.bucket = result.bucket;
        return { granted: want, retryAfterMs: 0 };
      }
      if (want === 1) return { granted: 0, retryAfterMs: result.retryAfterMs };
    }
    return { granted: 0, retryAfterMs: 1000 };
  }
}
