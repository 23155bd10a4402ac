/**
 * A shadow rehearsal (`npm run rehearsal -- --edge-url … --origin-url … --shadow --planned-peak R`,
 * docs/rehearsal.md) on one real stack — the edge in workerd, the origin on Redis and MariaDB — while
 * real buyers buy a real sale on it. Afterwards the real sale's orders, stock log, stock and order
 * events are exactly what the real buyers made, the real order-event receiver got no shadow event,
 * the shadow orders were in the shadow tables and none in the real ones, a real token was refused on
 * the shadow sale and a shadow token on the real one, and the rehearsal cleaned its sale up by
 * itself: no shadow row or key left. Its report names the first layer to give way (or none) per
 * step and lists each switch of the drill with its time to effect (the 1 s bar is the report's
 * verdict, not this test's: only that each switch was measured and took effect is asserted).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runRehearsal } from '../../bench/rehearsal.js';
import { writeReport } from '../../bench/rehearsal/report.js';
import { buy, inParallel, tally } from '../helpers/buyers.js';
import { scalar } from '../helpers/db.js';
import { startEventReceiver } from '../helpers/event-receiver.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor } from '../helpers/origin.js';
import { rehearsalAgainst, untilLine } from '../helpers/shadow-rehearsal.js';
import { startPersistentRedis, type PersistentRedis } from '../helpers/redis-server.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';

const EVENTS_SECRET = 'shadow-rehearsal-events-secret-0123';
const REAL_TABLES = ['seckill_order', 'seckill_stock_log', 'stock_sync_outbox', 'order_event_outbox', 'seckill_refund'];
const SHADOW_TABLES = REAL_TABLES.map((t) => `shadow_${t}`);
const outDir = mkdtempSync(join(tmpdir(), 'shadow-rehearsal-'));
let stack: TestStack;
let redisServer: PersistentRedis;
let realEvents: Awaited<ReturnType<typeof startEventReceiver>>;
let shadowEvents: Awaited<ReturnType<typeof startEventReceiver>>;

beforeAll(async () => {
  realEvents = await startEventReceiver(EVENTS_SECRET, () => ({ status: 204 }));
  shadowEvents = await startEventReceiver(EVENTS_SECRET, () => ({ status: 204 }));
  // A Redis of its own: the guard watches every real sale's Stream lag, and the shared Redis holds
  // other test files' sales.
  redisServer = await startPersistentRedis('everysec');
  stack = await startTestStack({
    originEnv: {
      REDIS_URL: redisServer.url,
      ORDER_EVENTS_URL: realEvents.url,
      SHADOW_ORDER_EVENTS_URL: shadowEvents.url,
      ORDER_EVENTS_SECRET: EVENTS_SECRET,
      ORDER_EVENTS_POLL_MS: '100',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await redisServer?.stop();
  await realEvents?.close();
  await shadowEvents?.close();
  rmSync(outDir, { recursive: true, force: true });
});

const count = (table: string, activityId: string) =>
  scalar(stack.origin.db.pool, `SELECT COUNT(*) FROM ${table} WHERE activity_id = ?`, [activityId]);

it('a real sale with real buyers and a shadow ramp with its switch drill at once: the real ledger is exactly the real buyers’, the shadow sale leaves nothing', async () => {
  const db = stack.origin.db.pool;
  const { activityId: real } = await stack.origin.sale({ stock: 20 });
  const versionBefore = await scalar(db, 'SELECT version FROM seckill_activity WHERE id = ?', [real]);
  const shadow = uniqueId();
  const o = rehearsalAgainst(
    stack,
    [
      ['--activity', shadow],
      ['--stock', '5000'],
      ['--planned-peak', '30'],
      ['--steps', '2'],
      ['--step-seconds', '3'],
      ['--guard-baseline', '1'],
      // Not this test's subject (the guard test's is): a busy shared box's real answers must not stop it.
      ['--guard-success-share', '0.2'],
      ['--guard-p99-ms', '600000'],
      ['--drill-timeout', '30'],
      ['--settle-timeout', '60'],
      ['--out', outDir],
    ].flat(),
  );

  // The real buyers come once the ramp's first step runs: both sales on the stack at once.
  const { say, seen } = untilLine(/^step 1\/2:/);
  const rehearsal = runRehearsal(o, 'shadow rehearsal test', { say });
  await Promise.race([seen, rehearsal]);

  // Tokens and sales do not mix: a real token on the shadow sale, a shadow token on the real one.
  const realOnShadow = await buy(stack.edge.url, shadow, '8300001', false);
  expect([realOnShadow.status, realOnShadow.body.error]).toEqual([403, 'shadow_mismatch']);
  const shadowOnReal = await buy(stack.edge.url, real, '8300002', true);
  expect([shadowOnReal.status, shadowOnReal.body.error]).toEqual([403, 'shadow_mismatch']);

  // The same user ids as the rehearsal's crowd on purpose: a shadow user is the rehearsal's, whoever has that id.
  const realUsers = Array.from({ length: 40 }, (_, i) => String(o.firstUserId + i));
  const realResults = await inParallel(realUsers, 3, (u) => buy(stack.edge.url, real, u, false));
  const report = await rehearsal;
  writeReport(report, outDir);
  expect(tally(realResults)).toEqual({ '202 queued': 20, '409 sold_out': 20 });
  const realWinners = realResults.filter((r) => r.status === 202);

  // The real ledger: exactly the real winners' orders and DEDUCT rows, the stock row at 0, settings untouched.
  await waitFor(
    () => count('seckill_order', real),
    (n) => n === 20,
    20_000,
  );
  const [realOrders] = (await db.query(
    'SELECT user_id, reservation_id, order_no FROM seckill_order WHERE activity_id = ? ORDER BY user_id',
    [real],
  )) as any;
  expect(realOrders.map((x: any) => [String(x.user_id), x.reservation_id])).toEqual(
    realWinners.map((w) => [w.userId, w.body.reservationId]).sort((a, b) => Number(a[0]) - Number(b[0])),
  );
  const [realLog] = (await db.query(
    'SELECT biz_id, change_type, quantity FROM seckill_stock_log WHERE activity_id = ? ORDER BY biz_id',
    [real],
  )) as any;
  expect(realLog.map((r: any) => [r.biz_id, r.change_type, Number(r.quantity)])).toEqual(
    realWinners
      .map((w) => [w.body.reservationId, 'DEDUCT', 1])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
  expect(await scalar(db, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [real])).toBe(0);
  expect(await scalar(db, 'SELECT version FROM seckill_activity WHERE id = ?', [real])).toBe(versionBefore);
  // No row of the shadow sale in a real table, and no other row at all: the real tables hold the 20.
  for (const table of REAL_TABLES) expect(await count(table, shadow)).toBe(0);
  for (const table of REAL_TABLES.slice(0, 2)) expect(await scalar(db, `SELECT COUNT(*) FROM ${table}`)).toBe(20);

  // Real order events: exactly the 20 real orders; none of the shadow sale's ever reached the real receiver.
  await waitFor(
    () => Promise.resolve(realEvents.arrivals.length),
    (n) => n >= 20,
    20_000,
  );
  expect(new Set(realEvents.arrivals.map((a) => a.event.orderNo))).toEqual(
    new Set(realOrders.map((x: any) => x.order_no)),
  );
  expect(realEvents.arrivals.every((a) => a.event.activityId === real && a.event.type === 'order.created')).toBe(true);
  expect(shadowEvents.arrivals.length).toBeGreaterThan(0);
  expect(shadowEvents.arrivals.every((a) => a.event.activityId === shadow)).toBe(true);

  // The shadow orders were in the shadow tables (the report reads its settlement there): every
  // reservation the crowd and the drill's probes were granted became one, nothing lost or doubled.
  const s = report.settlement;
  expect(s.orders.total).toBeGreaterThan(0);
  expect(s.orders.total).toBe(report.figures.usersReserved);
  expect([s.lostCount, s.usersWithTwoOrders, s.deadLetters]).toEqual([0, 0, 0]);
  expect(report.verdict.problems).toEqual([]);

  // The rehearsal cleaned its sale up by itself: no shadow row and no Redis key left.
  const run = report.shadowRun!;
  expect(run.cleanup).toMatchObject({ cleaned: true, reconciledAtCleanup: true, done: true });
  expect(run.cleanup!.checklist!.items.find((i) => i.id === 'shadow_rows_removed')).toMatchObject({ ok: true });
  for (const table of [...SHADOW_TABLES, 'seckill_dead_letter']) expect(await count(table, shadow)).toBe(0);
  expect(await stack.origin.redis.keys(`sk:{${shadow}:*`)).toEqual([]);
  expect(await stack.origin.redis.hexists('sk:activities', shadow)).toBe(0);
  const [[shadowRow]] = (await db.query('SELECT state, shadow FROM seckill_activity WHERE id = ?', [shadow])) as any;
  expect([shadowRow.state, Number(shadowRow.shadow)]).toEqual(['stopped', 1]);

  // The report: per step the rate planned, offered and served, and the first layer to give way (or none).
  expect(run.ramp.steps.map((x) => x.targetRate)).toEqual([22.5, 45]);
  // Each step's rates are measured (a starved generator may land a short step's clicks outside it,
  // so a single step may read 0; the ramp as a whole offered clicks and had them served).
  for (const step of run.ramp.steps) expect(step.servedRate).toBeLessThanOrEqual(step.offeredRate);
  expect(Math.max(...run.ramp.steps.map((x) => x.offeredRate))).toBeGreaterThan(0);
  expect(run.ramp.verdict.text).toMatch(/^(\w+ gave way first, at step \d|no layer gave way up to step 2)/);
  expect(run.guard).toMatchObject({ stoppedEarly: false, reason: null });
  // Each switch flipped, measured, obeyed at the edge, and put back.
  expect(run.drill!.switches.map((x) => x.name)).toEqual([
    'pause',
    'reopen',
    'user rate lowered to 0.25/s',
    'user rate restored to 1/s',
    'sold-out threshold raised (answer sold out)',
    'sold-out threshold restored to 0',
    'per-user limit raised to 2',
    'per-user limit restored to 1',
    'eligibility on (members only)',
    'eligibility off',
  ]);
  for (const sw of run.drill!.switches) {
    expect(sw.effectMs, sw.name).not.toBeNull();
    // When it took effect is bounded by the probes: after the last disobeying click was sent, by the
    // first obeying answer; the bar is met only when that upper bound is within it.
    expect(sw.notBeforeMs, sw.name).toBeLessThanOrEqual(sw.answeredMs!);
    expect(sw.ok, sw.name).toBe(sw.answeredMs! <= run.drill!.limitMs);
  }
  const html = readFileSync(join(outDir, 'report.html'), 'utf8');
  expect(html).toContain('Shadow ramp: first to give way');
  expect(html).toContain('Switch drill');
  expect(JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8')).shadowRun.drill.switches).toHaveLength(10);
});
