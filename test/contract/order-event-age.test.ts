/** A receiver's check of an order event refuses an old delivery by default: a replay, not a retry. */
import { describe, expect, it } from 'vitest';
import { ORDER_EVENT_MAX_AGE_MS, orderEventSignedString, verifyOrderEvent } from '../../contract/order-events.js';
import { hmacHex } from '../../contract/signing.js';

const SECRET = 'order-events-secret-for-the-age-test';
const body = JSON.stringify({ id: 'A:order.created', type: 'order.created' });

async function delivery(signedAt: number) {
  // Signed as the origin's outbox signs a delivery (origin/orders/order-event-worker.ts).
  const timestamp = String(signedAt);
  return { body, timestamp, signature: `v1=${await hmacHex(SECRET, orderEventSignedString(timestamp, body))}` };
}

describe('verifyOrderEvent', () => {
  const now = Date.parse('2026-12-03T12:00:00Z');

  it('accepts a delivery signed just now', async () => {
    expect(await verifyOrderEvent(SECRET, await delivery(now - 1_000), { now })).toBe(true);
  });

  it('refuses an event signed 30 days ago without being told any maximum age', async () => {
    expect(await verifyOrderEvent(SECRET, await delivery(now - 30 * 86_400_000), { now })).toBe(false);
  });

  it('refuses just past the default age, in the past and in the future, and accepts at it', async () => {
    expect(await verifyOrderEvent(SECRET, await delivery(now - ORDER_EVENT_MAX_AGE_MS), { now })).toBe(true);
    expect(await verifyOrderEvent(SECRET, await delivery(now - ORDER_EVENT_MAX_AGE_MS - 1), { now })).toBe(false);
    expect(await verifyOrderEvent(SECRET, await delivery(now + ORDER_EVENT_MAX_AGE_MS + 1), { now })).toBe(false);
  });

  it('a caller may widen the age; the signature is still checked', async () => {
    const old = await delivery(now - 86_400_000);
    expect(await verifyOrderEvent(SECRET, old, { now, maxAgeMs: 2 * 86_400_000 })).toBe(true);
    expect(await verifyOrderEvent('another-secret', old, { now, maxAgeMs: 2 * 86_400_000 })).toBe(false);
  });
});
