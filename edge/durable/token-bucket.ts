/**
 * A token bucket as plain data plus one pure function, shared by UserGateDO and AdmissionDO.
 * A refused take returns no new state: a rejected request never consumes tokens and never pushes
 * the caller's next allowed time further out.
 */
export interface Bucket {
  tokens: number;
  updatedAt: number;
  ratePerSec: number;
  capacity: number;
}

export type TakeResult = { ok: true; bucket: Bucket } | { ok: false; retryAfterMs: number };

/** Tokens in the bucket at `now` (a missing bucket is a full one). */
export function level(bucket: Bucket | undefined, ratePerSec: number, capacity: number, now: number): number {
  if (!bucket) return capacity;
  const elapsed = Math.max(0, now - bucket.updatedAt);
  return Math.min(capacity, bucket.tokens + (elapsed * ratePerSec) / 1000);
}

export function take(
  bucket: Bucket | undefined,
  n: number,
  limits: { ratePerSec: number; capacity: number },
  now: number,
): TakeResult {
  const { ratePerSec, capacity } = limits;
  const available = level(bucket, ratePerSec, capacity, now);
  if (available >= n) return { ok: true, bucket: { tokens: available - n, updatedAt: now, ratePerSec, capacity } };
  return { ok: false, retryAfterMs: Math.ceil(((n - available) * 1000) / ratePerSec) };
}

/** Milliseconds until the bucket (as just written) holds one whole token again; 0 if it holds one now. */
export function msUntilToken(bucket: Bucket): number {
  return bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 1000) / bucket.ratePerSec);
}

/** A bucket that has refilled completely is the same as no bucket: it can be forgotten. */
export function isIdle(bucket: Bucket, now: number): boolean {
  return level(bucket, bucket.ratePerSec, bucket.capacity, now) >= bucket.capacity;
}

/** Seconds for a Retry-After header (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
