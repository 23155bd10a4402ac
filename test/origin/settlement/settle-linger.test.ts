/**
 * SETTLE_LINGER_MS: a trickle of reservations (a sale's quiet stretch, or every sale at the edge's
 * admission rate) is settled a few dozen per transaction, not one each — and every one of them
 * still becomes exactly one order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { scalar } from '../../helpers/db.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin | null = null;
afterEach(async () => {
  await t?.stop();
  t = null;
});

const RESERVATIONS = 30;
const GAP_MS = 20;

/**
 * Reserves one unit for each of RESERVATIONS users, GAP_MS apart; returns the batches settlement
 * ran and how long the trickle lasted, first call sent to last answer. `scheduled`: each call is
 * sent on its own schedule, not after the previous answer, so a slow machine does not stretch the
 * trickle; otherwise each waits for the answer before it (a slow machine only spreads them further).
 */
async function trickle(
  env: Record<string, string>,
  scheduled: boolean,
  gapMs = GAP_MS,
): Promise<{ batches: number; trickleMs: number }> {
  t = await startTestOrigin({ SETTLE_WORKERS: '1', ...env });
  const origin = t;
  const { activityId } = await origin.sale({ stock: 100 });
  const reserve = async (i: number) => {
    const res = await origin.internal('POST', '/internal/reserve', {
      activityId,
      userId: String(7000 + i),
      quantity: 1,
      requestId: `linger${i}`,
    });
    return res.status === 202 ? '202' : `${res.status} ${await res.text()}`;
  };
  const orders = () => scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]);
  // A first reservation, settled: the sale's settler is running (discovery can take a moment on a
  // busy machine) before the trickle starts, so the trickle is what the batches are counted on.
  expect(await reserve(-1)).toBe('202');
  await waitFor(orders, (n) => n === 1, 10_000);
  const batchesBefore = await batches(origin);
  const started = performance.now();
  const statuses: string[] = [];
  if (scheduled) {
    statuses.push(
      ...(await Promise.all(
        Array.from({ length: RESERVATIONS }, async (_, i) => {
          await new Promise((r) => setTimeout(r, i * gapMs));
          return reserve(i);
        }),
      )),
    );
  } else {
    for (let i = 0; i < RESERVATIONS; i++) {
      statuses.push(await reserve(i));
      await new Promise((r) => setTimeout(r, gapMs));
    }
  }
  const trickleMs = performance.now() - started;
  expect(statuses).toEqual(statuses.map(() => '202'));
  await waitFor(orders, (n) => n === 1 + RESERVATIONS, 10_000);
  expect(await scalar(origin.db.pool, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(
    100 - 1 - RESERVATIONS,
  );
  expect(
    await scalar(origin.db.pool, 'SELECT COUNT(DISTINCT user_id) FROM seckill_order WHERE activity_id = ?', [
      activityId,
    ]),
  ).toBe(1 + RESERVATIONS);
  return { batches: (await batches(origin)) - batchesBefore, trickleMs };
}

/** Settlement transactions run so far (one observation of the settle histogram per batch). */
async function batches(origin: TestOrigin): Promise<number> {
  const { values } = await origin.origin.parts.metrics.settleLatency.get();
  return values.find((v) => v.metricName === 'seckill_settle_tx_duration_seconds_count')?.value ?? 0;
}

describe('settlement linger (SETTLE_LINGER_MS)', () => {
  it('settles a trickle in a few transactions, every reservation one order', async () => {
    // 30 reservations sent 100 ms apart, so over ≥ 2.9 s, longer than the 1 s linger: a read right
    // away, then at most one per linger (and one for the tail) — 4 or 5 on a quiet machine, fewer
    // than half the reservations unless the trickle stretches past 12 s; without the linger, about
    // one per reservation.
    const lingerMs = 1_000;
    const { batches: withLinger, trickleMs } = await trickle({ SETTLE_LINGER_MS: String(lingerMs) }, true, 100);
    expect(withLinger).toBeGreaterThanOrEqual(2);
    expect(withLinger).toBeLessThanOrEqual(Math.ceil(trickleMs / lingerMs) + 2);
    expect(withLinger).toBeLessThan(RESERVATIONS / 2);
  });

  it('with SETTLE_LINGER_MS=0 reads again at once (more, smaller transactions)', async () => {
    const { batches: without } = await trickle({ SETTLE_LINGER_MS: '0' }, false);
    expect(without).toBeGreaterThan(6);
  });
});
