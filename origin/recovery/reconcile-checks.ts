/**
 * The arithmetic of reconciliation (docs/design.md §6), with no Redis and no MySQL: given what the two
 * snapshots read (reconcile.ts), which checks hold and the figures behind them. The equations and
 * why each term is there are in reconcile.ts's header.
 */
import type { LedgerSnapshot } from '../redis/sale-ledger.js';
import { OrderStatus } from '../orders/order-status.js';

export interface Check {
  name: string;
  expected: number;
  actual: number;
  ok: boolean;
  /** Absent: ok when actual = expected. `at_most`: expected is a bound, ok when actual ≤ expected. */
  rule?: 'at_most';
}

/** MySQL in one consistent read, for one activity+SKU. */
export interface DbFigures {
  initial: number;
  available: number;
  heldBack: number;
  /**
   * Every release of held-back units MySQL committed (`held_back -= units` and the row in one
   * transaction), by its id in Redis's `tranches` hash; `applied`: MySQL marked it and added its
   * units to `available` (after Redis had them).
   */
  releases: { id: string; units: number; applied: boolean }[];
  /** Σ quantity of the stock log's DEDUCT rows, and of its REFILL rows. */
  deducted: number;
  refilled: number;
  orders: { reservationId: string; quantity: number; status: number }[];
  /**
   * Dead letters not retried (a retried one is a live reservation again). What compensation gave
   * back is read from Redis's `released` hash, not from the row's `restocked` (written after it).
   */
  dead: { reservationId: string; quantity: number }[];
  /**
   * Every refill MySQL committed (a timed-out order: `available += quantity`, its REFILL log row and
   * its outbox row in one transaction), whatever its outbox row's status: Redis owes each one once.
   */
  refills: { reservationId: string; quantity: number }[];
}

/** Redis at one instant; then, read after MySQL, the reservations granted after its bound and its `tranches`. */
export interface RedisFigures {
  ledger: LedgerSnapshot;
  later: Set<string>;
  /** Tranche id → units Redis had added, read after MySQL (entries are never removed while the sale is warm). */
  tranchesAfter: Map<string, number>;
}

export interface ReconcileOutcome {
  checks: Check[];
  figures: Record<string, number | null>;
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

const sum = <T>(items: Iterable<T>, units: (item: T) => number) => {
  let total = 0;
  for (const item of items) total += units(item);
  return total;
};
const sumValues = (h: Record<string, string>) => sum(Object.values(h), Number);

/**
 * The checks of one activity+SKU. `redis` null: the sale is not warmed, which is itself a failing
 * check. `buckets` > 1 adds the check that no units are left between buckets.
 */
export function reconcileChecks(db: DbFigures, redis: RedisFigures | null, buckets: number): ReconcileOutcome {
  const orderUnits = sum(db.orders, (o) => o.quantity);
  const liveUnits = sum(
    db.orders.filter((o) => o.status !== OrderStatus.TIMEOUT),
    (o) => o.quantity,
  );
  const { initial, available } = db;
  const pendingReleases = sum(
    db.releases.filter((r) => !r.applied),
    (r) => r.units,
  );
  const notReleased = db.heldBack + pendingReleases;
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
    pendingReleases,
    deducted: db.deducted,
    refilledDb: db.refilled,
    orders: db.orders.length,
    orderUnits,
    deadLetters: db.dead.length,
    redisStock: null,
  };

  if (!redis) {
    checks.push({ name: 'redis.warmed', expected: 1, actual: 0, ok: false });
    return { checks, figures };
  }

  const { ledger, later, tranchesAfter } = redis;
  const ordered = new Set(db.orders.map((o) => o.reservationId));
  const deadIds = new Set(db.dead.map((d) => d.reservationId));
  const issued = sum(ledger.units.values(), (q) => q);
  const settled = sum(
    db.orders.filter((o) => ledger.units.has(o.reservationId)),
    (o) => o.quantity,
  );
  const settledLater = sum(
    db.orders.filter((o) => later.has(o.reservationId)),
    (o) => o.quantity,
  );
  const unsettled = sum(
    ledger.open.filter(
      (e) => !ordered.has(e.reservationId) && !deadIds.has(e.reservationId) && !(e.reservationId in ledger.released),
    ),
    (e) => e.quantity,
  );
  const released = sumValues(ledger.released);
  const refilledRedis = sumValues(ledger.refilled);
  // Refills not in Redis's stock at snapshot 1: Redis adds the units and records the reservation in
  // `refilled` in one script, so "not in that hash then" is exactly "not in that stock then" — the
  // outbox row's status, read at another instant, would miss a refill applied in between.
  const unsynced = sum(
    db.refills.filter((r) => !(r.reservationId in ledger.refilled)),
    (r) => r.quantity,
  );
  // Tranches in Redis's stock at snapshot 1: Redis adds a release's share to a bucket's stock and
  // records it in that bucket's `tranches` hash in one script (lua/refill-2.lua), so the hash at
  // snapshot 1 is exactly what that stock holds of them; MySQL marks a release applied (adding it
  // to `available`) only after, so its status at snapshot 2 may be ahead of snapshot 1 or behind
  // it. A release counts at most its units, and only if MySQL committed it: Redis units beyond
  // that show as stock nobody released.
  const tranchesRedis = sum(db.releases, (r) => Math.min(r.units, ledger.tranches.get(r.id) ?? 0));
  const applied = db.releases.filter((r) => r.applied);
  const tranchesApplied = sum(applied, (r) => r.units);
  // Not released as snapshot 1's stock stood: held back + every release − what Redis had added.
  // (held_back + Σ releases is constant: a release moves units from one to the other in one transaction.)
  const notReleasedRedis = db.heldBack + sum(db.releases, (r) => r.units) - tranchesRedis;
  // A release MySQL applied was in Redis before; what the hash lacks after the MySQL read is lost.
  const appliedInRedisAfter = sum(applied, (r) => Math.min(r.units, tranchesAfter.get(r.id) ?? 0));
  const deadUnits = sum(db.dead, (d) => d.quantity);
  // Dead-lettered units not in Redis's stock at snapshot 1: release-3.lua gives units back and
  // records what it gave in `released` in one script (on the reservation's one home bucket), so
  // that hash at snapshot 1 is exactly what that stock holds of them. MySQL's `restocked`, written
  // after the release and read at snapshot 2, would miss a release made between the reads.
  const deadNotRestocked = sum(db.dead, (d) => d.quantity - Number(ledger.released[d.reservationId] ?? 0));
  const inTransit = sum(ledger.inTransit, (t) => t.quantity);
  const surplus = sum(
    Object.keys(ledger.released).filter((id) => !deadIds.has(id)),
    (id) => ledger.units.get(id) ?? 0,
  );
  Object.assign(figures, {
    redisStock: ledger.stock,
    issued,
    released,
    refilledRedis,
    unsynced,
    tranchesRedis,
    tranchesApplied,
    notReleasedRedis,
    unsettled,
    settledAfterSnapshot: settledLater,
    deadUnits,
    deadNotRestocked,
    surplus,
    inTransit,
  });
  checks.push(
    check(
      'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
      initial - notReleasedRedis - ledger.stock,
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
      ledger.stock + unsettled + unsynced + deadNotRestocked + inTransit + tranchesApplied - tranchesRedis,
    ),
    check('redis.applied_releases_in_redis', tranchesApplied, appliedInRedisAfter),
  );
  // Units between buckets are accounted above, but they are not for sale until recover returns them.
  if (buckets > 1) checks.push(check('redis.no_units_in_transit_between_buckets', 0, inTransit));
  return { checks, figures };
}
