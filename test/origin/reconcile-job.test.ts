/** The periodic reconciliation alarms on a mismatch that persists, not on figures read mid-change. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ReconcileJob } from '../../origin/lifecycle/reconcile-job.js';
import { startTestOrigin, type TestOrigin } from '../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ RECONCILE_CONFIRM_RUNS: '3', RECONCILE_CONFIRM_DELAY_MS: '300' });
});
afterAll(async () => {
  await t.stop();
});

const DB_CHECK = 'db.initial_equals_available_plus_deducted_minus_refilled';

it('a unit removed behind the system’s back is confirmed on every re-read and alarmed', async () => {
  const { activityId } = await t.sale({ stock: 10 });
  await t.db.pool.query('UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ?', [activityId]);
  const rec = await new ReconcileJob(t.origin.ctx).confirmed(activityId);
  expect(rec.ok).toBe(false);
  expect(rec.checks.find((c) => c.name === DB_CHECK)).toMatchObject({ ok: false, expected: 10, actual: 9 });
});

it('a difference that is gone on the next read does not alarm', async () => {
  const { activityId } = await t.sale({ stock: 10 });
  await t.db.pool.query('UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ?', [activityId]);
  const job = new ReconcileJob(t.origin.ctx);
  const confirmed = job.confirmed(activityId);
  // Repaired before the first re-read (300 ms later): what was seen was a moment, not a state.
  await new Promise((r) => setTimeout(r, 100));
  await t.db.pool.query('UPDATE seckill_stock SET available = available + 1 WHERE activity_id = ?', [activityId]);
  const rec = await confirmed;
  expect(rec.ok).toBe(true);
  expect(rec.checks.every((c) => c.ok)).toBe(true);
});
