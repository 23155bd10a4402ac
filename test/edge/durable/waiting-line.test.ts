/**
 * The waiting line of one admission shard (edge/durable/waiting-line.ts), driven with explicit
 * clock values: order, leases that never jump the line, positions and ETAs, pacing, ghosts, closing;
 * and the line rebuilt from its stored rows (order, grace after a load, reasons, claims).
 */
import { describe, expect, it } from 'vitest';
import {
  OUTCOME_KEPT_MS,
  SWEEP_EVERY_MS,
  type LineAnswer,
  type LineLimits,
  type StoredEntry,
} from '../../../edge/durable/line-entries.js';
import { WaitingLine } from '../../../edge/durable/waiting-line.js';

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
    // A purchase made without claims reaches its turn without any.
    expect(line.poll(2, buyer(2).userId, limits, 260)).toEqual({ kind: 'turn', seq: 2, purchase: buyer(2) });
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
    const turns: string[] = [];
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

  it('an admitted ghost is dropped on the first call past its own deadline, however its deadline was set', () => {
    const kept = (n: number, pollAfterMs: number, state: 'admitted' | 'waiting' = 'admitted'): StoredEntry => ({
      seq: n,
      state,
      ...buyer(n),
      enqueuedAt: 0,
      lastAnswerAt: 0,
      pollAfterMs,
      tried: false,
    });
    const probe = (line: WaitingLine, now: number) => line.poll(99, '999', limits, now);
    // Restored at 0, buyer 1's turn is due by 2 × 10 s: 20 s.
    // Its turn's poll renews it to 100 + 3 × 250 ms: it is a ghost from 851 ms on, not 20 s.
    const renewed = WaitingLine.restore([kept(1, 10_000)], undefined, 0);
    probe(renewed, 50);
    expect(renewed.poll(1, buyer(1).userId, limits, 100).kind).toBe('turn');
    probe(renewed, 850);
    expect(renewed.figuresAt(850).dropped).toBe(0);
    probe(renewed, 851);
    expect(renewed.figuresAt(851).dropped).toBe(1);
    expect(renewed.poll(1, buyer(1).userId, limits, 852)).toMatchObject({ kind: 'gone', reason: { why: 'expired' } });

    // Buyer 2 waits (due by 2 × 250 ms), is admitted at the first token (100 ms) behind buyer 1's
    // 20 s deadline, and never polls: a ghost from 501 ms on.
    const admitted = WaitingLine.restore([kept(1, 10_000), kept(2, 250, 'waiting')], undefined, 0);
    probe(admitted, 50);
    probe(admitted, 100);
    expect(admitted.figuresAt(100).turnsPending).toBe(2);
    probe(admitted, 500);
    expect(admitted.figuresAt(500).dropped).toBe(0);
    probe(admitted, 501);
    expect(admitted.figuresAt(501).dropped).toBe(1);
    expect(admitted.poll(2, buyer(2).userId, limits, 502)).toMatchObject({ kind: 'gone', reason: { why: 'expired' } });
    expect(admitted.poll(1, buyer(1).userId, limits, 502).kind).toBe('turn');
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

/** What the shard's storage holds: the rows of every changed entry, as AdmissionDO writes them in batches. */
function storeOf(line: WaitingLine, rows = new Map<number, StoredEntry>()): Map<number, StoredEntry> {
  for (const seq of line.takeChanges()) {
    const row = line.entryRow(seq);
    if (row) rows.set(seq, row);
    else rows.delete(seq);
  }
  return rows;
}

describe('WaitingLine bounds (WAITING_LINE_MAX, WAITING_POLL_MAX_MS)', () => {
  /** The defaults at 1 admission/s on one shard, the line capped at 1,000. */
  const bounded: LineLimits = {
    ratePerSec: 1,
    pollMinMs: 1_000,
    pollBudgetPerSec: 500,
    pollMaxMs: 60_000,
    maxWaiting: 1_000,
  };

  /** A line at 1/s whose one token went at t=0, with `n` buyers joined at t=0 (seq 1..n). */
  function boundedLine(n: number): WaitingLine {
    const line = new WaitingLine({ trackChanges: true });
    expect(line.grant(1, bounded, 0).granted).toBe(1);
    for (let i = 1; i <= n; i++) expect(line.enter(buyer(i), 1, bounded, 0).kind).toBe('waiting');
    return line;
  }

  it('2,000 joins on a shard capped at 1,000: 1,000 places and 1,000 refusals, none of them kept', () => {
    const line = new WaitingLine({ trackChanges: true });
    expect(line.grant(1, bounded, 0).granted).toBe(1);
    const answers = Array.from({ length: 2_000 }, (_, i) => line.enter(buyer(i + 1), 1, bounded, 0));
    const places = answers.filter((a) => a.kind === 'waiting');
    const refusals = answers.filter((a) => a.kind === 'full');
    expect([places.length, refusals.length]).toEqual([1_000, 1_000]);
    // The first 1,000 in arrival order hold the places, at positions 0..999.
    expect(answers.slice(0, 1_000).map((a) => waiting(a).position)).toEqual([...Array(1_000).keys()]);
    // The next turn is a second away: that is when one place opens.
    expect(refusals[0]).toEqual({ kind: 'full', retryAfterMs: 1_000 });
    // A refused join leaves nothing to store and nobody behind: only the places are rows.
    expect(line.takeChanges()).toHaveLength(1_000);
    expect(line.figuresAt(0)).toMatchObject({ waiting: 1_000, entered: 1_000, refusedFull: 1_000 });
    // Someone holding a place still gets it back on a repeat click while the line is full.
    expect(waiting(line.enter(buyer(7), 1, bounded, 10))).toMatchObject({ seq: 7, position: 6 });
    // A turn frees a place: the next join is taken, then the line is full again.
    expect(line.enter(buyer(2_001), 1, bounded, 1_000).kind).toBe('waiting');
    expect(line.enter(buyer(2_002), 1, bounded, 1_000).kind).toBe('full');
  });

  it('the back of a 300-long line at 1 admission/s is told to poll within 60 s', () => {
    const joins = (limits: LineLimits) => {
      const line = new WaitingLine();
      expect(line.grant(1, limits, 0).granted).toBe(1);
      return Array.from({ length: 300 }, (_, i) => waiting(line.enter(buyer(i + 1), 1, limits, 0)));
    };
    const told = joins(bounded);
    expect(told[299]).toMatchObject({ position: 299, etaMs: 300_000, pollAfterMs: 60_000 });
    // Nobody is told more than 60 s; near the head less, as the interval shrinks with the turn.
    expect(Math.max(...told.map((a) => a.pollAfterMs))).toBe(60_000);
    expect(told[0]!.pollAfterMs).toBe(1_000);
    // Without the ceiling the back would be told half its ETA, 150 s (dropped only after 450 s).
    expect(joins({ ...bounded, pollMaxMs: undefined })[299]!.pollAfterMs).toBe(150_000);
  });

  it('a place not polled within 3 × its own pollAfterMs is dropped, wherever it stands', () => {
    // Two lines of 300 joined at t=0; the back (told 60 s) polls once at 179 s in one, never in the other.
    const kept = boundedLine(300);
    const left = boundedLine(300);
    const keptAnswer = kept.poll(300, buyer(300).userId, bounded, 179_000);
    expect(['waiting', 'turn']).toContain(keptAnswer.kind);
    // 180 s is the bound of the back's own interval; just past it, the place is gone, saying why.
    expect(left.poll(300, buyer(300).userId, bounded, 180_001)).toEqual({
      kind: 'gone',
      reason: { why: 'expired', limitMs: 180_000 },
    });
    // A later poll, or a repeat click, does not bring it back.
    expect(left.poll(300, buyer(300).userId, bounded, 185_000).kind).toBe('gone');
    expect(left.entryRow(300)).toMatchObject({ state: 'dropped', limitMs: 180_000 });
  });

  it('a late poll between its deadline and the next sweep finds the place gone, counted once', () => {
    // One turn per 100 s, so nobody's turn comes while the deadlines are tested.
    const slow: LineLimits = { ...bounded, ratePerSec: 0.01 };
    const line = new WaitingLine();
    expect(line.grant(1, slow, 0).granted).toBe(1);
    const told = [1, 2, 3].map((i) => waiting(line.enter(buyer(i), 1, slow, 0)).pollAfterMs);
    expect(told).toEqual([50_000, 60_000, 60_000]);
    // Buyer 1 polls as told to its turn and buys; buyer 3 polls as told; buyer 2 never polls.
    expect(line.poll(1, buyer(1).userId, slow, 50_000).kind).toBe('waiting');
    expect(line.poll(3, buyer(3).userId, slow, 60_000).kind).toBe('waiting');
    expect(line.poll(1, buyer(1).userId, slow, 75_000).kind).toBe('waiting');
    expect(line.poll(1, buyer(1).userId, slow, 100_000).kind).toBe('turn');
    line.finish(1, buyer(1).userId, { reservationId: 'r1' }, 100_000);
    expect(line.poll(3, buyer(3).userId, slow, 120_000).kind).toBe('waiting');
    expect(line.poll(3, buyer(3).userId, slow, 180_000).kind).toBe('waiting');
    // The poll at 180 s swept the line (buyer 2's bound, 3 × 60 s, is 180 s: not passed); the next sweep
    // is due at 181 s: a poll in between finds the place gone, not revived.
    expect(line.poll(2, buyer(2).userId, slow, 180_500)).toEqual({
      kind: 'gone',
      reason: { why: 'expired', limitMs: 180_000 },
    });
    expect(line.figuresAt(180_500)).toMatchObject({ dropped: 1, waiting: 2 });
    // The sweep removes its slot without counting it again, and the next turn (200 s) is buyer 3's.
    expect(line.poll(3, buyer(3).userId, slow, 181_000).kind).toBe('too_soon');
    expect(line.figuresAt(181_000)).toMatchObject({ dropped: 1, waiting: 1 });
    expect(line.poll(3, buyer(3).userId, slow, 240_000)).toMatchObject({ kind: 'turn', purchase: buyer(3) });
    expect(line.figuresAt(240_000)).toMatchObject({ dropped: 1, waiting: 0, admitted: 2 });
  });
});

describe('WaitingLine kept in storage', () => {
  it('rebuilt from its rows after 4 s down: every place in the same order, nobody lost, positions only fall', () => {
    const line = new WaitingLine({ trackChanges: true });
    line.grant(10, limits, 0);
    const n = 200;
    const dueAt = new Map<number, number>();
    for (let i = 1; i <= n; i++) {
      const a = waiting(line.enter(buyer(i), 1, limits, 0));
      expect(a.position).toBe(i - 1);
      dueAt.set(i, a.pollAfterMs);
    }
    // At 250 ms two turns have come (tokens at 100 and 200 ms). A repeat click reads each place.
    const before = new Map<number, number>();
    for (let i = 1; i <= n; i++) {
      const a = line.enter(buyer(i), 1, limits, 250);
      if (a.kind === 'waiting') before.set(i, a.position);
      else expect([i, a.kind]).toEqual([i <= 2 ? i : -1, 'turn']);
    }
    const rows = storeOf(line);
    expect(rows.size).toBe(n);

    // The shard is down from 300 ms to 4,300 ms and loads at 4,300 ms.
    const loadAt = 4_300;
    const restored = WaitingLine.restore(rows.values(), line.meta(), loadAt, { trackChanges: true });
    expect(restored.figuresAt(loadAt)).toMatchObject({ waiting: n - 2, turnsPending: 2, entered: n, dropped: 0 });
    for (const i of [1, 2]) expect(restored.enter(buyer(i), 1, limits, loadAt)).toMatchObject({ kind: 'turn' });
    const after: number[] = [];
    for (let i = 3; i <= n; i++) {
      const a = waiting(restored.enter(buyer(i), 1, limits, loadAt));
      expect(a.position).toBeLessThanOrEqual(before.get(i)!);
      after.push(a.position);
    }
    // The same order: positions 0, 1, 2, … by sequence number (no token accrued while down).
    expect(after).toEqual(after.map((_, k) => k));

    // Everyone polls as told until their turn (a poll due during the outage: at once). Nobody is
    // gone, turns come in line order. (The two turns were read by a click at the load: pollMinMs.)
    const next = new Map([...dueAt].map(([i, at]) => [i, i <= 2 ? loadAt + limits.pollMinMs : Math.max(loadAt, at)]));
    const turns: number[] = [];
    let now = loadAt;
    while (next.size > 0) {
      now = Math.min(...next.values());
      for (const [i, at] of [...next].sort((a, b) => a[0] - b[0])) {
        if (at !== now) continue;
        const a = restored.poll(i, buyer(i).userId, limits, now);
        expect([i, a.kind]).not.toEqual([i, 'gone']);
        expect([i, a.kind]).not.toEqual([i, 'too_soon']);
        if (a.kind === 'waiting') next.set(i, now + a.pollAfterMs);
        else {
          turns.push(i);
          next.delete(i);
          restored.finish(i, buyer(i).userId, { reservationId: `r-${i}` }, now);
        }
      }
    }
    expect(turns).toHaveLength(n);
    expect(restored.figuresAt(now)).toMatchObject({ admitted: n, dropped: 0, waiting: 0 });
  });

  it('the time the shard was down counts against nobody: a deadline restarts at the load', () => {
    const line = new WaitingLine({ trackChanges: true });
    line.grant(10, limits, 0);
    for (let i = 1; i < 50; i++) line.enter(buyer(i), 1, limits, 0);
    const told = waiting(line.enter(buyer(50), 1, limits, 0));
    const rows = storeOf(line);
    // Down for 60 s — far past 3 × pollAfterMs — then loaded.
    const loadAt = 60_000;
    // The poll it was told to make (due during the outage) is answered as soon as the shard is back.
    const restored = WaitingLine.restore(rows.values(), line.meta(), loadAt);
    expect(waiting(restored.poll(50, buyer(50).userId, limits, loadAt + 10)).seq).toBe(50);
    // A buyer who does not come back keeps the place until 2 × pollAfterMs after the load …
    const restored2 = WaitingLine.restore(rows.values(), line.meta(), loadAt);
    expect(restored2.poll(50, buyer(50).userId, limits, loadAt + 2 * told.pollAfterMs).kind).not.toBe('gone');
    // … and is dropped after that, with the reason.
    const restored3 = WaitingLine.restore(rows.values(), line.meta(), loadAt);
    expect(restored3.poll(50, buyer(50).userId, limits, loadAt + 2 * told.pollAfterMs + SWEEP_EVERY_MS + 1)).toEqual({
      kind: 'gone',
      reason: { why: 'expired', limitMs: 3 * told.pollAfterMs },
    });
  });

  it('outcomes, reasons, counters and the kept claims survive a load; ids go on from the last', () => {
    const line = new WaitingLine({ trackChanges: true });
    line.grant(10, limits, 0);
    const gold = { ...buyer(1), claims: { tier: 'gold' } };
    line.enter(gold, 1, limits, 0);
    for (const i of [2, 3]) line.enter(buyer(i), 1, limits, 0);
    expect(line.poll(1, gold.userId, limits, 300)).toMatchObject({ kind: 'turn', purchase: gold });
    line.finish(1, gold.userId, { reservationId: 'r-1' }, 300);
    expect(line.poll(2, buyer(2).userId, limits, 300).kind).toBe('turn');
    line.finish(2, buyer(2).userId, { error: 'limit_exceeded' }, 300);
    // Buyer 3 never polls: dropped (its deadline was 3 × 250 ms after joining).
    expect(line.poll(3, buyer(3).userId, limits, 1_100)).toEqual({
      kind: 'gone',
      reason: { why: 'expired', limitMs: 750 },
    });
    const rows = storeOf(line);
    const restored = WaitingLine.restore(rows.values(), line.meta(), 5_000, { trackChanges: true });
    expect(restored.poll(1, gold.userId, limits, 5_000)).toMatchObject({
      kind: 'done',
      outcome: { reservationId: 'r-1' },
    });
    expect(restored.poll(2, buyer(2).userId, limits, 5_000)).toMatchObject({ outcome: { error: 'limit_exceeded' } });
    expect(restored.poll(3, buyer(3).userId, limits, 5_000)).toMatchObject({ reason: { why: 'expired' } });
    expect(restored.poll(3, '999', limits, 5_000)).toEqual({ kind: 'gone', reason: { why: 'unknown' } });
    expect(restored.figuresAt(5_000)).toMatchObject({ entered: 3, admitted: 3, dropped: 1 });
    // A repeat click of the holder answers its reservation; a new buyer gets the next sequence number.
    expect(restored.enter(gold, 1, limits, 5_000)).toMatchObject({ kind: 'done', seq: 1 });
    expect(restored.enter(buyer(4), 1, limits, 5_000)).toMatchObject({ kind: 'waiting', seq: 4 });

    // A kept purchase's claims go with it through storage to its turn.
    const l2 = new WaitingLine({ trackChanges: true });
    l2.grant(10, limits, 0);
    l2.enter(gold, 1, limits, 0);
    const again = WaitingLine.restore(storeOf(l2).values(), l2.meta(), 1_000);
    expect(again.poll(1, gold.userId, limits, 1_100)).toMatchObject({ kind: 'turn', purchase: gold });
  });

  it('a poll writes its row only when it lengthens the interval; a turn and an outcome always do', () => {
    const line = lineTracked(30);
    const told = waiting(line.enter(buyer(30), 1, limits, 0));
    line.takeChanges();
    // Buyer 30 polls when told: its interval shrinks as the turn nears, so its row is not to be
    // written; only entries whose state changed meanwhile are (turns given, ghosts dropped).
    const t = told.pollAfterMs;
    expect(waiting(line.poll(30, buyer(30).userId, limits, t)).pollAfterMs).toBeLessThan(t);
    const changed = line.takeChanges();
    expect(changed).not.toContain(30);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.map((s) => line.entryRow(s)?.state).filter((st) => st === 'waiting')).toEqual([]);
    // A turn answered writes nothing (its row was written when the turn came); its outcome does.
    const turn = changed.find((s) => line.entryRow(s)?.state === 'admitted')!;
    const holder = line.entryRow(turn)!.userId;
    expect(line.poll(turn, holder, limits, t).kind).toBe('turn');
    expect(line.takeChanges()).toEqual([]);
    line.finish(turn, holder, { reservationId: 'r' }, t);
    expect(line.takeChanges()).toEqual([turn]);
  });

  it('a line without trackChanges notes nothing; forgotten entries are deleted from storage', () => {
    const plain = new WaitingLine();
    plain.grant(10, limits, 0);
    plain.enter(buyer(1), 1, limits, 0);
    expect(plain.takeChanges()).toEqual([]);

    const line = lineTracked(2);
    const rows = storeOf(line);
    line.close('sold_out', limits, 100);
    storeOf(line, rows);
    expect([...rows.values()].map((r) => r.state)).toEqual(['done', 'done']);
    // After OUTCOME_KEPT_MS the outcomes are forgotten, and their rows deleted.
    line.poll(1, buyer(1).userId, limits, 100 + OUTCOME_KEPT_MS + SWEEP_EVERY_MS);
    storeOf(line, rows);
    expect(rows.size).toBe(0);
  });
});

function lineTracked(n: number): WaitingLine {
  const line = new WaitingLine({ trackChanges: true });
  line.grant(10, limits, 0);
  for (let i = 1; i <= n; i++) line.enter(buyer(i), 1, limits, 0);
  return line;
}
