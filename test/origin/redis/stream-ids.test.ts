/** Stream id order (origin/redis/stream.ts): by value of both parts, not as text. */
import { describe, expect, it } from 'vitest';
import { compareStreamIds } from '../../../origin/redis/stream.js';

describe('compareStreamIds', () => {
  it('orders by milliseconds, then by sequence, by value', () => {
    expect(compareStreamIds('1-0', '1-0')).toBe(0);
    expect(compareStreamIds('9-0', '10-0')).toBeLessThan(0); // as text "9" > "10"
    expect(compareStreamIds('10-0', '9-0')).toBeGreaterThan(0);
    expect(compareStreamIds('5-9', '5-10')).toBeLessThan(0);
    expect(compareStreamIds('5-10', '5-9')).toBeGreaterThan(0);
    expect(compareStreamIds('1733000000000-5', '1733000000001-0')).toBeLessThan(0);
    expect(compareStreamIds('0-0', '0-1')).toBeLessThan(0);
  });

  it('agrees with BigInt order on random ids, past 2^53', () => {
    const big = (a: string) => a.split('-').map(BigInt) as [bigint, bigint];
    const sign = (n: number) => Math.sign(n);
    const part = () =>
      String(
        Math.random() < 0.3 ? Math.floor(Math.random() * 20) : BigInt(Math.floor(Math.random() * 2 ** 52)) * 4096n,
      );
    for (let i = 0; i < 2000; i++) {
      const a = `${part()}-${part()}`;
      const b = Math.random() < 0.2 ? `${a.split('-')[0]}-${part()}` : `${part()}-${part()}`;
      const [am, as] = big(a);
      const [bm, bs] = big(b);
      const want = am !== bm ? (am < bm ? -1 : 1) : as === bs ? 0 : as < bs ? -1 : 1;
      expect(sign(compareStreamIds(a, b)), `${a} vs ${b}`).toBe(want);
    }
  });
});
