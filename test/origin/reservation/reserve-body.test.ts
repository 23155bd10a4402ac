/**
 * The reserve chain's parse step accepts the edge's usual reserve body by hand and leaves everything else to the
 * contract's schema (origin/reservation/reserve-body.ts): for every body, the result — the parsed
 * request with its fields in the schema's order, or the schema's own error — is the schema's.
 */
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { reserveRequestSchema } from '../../../contract/reservation.js';
import { reserveRequestOf } from '../../../origin/reservation/reserve-body.js';

const ok = { activityId: '1', userId: '42', quantity: 1, requestId: 'r' };
const bodies: [string, unknown][] = [
  ['the edge body', ok],
  ['with a trace id', { ...ok, traceId: '0af7651916cd43dd8448eb211c80319c' }],
  [
    'fields in another order, unknown ones stripped',
    { extra: 1, requestId: 'r.1:x-Y_', quantity: 100, userId: '18446744073709551615', activityId: '9' },
  ],
  ['with claims', { ...ok, claims: { tier: 'gold', groups: ['a', 'b'] } }],
  ['with empty claims', { ...ok, claims: {} }],
  ['claims with a bad name', { ...ok, claims: { 'bad name': 'x' } }],
  ['claims with a number', { ...ok, claims: { tier: 1 } }],
  ['claims as an array', { ...ok, claims: ['x'] }],
  ['claims null', { ...ok, claims: null }],
  ['missing activityId', { userId: '42', quantity: 1, requestId: 'r' }],
  ['missing userId', { activityId: '1', quantity: 1, requestId: 'r' }],
  ['missing quantity', { activityId: '1', userId: '42', requestId: 'r' }],
  ['missing requestId', { activityId: '1', userId: '42', quantity: 1 }],
  ['activityId 0', { ...ok, activityId: '0' }],
  ['activityId negative', { ...ok, activityId: '-1' }],
  ['activityId not decimal', { ...ok, activityId: 'abc' }],
  ['activityId as number', { ...ok, activityId: 1 }],
  ['userId above 2^64-1', { ...ok, userId: '18446744073709551616' }],
  ['userId with leading zero', { ...ok, userId: '042' }],
  ['quantity 0', { ...ok, quantity: 0 }],
  ['quantity negative', { ...ok, quantity: -1 }],
  ['quantity fractional', { ...ok, quantity: 1.5 }],
  ['quantity as string', { ...ok, quantity: '1' }],
  ['quantity huge', { ...ok, quantity: 1e20 }],
  ['quantity 101', { ...ok, quantity: 101 }],
  ['requestId too long', { ...ok, requestId: 'x'.repeat(65) }],
  ['requestId with spaces', { ...ok, requestId: 'a b' }],
  ['traceId malformed', { ...ok, traceId: 'xyz' }],
  ['traceId all zeros', { ...ok, traceId: '0'.repeat(32) }],
  ['traceId null', { ...ok, traceId: null }],
  ['array body', [1, 2]],
  ['null body', null],
  ['a string', 'reserve'],
];

function outcome(parse: () => unknown): string {
  try {
    return `ok ${JSON.stringify(parse())}`;
  } catch (err) {
    expect(err).toBeInstanceOf(ZodError);
    return `error ${JSON.stringify((err as ZodError).issues)}`;
  }
}

describe('reserveRequestOf', () => {
  it.each(bodies)('%s: the same result as the schema', (_, body) => {
    const json = JSON.parse(JSON.stringify(body));
    expect(outcome(() => reserveRequestOf(json))).toBe(outcome(() => reserveRequestSchema.parse(json)));
  });
});
