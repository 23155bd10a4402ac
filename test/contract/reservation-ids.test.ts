/** Reservation ids and order numbers (contract/ids.ts, origin/settlement/settle.ts): shape, order, determinism. */
import { describe, expect, it } from 'vitest';
import { activityOfReservation, isReservationId, newReservationId } from '../../contract/ids.js';
import { orderNoFor } from '../../origin/settlement/settle.js';

describe('newReservationId', () => {
  it('keeps the contract shape and names its activity', () => {
    const id = newReservationId('7001');
    expect(id).toMatch(/^7001-[0-9a-f]{32}$/);
    expect(isReservationId(id)).toBe(true);
    expect(activityOfReservation(id)).toBe('7001');
  });

  it('starts with the time in ms, so ids issued later sort later', () => {
    const t = Date.UTC(2026, 10, 30, 12, 0, 0);
    const earlier = newReservationId('1', t);
    const later = newReservationId('1', t + 1);
    expect(earlier.slice(2, 14)).toBe(t.toString(16).padStart(12, '0'));
    expect(earlier < later).toBe(true);
    const ids = Array.from({ length: 200 }, (_, i) => newReservationId('1', t + i * 37));
    expect([...ids].sort()).toEqual(ids);
  });

  it('is random after the time: 1,000 ids in one ms are all different', () => {
    const t = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => newReservationId('1', t)));
    expect(ids.size).toBe(1000);
  });
});

describe('orderNoFor', () => {
  it('is 24 upper-case hex digits, the same for the same reservation, different for another', () => {
    const id = newReservationId('1');
    expect(orderNoFor(id)).toMatch(/^[0-9A-F]{24}$/);
    expect(orderNoFor(id)).toBe(orderNoFor(id));
    expect(orderNoFor(newReservationId('1'))).not.toBe(orderNoFor(id));
  });

  it('is the same number for a reservation as before (time digits, then SHA-256 of the id): a replay after an upgrade mints none', () => {
    // Computed with createHash('sha256').update(id).digest('hex'), as order numbers were first made.
    expect(orderNoFor('42-0190f3a1b2c3d4e5f60718293a4b5c6d')).toBe('0190F3A1B2C3E1D441964786');
  });

  it('sorts with its reservation time', () => {
    const t = Date.now();
    const a = orderNoFor(newReservationId('1', t));
    const b = orderNoFor(newReservationId('1', t + 1));
    expect(a < b).toBe(true);
  });
});
