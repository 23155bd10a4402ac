/**
 * The waiting line of one admission shard (edge/durable/waiting-line.ts), driven with explicit
 * clock values: order, leases that never jump the line, positions and ETAs, pacing, ghosts, closing.
 */
import { describe, expect, it } from 'vitest';
import { WaitingLine, type LineAnswer, type LineLimits } from '../../edge/durable/waiting-line.js';

const limits: LineLimits = { ratePerSec: 10, pollMinMs: 250, pollBudgetPerSec: 500 };
const buyer = (n: number) => ({ userId: String(1000 + n), requestId: `r${n}`, quantity: 1 });

/** A line whose bucket is empty at t=0, with `n` buyers waiting (seq 1..n). */
function lineWith(n: number): WaitingLine {
  const line = new WaitingLine();
  expect(line.grant(10, limits, 0).granted).toBe(10);
  for (let i = 1; i <= n; i++) expect(line.enter(buyer(i), 1, limits, 0).kind).toBe('waiting');
  return line;
}

function waiting(a: LineAnswer | { kind: 'admitted' }) {
  if (a.kind !== 'waiting') throw new Error(`expected waiting, got ${JSON.stringify(a)}`);
  return a;
}

describe('WaitingLine', () => {
  it('a kept purchase keeps its verified claims to its turn (the origin checks eligibility then)', () => {
    const line = new WaitingLine();
    expect(line.grant(10, limits, 0).granted).toBe(10);
    const member = { ...buyer(1), claims: { tier: ['gold', 'platinum'] } };
    expect(line.enter(member, 1, limits, 0).kind).toBe('waiting');
    expect(line.enter(buyer(2), 1, limits, 0).kind).toBe('waiting');
    expect(line.poll(1, member.userId, limits, 260)).toEqual({ kind: 'turn', seq: 1, purchase: member });
    expect(line.poll(2, buyer(2).userId, limits, 260)).toMatchObject({ kind: 'turn', purchase: { claims: undefined } });
  });

  it('while anyone waits, no lease gets a token, and a newcomer queues behind', () => {
    const line = lineWith(3);
    // 2.5 tokens have accrued by 250 ms: they are the first two buyers' turns, not a lease.
    expect(line.grant(16, limits, 250).granted).toBe(0);
    expect(line.poll(2, buyer(2).userId, limits, 260).kind).toBe('turn');
    expect(waiting(line.enter(buyer(4), 16, limits, 260)).position).toBe(1);
  });

  it('tokens go to the head in arrival order, at the rate; the turn runs the kept purchase', () => {
    const line = lineWith(3);
    // 100 ms = one token at 10/s: by 260 ms the first two in line have had their turn.
    expect(line.poll(1, buyer(1).userId, limits, 260)).toMatchObject({ kind: 'turn', purchase: buyer(1) });
    expect(line.poll(2, buyer(2).userId, limits, 260)).toMatchObject({ kind: 'turn', purchase: buyer(2) });
    expect(waiting(line.poll(3, buyer(3).userId, limits, 260)).position).toBe(0);
    line.finish(1, buyer(1).userId, { reservationId: 'x' }, 270);
    expect(line.poll(1, buyer(1).userId, limits, 600)).toMatchObject({ kind: 'done', outcome: { reservationId: 'x' } });
    expect(line.figuresAt(600)).toMatchObject({ entered: 3, admitted: 3, waiting: 0 });
  });

  it('everyone polling as told: positions fall on every poll, and each turn comes when the first ETA said', () => {
    const line = new WaitingLine();
    line.grant(10, limits, 0);
    const n = 40;
    const next = new Map<number, number>();
    const eta = new Map<number, number>();
    const positions = new Map<number, number[]>();
    for (let i = 1; i <= n; i++) {
      const w = waiting(line.enter(buyer(i), 1, limits, 0));
      expect(w.position).toBe(i - 1);
      eta.set(i, w.etaMs);
      next.set(i, w.pollAfterMs);
      positions.set(i, [w.position]);
    }
    expect(eta.get(n)).toBe(n * 100);
    const turnSeenAt = new Map<number, number>();
    for (let t = 0; next.size > 0; t++) {
      for (const [i, at] of next) {
        if (at !== t) continue;
        const a = line.poll(i, buyer(i).userId, limits, t);
        if (a.kind === 'turn') {
          turnSeenAt.set(i, t);
          next.delete(i);
          line.finish(i, buyer(i).userId, { reservationId: `res${i}` }, t);
          continue;
        }
        const w = waiting(a);
        expect(w.position).toBeLessThan(positions.get(i)!.at(-1)!);
        positions.get(i)!.push(w.position);
        next.set(i, t + w.pollAfterMs);
      }
    }
    for (let i = 1; i <= n; i++) {
      // The turn (token i at i × 100 ms) is learned at the first poll after it: no later than pollMinMs.
      expect(turnSeenAt.get(i)).toBeGreaterThanOrEqual(eta.get(i)!);
      expect(turnSeenAt.get(i)! - eta.get(i)!).toBeLessThanOrEqual(limits.pollMinMs);
    }
    expect(line.figuresAt(10_000)).toMatchObject({ entered: n, admitted: n, dropped: 0 });
  });

  it('polling sooner than pollAfterMs is too_soon; a repeat click is the same entry', () => {
    const line = lineWith(5);
    const a = waiting(line.poll(5, buyer(5).userId, limits, 260));
    expect(a.position).toBe(2);
    // A repeat click: the same entry, and the poll it was told to make stays allowed on time.
    const again = waiting(line.enter(buyer(5), 1, limits, 270));
    expect(again).toMatchObject({ seq: 5, pollAfterMs: a.pollAfterMs - 10 });
    expect(line.poll(5, buyer(5).userId, limits, 260 + a.pollAfterMs - 1)).toMatchObject({ kind: 'too_soon' });
    expect(line.poll(5, buyer(5).userId, limits, 260 + a.pollAfterMs).kind).not.toBe('too_soon');
    expect(line.poll(5, '999', limits, 2_000).kind).toBe('gone');
  });

  it('an entry not polled for 3 × pollAfterMs is dropped; the next one gets its turn', () => {
    const line = new WaitingLine();
    line.grant(10, limits, 0);
    // Buyer 1 waits and never polls (pollAfter 250 → gone after 750 ms); buyer 2 keeps polling.
    for (const i of [1, 2]) line.enter(buyer(i), 1, limits, 0);
    // Both turns (100, 200 ms) come before buyer 1's deadline: buyer 1 is admitted, then never runs.
    let t = 0;
    let answer: LineAnswer;
    do {
      t += 250;
      answer = line.poll(2, buyer(2).userId, limits, t);
    } while (answer.kind === 'waiting');
    expect(answer.kind).toBe('turn');
    expect(line.poll(1, buyer(1).userId, limits, 1_000).kind).toBe('gone');
    expect(line.figuresAt(1_000).dropped).toBe(1);

    // A waiting ghost is skipped at no token cost: 3 wait, the middle one stops polling.
    const l2 = new WaitingLine();
    const slow: LineLimits = { ...limits, ratePerSec: 1 };
    l2.grant(1, slow, 0);
    for (const i of [1, 2, 3]) l2.enter(buyer(i), 1, slow, 0);
    let turns: string[] = [];
    for (let now = 250; now <= 4_000; now += 250) {
      for (const i of [1, 3]) {
        const a = l2.poll(i, buyer(i).userId, slow, now);
        if (a.kind === 'turn') {
          turns.push(a.purchase.userId);
          l2.finish(i, buyer(i).userId, { reservationId: `res${i}` }, now);
        }
      }
    }
    expect(turns).toEqual([buyer(1).userId, buyer(3).userId]);
    expect(l2.figuresAt(4_000).dropped).toBe(1);
  });

  it('closing keeps the turn of a purchase whose outcome is unknown (the origin says whether it holds a unit)', () => {
    const line = lineWith(3);
    expect(line.poll(1, buyer(1).userId, limits, 300).kind).toBe('turn');
    line.retryLater(1, buyer(1).userId, limits, 300);
    line.close('sold_out', limits, 400);
    expect(line.poll(1, buyer(1).userId, limits, 800)).toMatchObject({ kind: 'turn', purchase: buyer(1) });
    expect(line.poll(2, buyer(2).userId, limits, 800)).toMatchObject({ kind: 'done', outcome: { error: 'sold_out' } });
  });

  it('closing resolves every waiting and admitted entry; a finished reservation stays', () => {
    const line = lineWith(4);
    expect(line.poll(1, buyer(1).userId, limits, 300).kind).toBe('turn');
    line.finish(1, buyer(1).userId, { reservationId: 'kept' }, 300);
    expect(line.poll(2, buyer(2).userId, limits, 300).kind).toBe('turn');
    line.close('sold_out', limits, 400);
    expect(line.poll(2, buyer(2).userId, limits, 800)).toMatchObject({ kind: 'done', outcome: { error: 'sold_out' } });
    expect(line.poll(4, buyer(4).userId, limits, 800)).toMatchObject({ kind: 'done', outcome: { error: 'sold_out' } });
    expect(line.poll(1, buyer(1).userId, limits, 800)).toMatchObject({ outcome: { reservationId: 'kept' } });
    expect(line.figuresAt(800)).toMatchObject({ waiting: 0, turnsPending: 0, closed: 3 });
    // Refused users may click again later (a paused sale reopens): a new entry, not the old refusal.
    line.grant(1, limits, 5_000);
    expect(line.enter(buyer(4), 1, limits, 5_000).kind).toBe('admitted');
  });
});
