// The edge's one isolate-memory cache class (edge/ttl-cache.ts), with explicit clocks.
import { describe, expect, it } from 'vitest';
import { TtlCache } from '../../edge/ttl-cache.js';

describe('TtlCache', () => {
  it('returns a value until its expiry and nothing from then on', () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'x', 1_000, 0);
    expect(cache.get('a', 999)).toBe('x');
    expect(cache.get('a', 1_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('when full, drops expired entries first and keeps the fresh ones', () => {
    const cache = new TtlCache<number>(3);
    cache.set('old', 1, 100, 0);
    cache.set('b', 2, 1_000, 0);
    cache.set('c', 3, 1_000, 0);
    cache.set('d', 4, 1_000, 500);
    expect(cache.size).toBe(3);
    expect([cache.get('b', 500), cache.get('c', 500), cache.get('d', 500)]).toEqual([2, 3, 4]);
  });

  it('when full of fresh entries, starts over with the new one', () => {
    const cache = new TtlCache<number>(2);
    cache.set('a', 1, 1_000, 0);
    cache.set('b', 2, 1_000, 0);
    cache.set('c', 3, 1_000, 0);
    expect(cache.size).toBe(1);
    expect(cache.get('c', 0)).toBe(3);
    expect(cache.get('a', 0)).toBeUndefined();
  });

  it('overwriting a key of a full cache keeps the others', () => {
    const cache = new TtlCache<number>(2);
    cache.set('a', 1, 1_000, 0);
    cache.set('b', 2, 1_000, 0);
    cache.set('a', 9, 2_000, 0);
    expect([cache.get('a', 1_500), cache.get('b', 0)]).toEqual([9, 2]);
  });
});
