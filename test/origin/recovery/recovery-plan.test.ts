// What a recovery rebuilds (origin/recovery/recovery-plan.ts), with no Redis and no MySQL: the
// surviving Stream and MySQL's snapshot are given as facts, as recover.ts reads them.
import { describe, expect, it } from 'vitest';
import { computeRecovery, type LedgerEvent, type RecoveryFacts } from '../../../origin/recovery/recovery-plan.js';

const ev = (reservationId: string, userId: string, quantity = 1): LedgerEvent => ({
  reservationId,
  requestId: `req-${reservationId}`,
  userId,
  quantity,
  traceId: '',
  ts: 0,
});
const inStream = (open: boolean, ...events: LedgerEvent[]) =>
  events.map((e) => [e.reservationId, { event: { ...e, streamId: `1-${e.reservationId}` }, open }] as const);

const facts = (over: Partial<RecoveryFacts> = {}): RecoveryFacts => ({
  available: 10,
  orders: [],
  deadLetters: [],
  outbox: [],
  stream: new Map(),
  appliedReleases: new Map(),
  ...over,
});

const rebuild = (f: RecoveryFacts) => {
  const plan = computeRecovery(f);
  if (plan.kind !== 'rebuild') throw new Error(`refused: ${plan.reason}`);
  return plan;
};
const ids = (events: LedgerEvent[]) => events.map((e) => e.reservationId);

describe('computeRecovery', () => {
  it('a settled reservation: its units are already out of available; its user stays the holder', () => {
    const p = rebuild(
      facts({ available: 9, orders: [ev('r1', 'u1')], stream: new Map(inStream(false, ev('r1', 'u1'))) }),
    );
    expect(p).toMatchObject({ stock: 9, unsettled: 0, restore: [] });
    expect([...p.holders]).toEqual([['u1', 'r1']]);
    expect(p.released.size).toBe(0);
  });

  it('pending or undelivered entries without an order are owed their units; their users are holders', () => {
    const p = rebuild(facts({ stream: new Map(inStream(true, ev('r1', 'u1'), ev('r2', 'u2', 3))) }));
    expect(p).toMatchObject({ stock: 10 - 4, unsettled: 2 });
    expect([...p.holders]).toEqual([
      ['u1', 'r1'],
      ['u2', 'r2'],
    ]);
  });

  it('an acked entry with no order and no dead letter was surplus: released in full, no holder', () => {
    const p = rebuild(facts({ stream: new Map(inStream(false, ev('r1', 'u1', 2))) }));
    expect(p).toMatchObject({ stock: 10, unsettled: 0 });
    expect([...p.released]).toEqual([['r1', { units: 2, userId: 'u1' }]]);
    expect(p.holders.size).toBe(0);
  });

  it('an order whose entry the Stream lost is appended again; its user is the holder', () => {
    const p = rebuild(facts({ available: 9, orders: [ev('r1', 'u1')] }));
    expect(ids(p.restore)).toEqual(['r1']);
    expect([...p.holders]).toEqual([['u1', 'r1']]);
    expect(p.stock).toBe(9);
  });

  it("a dead letter's release is MySQL's restocked, whether its entry was acked, is open again, or was lost", () => {
    const acked = ev('r1', 'u1', 2);
    const ackLost = ev('r2', 'u2', 2);
    const lost = ev('r3', 'u3', 2);
    const p = rebuild(
      facts({
        deadLetters: [
          { event: acked, restocked: 2, status: 'open' },
          { event: ackLost, restocked: 1, status: 'given_up' },
          { event: lost, restocked: 0, status: 'open' },
        ],
        stream: new Map([...inStream(false, acked), ...inStream(true, ackLost)]),
      }),
    );
    expect([...p.released]).toEqual([
      ['r1', { units: 2, userId: 'u1' }],
      ['r2', { units: 1, userId: 'u2' }],
      ['r3', { units: 0, userId: 'u3' }],
    ]);
    // Only the lost one is appended; the open one is not owed (the dead letter owns it); nobody holds.
    expect(ids(p.restore)).toEqual(['r3']);
    expect(p.unsettled).toBe(0);
    expect(p.holders.size).toBe(0);
    // The units compensation did not give back stay out of the stock: (2 − 1) + (2 − 0).
    expect(p.stock).toBe(10 - 3);
  });

  it('a requeued dead letter whose requeue was lost is owed again: entry appended, user holds it', () => {
    const e = ev('r1', 'u1');
    for (const stream of [new Map(), new Map(inStream(false, e))]) {
      const p = rebuild(facts({ deadLetters: [{ event: e, restocked: 1, status: 'retried' }], stream }));
      expect(ids(p.restore)).toEqual(['r1']);
      expect(p).toMatchObject({ stock: 9, unsettled: 1 });
      expect([...p.holders]).toEqual([['u1', 'r1']]);
      expect(p.released.size).toBe(0);
    }
  });

  it('a requeued dead letter that is settled, still open, or surplus (its user has another order) is left as it is', () => {
    const e = ev('r1', 'u1');
    const settled = rebuild(
      facts({
        available: 9,
        orders: [e],
        deadLetters: [{ event: e, restocked: 1, status: 'retried' }],
        stream: new Map(inStream(false, e)),
      }),
    );
    expect(settled).toMatchObject({ stock: 9, unsettled: 0, restore: [] });
    const open = rebuild(
      facts({ deadLetters: [{ event: e, restocked: 1, status: 'retried' }], stream: new Map(inStream(true, e)) }),
    );
    expect(open).toMatchObject({ stock: 9, unsettled: 1, restore: [] });
    const other = ev('r2', 'u1');
    const surplus = rebuild(
      facts({
        available: 9,
        orders: [other],
        deadLetters: [{ event: e, restocked: 1, status: 'retried' }],
        stream: new Map(inStream(false, e, other)),
      }),
    );
    expect(surplus).toMatchObject({ stock: 9, unsettled: 0, restore: [] });
    expect([...surplus.released]).toEqual([['r1', { units: 1, userId: 'u1' }]]);
    expect([...surplus.holders]).toEqual([['u1', 'r2']]);
  });

  it('refills: pending outbox rows are out of the stock (the worker applies them), done ones are recorded', () => {
    const p = rebuild(
      facts({
        outbox: [
          { reservationId: 'r1', quantity: 2, pending: true },
          { reservationId: 'r2', quantity: 3, pending: false },
        ],
      }),
    );
    expect(p).toMatchObject({ stock: 8, pendingRefills: 1 });
    expect([...p.refilled]).toEqual([['r2', 3]]);
  });

  it('tranches: the releases MySQL applied are recorded (they are in available, so in the stock)', () => {
    const p = rebuild(facts({ appliedReleases: new Map([['release:4', 6]]) }));
    expect(p).toMatchObject({ stock: 10 });
    expect([...p.tranches]).toEqual([['release:4', 6]]);
  });

  it('refuses when MySQL owes more than it has', () => {
    const plan = computeRecovery(
      facts({ available: 1, stream: new Map(inStream(true, ev('r1', 'u1'), ev('r2', 'u2'))) }),
    );
    expect(plan).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/has 1 units but owes 2/) });
  });
});
