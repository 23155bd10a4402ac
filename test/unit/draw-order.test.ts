// The draw's lazy selection (origin/lottery/draw-order.ts) against the plain full sort of the rule
// (origin/lottery/draw-rule.ts): the same entrants in the same order, however many are taken.
import { describe, expect, it } from 'vitest';
import { DrawQueue } from '../../origin/lottery/draw-order.js';
import { compareDrawOrder, drawOrder, type OrderedEntrant } from '../../origin/lottery/draw-rule.js';

/** A seeded generator (mulberry32), so a failure names a case that can be run again. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Everything `take` yields, in chunks of `chunk`, until `k` entrants or the queue is empty. */
function takeFirst(queue: DrawQueue, k: number, chunk: number): OrderedEntrant[] {
  const out: OrderedEntrant[] = [];
  while (out.length < k && queue.remaining > 0) out.push(...queue.take(Math.min(chunk, k - out.length)));
  return out;
}

/** The full sort, stable: what the draw did before, and the rule as written. */
const sortAll = (entrants: OrderedEntrant[]) => [...entrants].sort(compareDrawOrder);

describe('the draw queue against a full sort', () => {
  it('real tickets: the first k of DrawQueue.of are the first k of drawOrder, entrant for entrant', () => {
    const rnd = random(1);
    for (let round = 0; round < 40; round++) {
      const n = Math.floor(rnd() * 300);
      const users = Array.from({ length: n }, (_, i) => ({
        userId: String(1_000_000 + i * 13 + Math.floor(rnd() * 13)),
        quantity: 1 + Math.floor(rnd() * 3),
      }));
      const seed = Math.floor(rnd() * 2 ** 48)
        .toString(16)
        .padStart(64, '0');
      const expected = drawOrder(seed, users);
      for (const k of [0, 1, Math.floor(n / 2), n, n + 5]) {
        const got = takeFirst(DrawQueue.of(seed, users), k, 1 + Math.floor(rnd() * 50));
        expect(got).toEqual(expected.slice(0, k));
      }
    }
  });

  it('forced ties: equal tickets are ordered by user id, equal tickets and ids by input position', () => {
    const rnd = random(2);
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(rnd() * 120);
      // Three ticket values and five user ids: ties on the ticket and on both are common.
      const entrants: OrderedEntrant[] = Array.from({ length: n }, (_, i) => ({
        userId: 'u' + Math.floor(rnd() * 5),
        quantity: i, // tells apart entrants equal on ticket and user id
        ticket: ['0a', '0b', 'ff'][Math.floor(rnd() * 3)]!,
      }));
      const expected = sortAll(entrants);
      for (const k of [0, 1, Math.floor(rnd() * (n + 1)), n, n + 1, 10 * n + 3]) {
        const got = takeFirst(new DrawQueue(entrants), k, 1 + Math.floor(rnd() * 7));
        expect(got).toEqual(expected.slice(0, k));
      }
    }
  });

  it('k = 0 takes nothing; k ≥ n takes everyone in order and leaves the queue empty', () => {
    // Tickets 0 (user 5), 1 (users 8 and 6: by user id), 2 (user 7), 3 (user 9).
    const entrants = [3, 1, 2, 1, 0].map((t, i) => ({ userId: String(9 - i), quantity: 1, ticket: String(t) }));
    const queue = new DrawQueue(entrants);
    expect(queue.take(0)).toEqual([]);
    expect(queue.remaining).toBe(5);
    expect(queue.take(100).map((e) => e.userId)).toEqual(['5', '6', '8', '7', '9']);
    expect(queue.remaining).toBe(0);
    expect(queue.take(1)).toEqual([]);
    expect(new DrawQueue([]).take(3)).toEqual([]);
  });

  it('keeps every entrant with their ticket for the published list, taken or not', () => {
    const users = Array.from({ length: 50 }, (_, i) => ({ userId: String(500 + i), quantity: 1 }));
    const seed = 'ab'.repeat(32);
    const queue = DrawQueue.of(seed, users);
    queue.take(10);
    expect(queue.entrants.map((e) => e.userId)).toEqual(users.map((u) => u.userId));
    const byUser = new Map(drawOrder(seed, users).map((e) => [e.userId, e.ticket]));
    expect(queue.entrants.every((e) => byUser.get(e.userId) === e.ticket)).toBe(true);
  });
});
