// The settle decisions of a batch (origin/settlement/decide.ts), with no Redis and no MySQL: what
// MySQL holds is given as facts, as settle.ts reads them inside its transaction.
import { describe, expect, it } from 'vitest';
import { decideSettlement, type SaleFacts } from '../../../origin/settlement/decide.js';
import type { ReservationEvent } from '../../../origin/settlement/event.js';

const event = (reservationId: string, userId: string, quantity = 1): ReservationEvent => ({
  streamId: `1-${reservationId}`,
  reservationId,
  requestId: `req-${reservationId}`,
  userId,
  quantity,
  traceId: '',
  ts: 0,
});

const facts = (over: Partial<SaleFacts> = {}): SaleFacts => ({
  orderOf: new Map(),
  deadLettered: new Set(),
  left: Number.POSITIVE_INFINITY,
  ...over,
});

const ids = (events: ReservationEvent[]) => events.map((e) => e.reservationId);

describe('settle decisions', () => {
  it('new reservations of different users all win, in Stream order', () => {
    const d = decideSettlement([event('r1', 'u1'), event('r2', 'u2', 2)], facts());
    expect(ids(d.winners)).toEqual(['r1', 'r2']);
    expect(d.outcomes.size).toBe(0);
  });

  it('a reservation whose order exists is a duplicate delivery', () => {
    const d = decideSettlement([event('r1', 'u1')], facts({ orderOf: new Map([['u1', 'r1']]) }));
    expect(d.winners).toEqual([]);
    expect(d.outcomes.get('r1')).toBe('duplicate');
  });

  it('a dead-lettered reservation is left to its dead letter', () => {
    const d = decideSettlement([event('r1', 'u1')], facts({ deadLettered: new Set(['r1']) }));
    expect(d.winners).toEqual([]);
    expect(d.outcomes.get('r1')).toBe('dead_lettered');
  });

  it('a duplicate wins over a dead letter for the same reservation (the order exists)', () => {
    const d = decideSettlement(
      [event('r1', 'u1')],
      facts({ orderOf: new Map([['u1', 'r1']]), deadLettered: new Set(['r1']) }),
    );
    expect(d.outcomes.get('r1')).toBe('duplicate');
  });

  it("a user's second reservation is surplus, whether the first order is in MySQL or in this batch", () => {
    const inMySql = decideSettlement([event('r2', 'u1')], facts({ orderOf: new Map([['u1', 'r1']]) }));
    expect(inMySql.outcomes.get('r2')).toBe('surplus');
    const inBatch = decideSettlement([event('r1', 'u1'), event('r2', 'u1')], facts());
    expect(ids(inBatch.winners)).toEqual(['r1']);
    expect(inBatch.outcomes.get('r2')).toBe('surplus');
  });

  it('with the stock known, each reservation is checked against what is left in turn', () => {
    const d = decideSettlement([event('r1', 'u1', 2), event('r2', 'u2', 2), event('r3', 'u3', 1)], facts({ left: 3 }));
    expect(ids(d.winners)).toEqual(['r1', 'r3']);
    expect(d.outcomes.get('r2')).toBe('insufficient_stock');
  });

  it('nothing left: every new reservation is insufficient stock', () => {
    const d = decideSettlement([event('r1', 'u1'), event('r2', 'u2')], facts({ left: 0 }));
    expect(d.winners).toEqual([]);
    expect([...d.outcomes.values()]).toEqual(['insufficient_stock', 'insufficient_stock']);
  });

  it('the same Stream entry twice in one batch is written once', () => {
    const d = decideSettlement([event('r1', 'u1'), event('r1', 'u1')], facts());
    expect(ids(d.winners)).toEqual(['r1']);
    expect(d.outcomes.has('r1')).toBe(false);
  });

  it('leaves the facts it was given unchanged', () => {
    const orderOf = new Map([['u9', 'r9']]);
    decideSettlement([event('r1', 'u1')], facts({ orderOf }));
    expect([...orderOf]).toEqual([['u9', 'r9']]);
  });
});
