/**
 * The shadow rehearsal's production guard (docs/rehearsal.md "The guard"): real buyers buy a real
 * sale on the stack while a shadow ramp runs; once the ramp is under way the real sale degrades —
 * an edge with a stale EDGE_ORIGIN_SECRET sends the real buyers' reserve calls, which the origin
 * cannot trust (401, undecided answers) — and the guard, watching the real series only, stops the
 * rehearsal before its last step (against a given baseline of 100 %), says why in the report, skips the drill, and still cleans the
 * shadow sale up. The real sale's orders are exactly what its buyers were granted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exitCode, runRehearsal } from '../../bench/rehearsal.js';
import { signEdgeRequest } from '../../contract/signing.js';
import { buy } from '../helpers/buyers.js';
import { scalar } from '../helpers/db.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor } from '../helpers/origin.js';
import { rehearsalAgainst, untilLine } from '../helpers/shadow-rehearsal.js';
import { startPersistentRedis, type PersistentRedis } from '../helpers/redis-server.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
// A Redis of its own: the guard watches every real sale's Stream lag, and the shared Redis holds
// other test files' sales.
let redisServer: PersistentRedis;
beforeAll(async () => {
  redisServer = await startPersistentRedis('everysec');
  stack = await startTestStack({ originEnv: { REDIS_URL: redisServer.url } });
});
afterAll(async () => {
  await stack?.stop();
  await redisServer?.stop();
});

/** A reserve call as an edge with the wrong secret makes it: the origin answers 401 and counts it undecided. */
async function staleEdgeReserve(activityId: string, userId: string) {
  const body = JSON.stringify({ activityId, userId, quantity: 1, requestId: `stale-${userId}` });
  const signed = await signEdgeRequest('a-stale-edge-origin-secret-000000', {
    method: 'POST',
    pathWithQuery: '/internal/reserve',
    body,
  });
  const res = await fetch(`${stack.origin.url}/internal/reserve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signed },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

it('the real sale degrades during the ramp: the guard stops the rehearsal, says why, and the shadow sale is still cleaned up', async () => {
  const db = stack.origin.db.pool;
  const { activityId: real } = await stack.origin.sale({ stock: 1000 });
  const shadow = uniqueId();
  const o = rehearsalAgainst(stack, [
    ...['--activity', shadow, '--stock', '5000'],
    ...['--planned-peak', '20', '--steps', '5', '--step-seconds', '4'],
    // The baseline given, not measured over a timed window: how many real answers a window holds
    // depends on the machine's speed (the measured baseline is bench/rehearsal/guard.ts's unit test's).
    ...['--guard-baseline-rate', '1', '--guard-window', '5', '--guard-every', '250', '--guard-min-answers', '5'],
    ...['--guard-p99-ms', '600000', '--settle-timeout', '60', '--no-drill'],
  ]);

  // Real buyers from before the ramp on, one at a time until told to stop.
  let buying = true;
  const granted: string[] = [];
  const realBuyers = (async () => {
    for (let i = 0; buying && i < 500; i++) {
      const r = await buy(stack.edge.url, real, String(8_400_000 + i), false);
      if (r.status === 202) granted.push(r.body.reservationId as string);
    }
  })();
  const { say, seen, lines } = untilLine(/^step 2\/5:/);
  const rehearsal = runRehearsal(o, 'shadow guard test', { say });
  await Promise.race([seen, rehearsal]);
  expect(
    lines.some((l) => l.startsWith('step 2/5:')),
    lines.join('\n'),
  ).toBe(true);

  // The real sale degrades: its reserve calls come from an edge the origin cannot trust.
  let degrading = true;
  let refused = 0;
  const staleEdge = (async () => {
    for (let i = 0; degrading && i < 2_000; i++) {
      if ((await staleEdgeReserve(real, String(8_500_000 + i))) === 401) refused++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const report = await rehearsal;
  degrading = false;
  buying = false;
  await Promise.all([staleEdge, realBuyers]);
  expect(refused).toBeGreaterThan(0);

  const run = report.shadowRun!;
  expect(run.guard.baseline).toEqual({ rate: 1, source: 'option', answers: 0 });
  expect(run.guard.stoppedEarly, lines.join('\n')).toBe(true);
  expect(run.guard.reason).toMatch(/^real order success rate .* is below 0\.9 × the baseline/);
  expect(lines.some((l) => l.startsWith('guard: real order success rate'))).toBe(true);
  expect(run.ramp.steps.length).toBeLessThan(5);
  expect(run.drill).toBeNull();
  expect(exitCode(report)).toBe(3);

  // Stopped early, still cleaned up: no shadow row or key left; the real sale's orders are its buyers'.
  expect(run.cleanup).toMatchObject({ cleaned: true, done: true });
  for (const table of ['shadow_seckill_order', 'shadow_seckill_stock_log', 'seckill_dead_letter'])
    expect(await scalar(db, `SELECT COUNT(*) FROM ${table} WHERE activity_id = ?`, [shadow])).toBe(0);
  expect(await stack.origin.redis.keys(`sk:{${shadow}:*`)).toEqual([]);
  await waitFor(
    () => scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [real]),
    (n) => n === granted.length,
    20_000,
  );
  const [orders] = (await db.query('SELECT reservation_id FROM seckill_order WHERE activity_id = ?', [real])) as any;
  expect(new Set(orders.map((x: any) => x.reservation_id))).toEqual(new Set(granted));
  expect(await scalar(db, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [shadow])).toBe(0);
});
