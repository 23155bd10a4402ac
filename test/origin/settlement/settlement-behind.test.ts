/**
 * When settlement counts as behind — the signal the order-event worker yields to
 * (ORDER_EVENTS_YIELD_MS, docs/order-events.md): only while the consumers' reads fill whole
 * batches (a backlog, as in a sale's storm). A steady trickle of orders is read a few at a time and
 * never holds the events back.
 */
import { afterEach, expect, it } from 'vitest';
import { scalar } from '../../helpers/db.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

const BATCH = 5;

it('a trickle never counts as behind; a burst larger than a batch does, until it is settled', async () => {
  t = await startTestOrigin({ SETTLE_WORKERS: '1', SETTLE_BATCH_SIZE: String(BATCH), SETTLE_LINGER_MS: '0' });
  const origin = t;
  const settlement = origin.origin.settlement!;
  const { activityId } = await origin.sale({ stock: 400 });
  const orders = () => scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
  const reserve = async (i: number) => {
    const res = await origin.internal('POST', '/internal/reserve', {
      activityId,
      userId: String(7100 + i),
      quantity: 1,
      requestId: `behind${i}`,
    });
    expect(res.status).toBe(202);
  };
  // Sampled every few milliseconds while each phase runs.
  const sampling = () => {
    const seen: boolean[] = [];
    const timer = setInterval(() => seen.push(settlement.behindWithin(100)), 3);
    return { seen, stop: () => clearInterval(timer) };
  };

  // A trickle: one reservation at a time, each settled before the next (reads of one, never a batch).
  const trickle = sampling();
  for (let i = 0; i < 12; i++) {
    await reserve(i);
    await waitFor(orders, (n) => n === i + 1, 10_000);
  }
  trickle.stop();
  expect(trickle.seen.length).toBeGreaterThan(0);
  expect(trickle.seen.filter(Boolean)).toHaveLength(0);

  // A burst of 300 at once against batches of 5: reads fill whole batches while it is settled.
  const burst = sampling();
  await Promise.all(Array.from({ length: 300 }, (_, i) => reserve(100 + i)));
  await waitFor(orders, (n) => n === 312, 30_000);
  burst.stop();
  expect(burst.seen.filter(Boolean).length).toBeGreaterThan(0);
  // Settled: no longer behind once the window has passed.
  await new Promise((r) => setTimeout(r, 150));
  expect(settlement.behindWithin(100)).toBe(false);
}, 60_000);
