/**
 * Reconciliation (DESIGN §6), per activity+SKU. Every check reports expected and actual; any
 * mismatch — under-selling as much as over-selling — makes `ok` false.
 *
 *   DB:    initial = available + not released + Σ deduct − Σ refill;  Σ order quantity = Σ deduct
 *   Redis: initial − not released − stock = issued − released − refilled;  issued = settled + unsettled + dead-lettered + surplus
 *   Both:  available = stock + unsettled + refills not yet synced + dead-lettered units not restocked
 *
 * It must be exact while a sale is live, so it reads two snapshots and relates them:
 *   1. Redis at one instant (one MULTI): stock, the Stream's last id (the bound), the group's
 *      position, `released`, `refilled`. Only Stream entries up to the bound count as issued.
 *   2. MySQL in one transaction (one consistent snapshot), after 1.
 * An entry still pending, or not yet delivered, is unsettled — unless MySQL already has its order
 * or dead letter, or Redis had released it (settled or compensated between the reads). Orders of
 * reservations beyond the bound were granted after snapshot 1, so their units are added back to
 * `available` for the cross check. What can still move between the two reads (a refill applied
 * and marked done in between) is rare and is what the periodic job's re-reads are for.
 *
 * "Not released" = units held back (tranches, DESIGN §10) + releases committed in MySQL but not yet
 * applied to Redis: neither `available` nor Redis has them (activity/tranches.ts).
 */
import type { OriginContext } from '../context.js';
import { requireActivity, saleOf } from '../activity/store.js';
import { inTransaction } from '../db/pool.js';
import type { InTransit } from '../redis/sale-ledger.js';
import { one, rows } from '../db/rows.js';
import { OrderStatus, OutboxStatus } from '../db/statuses.js';

export interface Check {
  name: string;
  expected: number;
  actual: number;
  ok: boolean;
  /** Absent: ok when actual = expected. `at_most`: expected is a bound, ok when actual ≤ expected. */
  rule?: 'at_most';
}

export interface Reconciliation {
  activityId: string;
  ok: boolean;
  at: string;
  checks: Check[];
  figures: Record<string, number | null>;
  /** Stock buckets: units taken from a donor bucket for a borrow not confirmed (a process died mid-borrow). */
  inTransit: InTransit[];
}

const check = (name: string, expected: number, actual: number): Check => ({
  name,
  expected,
  actual,
  ok: expected === actual,
});

/** A bound, not an equality: the two figures compared are shown, not a 1/0 flag. */
const atMost = (name: string, bound: number, actual: number): Check => ({
  name,
  expected: bound,
  actual,
  ok: actual <= bound,
  rule: 'at_most',
});

const sumValues = (h: Record<string, string>) => Object.values(h).reduce((s, v) => s + Number(v), 0);

export async function reconcile(ctx: OriginContext, activityId: string): Promise<Reconciliation> {
  const record = await requireActivity(ctx.db, activityId);
  const { skuId } = record.config;
  const sale = saleOf(record);
  const redis = await ctx.stock.ledgerSnapshot(sale);

  // Snapshot 2: MySQL, every figure from one consistent read view.
  const args = [activityId, skuId];
  const db = await inTransaction(ctx.db, async (tx) => {
    const stock = (await one<{ initial_stock: number; available: number; held_back: number }>(
      tx.execute(
        'SELECT initial_stock, available, held_back FROM seckill_stock WHERE activity_id = ? AND sku_id = ?',
        args,
      ),
    ))!;
    const releases = (await one<{ units: number }>(
      tx.execute(
        'SELECT COALESCE(SUM(units), 0) AS units FROM seckill_stock_release WHERE activity_id = ? AND sku_id = ? AND status = 0',
        args,
      ),
    ))!;
    const log = (await one<{ deducted: number; refilled: number }>(
      tx.execute(
        `SELECT COALESCE(SUM(CASE WHEN change_type = 'DEDUCT' THEN quantity END), 0) AS deducted,
                COALESCE(SUM(CASE WHEN change_type = 'REFILL' THEN quantity END), 0) AS refilled
           FROM seckill_stock_log WHERE activity_id = ? AND sku_id = ?`,
        args,
      ),
    ))!;
    const orders = await rows<{ reservation_id: string; quantity: number; status: number }>(
      tx.execute(
        'SELECT reservation_id, quantity, status FROM seckill_order WHERE activity_id = ? AND sku_id = ?',
        args,
      ),
    );
    // A retried dead letter is a live reservation again (back in the Stream): not dead units.
    const dead = await rows<{ reservation_id: string; quantity: number; restocked: number }>(
      tx.execute(
        "SELECT reservation_id, quantity, restocked FROM seckill_dead_letter WHERE activity_id = ? AND sku_id = ? AND status <> 'retried'",
        args,
      ),
    );
    const outbox = (await one<{ units: number }>(
      tx.execute(
        `SELECT COALESCE(SUM(quantity), 0) AS units FROM stock_sync_outbox
          WHERE activity_id = ? AND sku_id = ? AND status = ${OutboxStatus.PENDING}`,
        args,
      ),
    ))!;
    return {
      initial: Number(stock.initial_stock),
      available: Number(stock.available),
      heldBack: Number(stock.held_back),
      pendingReleases: Number(releases.units),
      deducted: Number(log.deducted),
      refilled: Number(log.refilled),
      orders,
      dead,
      unsynced: Number(outbox.units),
    };
  });

  const orderUnits = db.orders.reduce((s, o) => s + Number(o.quantity), 0);
  const liveUnits = db.orders
    .filter((o) => Number(o.status) !== OrderStatus.TIMEOUT)
    .reduce((s, o) => s + Number(o.quantity), 0);
  const { initial, available } = db;
  const notReleased = db.heldBack + db.pendingReleases;
  const checks: Check[] = [
    check(
      'db.initial_equals_available_plus_deducted_minus_refilled',
      initial,
      available + notReleased + db.deducted - db.refilled,
    ),
    check('db.order_units_equal_deduct_log', db.deducted, orderUnits),
    atMost('db.live_orders_within_stock', initial, liveUnits),
  ];
  const figures: Record<string, number | null> = {
    initial,
    available,
    heldBack: db.heldBack,
    pendingReleases: db.pendingReleases,
    deducted: db.deducted,
    refilledDb: db.refilled,
    orders: db.orders.length,
    orderUnits,
    deadLetters: db.dead.length,
    redisStock: null,
  };

  if (!redis) {
    checks.push({ name: 'redis.warmed', expected: 1, actual: 0, ok: false });
  } else {
    // Snapshot 3: reservations granted after the bound (read after MySQL, so it covers every order
    // MySQL could have for them).
    const later = await ctx.stock.reservationsAfter(sale, redis.bounds);
    const ordered = new Set(db.orders.map((o) => o.reservation_id));
    const deadIds = new Set(db.dead.map((d) => d.reservation_id));
    const issued = [...redis.units.values()].reduce((s, q) => s + q, 0);
    const settled = db.orders
      .filter((o) => redis.units.has(o.reservation_id))
      .reduce((s, o) => s + Number(o.quantity), 0);
    const settledLater = db.orders
      .filter((o) => later.has(o.reservation_id))
      .reduce((s, o) => s + Number(o.quantity), 0);
    const unsettled = redis.open
      .filter(
        (e) => !ordered.has(e.reservationId) && !deadIds.has(e.reservationId) && !(e.reservationId in redis.released),
      )
      .reduce((s, e) => s + e.quantity, 0);
    const released = sumValues(redis.released);
    const refilledRedis = sumValues(redis.refilled);
    const deadUnits = db.dead.reduce((s, d) => s + Number(d.quantity), 0);
    const deadNotRestocked = db.dead.reduce((s, d) => s + Number(d.quantity) - Number(d.restocked), 0);
    const inTransit = redis.inTransit.reduce((s, t) => s + t.quantity, 0);
    const surplus = Object.keys(redis.released)
      .filter((id) => !deadIds.has(id))
      .reduce((s, id) => s + (redis.units.get(id) ?? 0), 0);
    Object.assign(figures, {
      redisStock: redis.stock,
      issued,
      released,
      refilledRedis,
      unsettled,
      settledAfterSnapshot: settledLater,
      deadUnits,
      surplus,
      inTransit,
    });
    checks.push(
      check(
        'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
        initial - notReleased - redis.stock,
        issued - released - refilledRedis + inTransit,
      ),
      check(
        'redis.issued_equals_settled_plus_unsettled_plus_dead_plus_surplus',
        issued,
        settled + unsettled + deadUnits + surplus,
      ),
      check(
        'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
        available + settledLater,
        redis.stock + unsettled + db.unsynced + deadNotRestocked + inTransit,
      ),
    );
    // Units between buckets are accounted above, but they are not for sale until recover returns them.
    if (sale.buckets > 1) checks.push(check('redis.no_units_in_transit_between_buckets', 0, inTransit));
  }

  const ok = checks.every((c) => c.ok);
  return { activityId, ok, at: new Date().toISOString(), checks, figures, inTransit: redis?.inTransit ?? [] };
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
