/**
 * The reservation event read from a Stream entry (origin/redis/reservation-event.ts): fields in the
 * order lua/includes/reservation-event.lua writes them are read by position, any other order by
 * name, with the same result.
 */
import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../../origin/redis/reservation-event.js';

const luaOrder = [
  'reservationId',
  '7-0190f3a1b2c3d4e5f6',
  'requestId',
  'r1',
  'userId',
  '1001',
  'quantity',
  '2',
  'traceId',
  '',
  'ts',
  '1733000000000',
];
const expected = {
  streamId: '1-0',
  reservationId: '7-0190f3a1b2c3d4e5f6',
  requestId: 'r1',
  userId: '1001',
  quantity: 2,
  traceId: '',
  ts: 1733000000000,
};

/** The same fields, pairs in reverse order. */
const reversed = (flat: string[]) =>
  Array.from({ length: flat.length / 2 }, (_, i) => flat.slice(2 * i, 2 * i + 2))
    .reverse()
    .flat();

describe('parseEvent', () => {
  it('reads the Lua field order and any other order alike', () => {
    expect(parseEvent('1-0', luaOrder)).toEqual(expected);
    expect(parseEvent('1-0', reversed(luaOrder))).toEqual(expected);
    // An older entry without the trailing fields: by name, defaults for the rest.
    expect(parseEvent('1-0', luaOrder.slice(0, 8))).toEqual({ ...expected, traceId: '', ts: 0 });
  });

  it('refuses an entry that is not a reservation event, in either order', () => {
    const badUser = luaOrder.map((v, i) => (i === 5 ? 'x' : v));
    expect(parseEvent('1-0', badUser)).toBeNull();
    expect(parseEvent('1-0', reversed(badUser))).toBeNull();
    const zero = luaOrder.map((v, i) => (i === 7 ? '0' : v));
    expect(parseEvent('1-0', zero)).toBeNull();
  });
});
