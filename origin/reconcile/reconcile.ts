/**
 * Reconciliation (DESIGN §6), per activity+SKU. Every check reports expected and actual; any
 * mismatch — under-selling as much as over-selling — makes `ok` false, sets a metric and logs an
 * alert line. Figures read while a sale is live can differ for a moment (an entry committed but not
 * yet acknowledged); a mismatch that persists is the alarm.
 *
 *   DB:    initial = available + Σ deduct − Σ refill;  Σ order quantity = Σ deduct
 *   Redis: initial − stock = issued − released − refilled;  issued = settled + unsettled + dead-lettered + surplus
 *   Both:  available = stock + unsettled + refills not yet synced + dead-lettered units not restocked
 */
import type { OriginContext } from '../context.js';
import { requireActivity } from '../activity/store.js';
import { CONSUMER_GROUP, activityKeys } from '../redis/keys.js';
import { groupInfo } from '../settlement/stream-stats.js';

export interface Check {
  name: string;
  expected: number;
  actual: number;
  ok: boolean;
}

export interface Reconciliation {
  activityId: string;
  ok: boolean;
  at: string;
  checks: Check[];
  figures: Record<string, number | null>;
}

const check = (name: string, expected: number, actual: number): Check => ({
  name,
  expected,
  actual,
  ok: expected === actual,
});

const STREAM_PAGE = 1_000;

/** Units per reservation id in the Stream, and where the consumer group stands. */
async function streamFigures(ctx: OriginContext, events: string) {
  const units = new Map<string, number>();
  const byStreamId = new Map<string, number>();
  let start = '-';
  for (;;) {
    const page = (await ctx.redis.xrange(events, start, '+', 'COUNT', STREAM_PAGE)) as [string, string[]][];
    for (const [id, fields] of page) {
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      const q = Number(f.quantity) || 0;
      if (f.reservationId) units.set(f.reservationId, q);
      byStreamId.set(id, q);
    }
    if (page.length < STREAM_PAGE) break;
    start = `(${page[page.length - 1]![0]}`;
  }
  const info = await groupInfo(ctx, events);
  let unsettled = 0;
  if (info) {
    const pending = (await ctx.redis.xpending(events, CONSUMER_GROUP, '-', '+', Math.max(1, info.pending))) as [
      string,
    ][];
    for (const [id] of pending) unsettled += byStreamId.get(id) ?? 0;
    const last = info.lastDeliveredId;
    for (const [id, q] of byStreamId) if (compareStreamIds(id, last) > 0) unsettled += q;
  } else {
    for (const q of byStreamId.values()) unsettled += q;
  }
  return { units, unsettled };
}

function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  if (am! !== bm!) return am! < bm! ? -1 : 1;
  return as! === bs! ? 0 : as! < bs! ? -1 : 1;
}

const sumValues = (h: Record<string, string>) => Object.values(h).reduce((s, v) => s + Number(v), 0);

export async function reconcile(ctx: OriginContext, activityId: string): Promise<Reconciliation> {
  const record = await requireActivity(ctx.db, activityId);
  const { skuId } = record.config;
  const args = [activityId, skuId];
  const [[log]] = (await ctx.db.execute(
    `SELECT COALESCE(SUM(CASE WHEN change_type = 'DEDUCT' THEN quantity END), 0) AS deducted,
            COALESCE(SUM(CASE WHEN change_type = 'REFILL' THEN quantity END), 0) AS refilled
       FROM seckill_stock_log WHERE activity_id = ? AND sku_id = ?`,
    args,
  )) as any;
  const [[orders]] = (await ctx.db.execute(
    `SELECT COUNT(*) AS n, COALESCE(SUM(quantity), 0) AS units,
            COALESCE(SUM(CASE WHEN status <> 2 THEN quantity END), 0) AS live_units
       FROM seckill_order WHERE activity_id = ? AND sku_id = ?`,
    args,
  )) as any;
  const [deadRows] = (await ctx.db.execute(
    // A retried dead letter is a live reservation again (back in the Stream): not dead units.
    "SELECT reservation_id, quantity, restocked FROM seckill_dead_letter WHERE activity_id = ? AND sku_id = ? AND status <> 'retried'",
    args,
  )) as any;
  const [[outbox]] = (await ctx.db.execute(
    'SELECT COALESCE(SUM(quantity), 0) AS units FROM stock_sync_outbox WHERE activity_id = ? AND sku_id = ? AND status = 0',
    args,
  )) as any;

  const initial = record.initialStock;
  const available = record.available;
  const deducted = Number(log.deducted);
  const refilledDb = Number(log.refilled);
  const checks: Check[] = [
    check('db.initial_equals_available_plus_deducted_minus_refilled', initial, available + deducted - refilledDb),
    check('db.order_units_equal_deduct_log', deducted, Number(orders.units)),
    check('db.live_orders_within_stock', 1, Number(orders.live_units) <= initial ? 1 : 0),
  ];

  const figures: Record<string, number | null> = {
    initial,
    available,
    deducted,
    refilledDb,
    orders: Number(orders.n),
    orderUnits: Number(orders.units),
    deadLetters: deadRows.length,
    redisStock: null,
  };

  const keys = activityKeys(activityId, skuId);
  const stockText = await ctx.redis.get(keys.stock);
  if (stockText === null) {
    checks.push({ name: 'redis.warmed', expected: 1, actual: 0, ok: false });
  } else {
    const stock = Number(stockText);
    const [releasedHash, refilledHash, stream] = await Promise.all([
      ctx.redis.hgetall(keys.released),
      ctx.redis.hgetall(keys.refilled),
      streamFigures(ctx, keys.events),
    ]);
    const issued = [...stream.units.values()].reduce((s, q) => s + q, 0);
    const released = sumValues(releasedHash);
    const refilledRedis = sumValues(refilledHash);
    const deadIds = new Set<string>(deadRows.map((r: any) => r.reservation_id));
    const deadUnits = deadRows.reduce((s: number, r: any) => s + Number(r.quantity), 0);
    const deadNotRestocked = deadRows.reduce((s: number, r: any) => s + Number(r.quantity) - Number(r.restocked), 0);
    const surplus = Object.keys(releasedHash)
      .filter((id) => !deadIds.has(id))
      .reduce((s, id) => s + (stream.units.get(id) ?? 0), 0);
    Object.assign(figures, {
      redisStock: stock,
      issued,
      released,
      refilledRedis,
      unsettled: stream.unsettled,
      deadUnits,
      surplus,
    });
    checks.push(
      check(
        'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
        initial - stock,
        issued - released - refilledRedis,
      ),
      check(
        'redis.issued_equals_settled_plus_unsettled_plus_dead_plus_surplus',
        issued,
        Number(orders.units) + stream.unsettled + deadUnits + surplus,
      ),
      check(
        'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
        available,
        stock + stream.unsettled + Number(outbox.units) + deadNotRestocked,
      ),
    );
  }

  const ok = checks.every((c) => c.ok);
  return { activityId, ok, at: new Date().toISOString(), checks, figures };
}

/** Sets the mismatch gauge and, on a mismatch, logs the alert line operators page on. */
export function raiseMismatch(ctx: OriginContext, rec: Reconciliation): void {
  const failing = rec.checks.filter((c) => !c.ok);
  ctx.metrics.reconciliationMismatches.set({ activity: rec.activityId }, failing.length);
  if (failing.length > 0) {
    ctx.log.error(
      { alert: 'reconciliation_mismatch', activityId: rec.activityId, failing, figures: rec.figures },
      'reconciliation mismatch',
    );
  }
}
