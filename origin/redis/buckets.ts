/**
 * Stock buckets (docs/design.md §10), pure arithmetic: how a sale's stock is split, which bucket is a user's
 * home (where the user's holder record lives), and which bucket a refill goes back to.
 */

export const MAX_STOCK_BUCKETS = 64;

/** 32-bit FNV-1a of the string's UTF-8 bytes. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** A user's home bucket: FNV-1a(userId) mod B. */
export function homeBucket(userId: string, buckets: number): number {
  return buckets <= 1 ? 0 : fnv1a(userId) % buckets;
}

/** Where a refill of a reservation's units lands: a fixed bucket per reservation keeps refill idempotent. */
export function refillBucket(reservationId: string, buckets: number): number {
  return buckets <= 1 ? 0 : fnv1a(reservationId) % buckets;
}

/** `total` split evenly: the first `total mod B` buckets get one unit more. Sums to `total`. */
export function splitStock(total: number, buckets: number): number[] {
  const base = Math.floor(total / buckets);
  return Array.from({ length: buckets }, (_, b) => base + (b < total % buckets ? 1 : 0));
}
