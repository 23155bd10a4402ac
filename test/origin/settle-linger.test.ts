/**
 * SETTLE_LINGER_MS: a trickle of reservations (a sale's quiet stretch, or every sale at the edge's
 * admission rate) is settled a few dozen per transaction, not one each — and every one of them
 * still becomes exactly one order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { scalar } from '../helpers/db.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../helpers/origin.js';

let t: TestOrigin | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

const RESERVATIONS = 30;
const GAP_MS = 20;

/**
 * Reserves one unit for each of RESERVATIONS users, GAP_MS apart; returns the batches settlement
 * ran and how long the trickle lasted (longer on a loaded machine: each reserve is an HTTP call).
 */
async function trickle(env: Record<string, string>): Promise<{ batches: number; trickleMs: number }> {
  t = await startTestOrigin({ SETTLE_WORKERS: '1', ...env });
  const origin = t;
  const { activityId } = await origin.sale({ stock: 100 });
  const batchesBefore = await batches(origin);
  const started = performance.now();
  for (let i = 0; i < RESERVATIONS; i++) {
    const res = await origin.internal('POST', '/internal/reserve', {
      activityId,
      userId: String(7000 + i),
      quantity: 1,
      requestId: `linger${i}`,
    });
    expect(res.status).toBe(202);
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  const trickleMs = performance.now() - started;
  const orders = () => scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
  await waitFor(orders, (n) => n === RESERVATIONS, 10_000);
  expect(await scalar(origin.db.pool, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(
    100 - RESERVATIONS,
  );
  expect(
    await scalar(origin.db.pool, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ]),
  ).toBe(RESERVATIONS);
  return { batches: (await batches(origin)) - batchesBefore, trickleMs };
}

/** Settlement transactions run so far (one observation of the settle histogram per batch). */
async function batches(origin: TestOrigin): Promise<number> {
  const { values } = await origin.origin.parts.metrics.settleLatency.get();
  return values.find((v) => v.metricName === 'seckill_settle_tx_duration_seconds_count')?.value ?? 0;
}

describe('settlement linger (SETTLE_LINGER_MS)', () => {
  it('settles a trickle in a few transactions, every reservation one order', async () => {
    // 30 reservations over ≥ 600 ms: a read right away, then at most one per 300 ms linger (and
    // one for the tail) — 4 here on a quiet machine; without the linger, one per reservation.
    const { batches: withLinger, trickleMs } = await trickle({ SETTLE_LINGER_MS: '300' });
    expect(withLinger).toBeGreaterThanOrEqual(2);
    expect(withLinger).toBeLessThanOrEqual(Math.ceil(trickleMs / 300) + 2);
    expect(withLinger).toBeLessThan(RESERVATIONS / 2);
  });

  it('with SETTLE_LINGER_MS=0 reads again at once (more, smaller transactions)', async () => {
    const { batches: without } = await trickle({ SETTLE_LINGER_MS: '0' });
    expect(without).toBeGreaterThan(6);
  });
});
