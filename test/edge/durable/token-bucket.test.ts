import { describe, expect, it } from 'vitest';
import { isIdle, take } from '../../../edge/durable/token-bucket.js';

const limits = { ratePerSec: 1, capacity: 1 };

describe('token bucket', () => {
  it('one request per second: the second within the second is refused with the wait', () => {
    const first = take(undefined, 1, limits, 1_000);
    expect(first.ok).toBe(true);
    const second = take(first.ok ? first.bucket : undefined, 1, limits, 1_400);
    expect(second).toEqual({ ok: false, retryAfterMs: 600 });
  });

  it('a refused request changes nothing: the next allowed time stays where it was', () => {
    const first = take(undefined, 1, limits, 1_000);
    if (!first.ok) throw new Error('first must pass');
    const refused = take(first.bucket, 1, limits, 1_600);
    expect(refused.ok).toBe(false);
    // The caller keeps the old bucket (a refusal returns none); at 2_000 the token is back.
    expect(take(first.bucket, 1, limits, 2_000).ok).toBe(true);
  });

  it('a fully refilled bucket is idle and can be forgotten', () => {
    const first = take(undefined, 1, limits, 1_000);
    if (!first.ok) throw new Error('first must pass');
    expect(isIdle(first.bucket, 1_500)).toBe(false);
    expect(isIdle(first.bucket, 2_000)).toBe(true);
  });

  it('takes n at once when available (the shape of a lease)', () => {
    const r = take(undefined, 5, { ratePerSec: 10, capacity: 10 }, 0);
    expect(r.ok && r.bucket.tokens).toBe(5);
  });
});
