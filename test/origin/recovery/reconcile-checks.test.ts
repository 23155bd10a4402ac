// The reconciliation checks (origin/recovery/reconcile-checks.ts), with no Redis and no MySQL: the two
// snapshots are given as figures, as reconcile.ts reads them.
import { describe, expect, it } from 'vitest';
import { reconcileChecks, type DbFigures, type RedisFigures } from '../../../origin/recovery/reconcile-checks.js';
import type { LedgerSnapshot } from '../../../origin/redis/sale-ledger.js';
import { OrderStatus } from '../../../origin/orders/order-status.js';

const order = (reservationId: string, quantity = 1, status: number = OrderStatus.PENDING) => ({
  reservationId,
  quantity,
  status,
});

/** 10 units; r1 (1) and r2 (2) sold and settled: 7 left in MySQL and in Redis. */
const dbFigures = (over: Partial<DbFigures> = {}): DbFigures => ({
  initial: 10,
  available: 7,
  heldBack: 0,
  releases: [],
  deducted: 3,
  refilled: 0,
  orders: [order('r1'), order('r2', 2)],
  dead: [],
  refills: [],
  ...over,
});

const ledger = (over: Partial<LedgerSnapshot> = {}): LedgerSnapshot => ({
  stock: 7,
  bounds: ['5-0'],
  units: new Map([
    ['r1', 1],
    ['r2', 2],
  ]),
  open: [],
  released: {},
  refilled: {},
  tranches: new Map(),
  inTransit: [],
  fingerprints: ['7/5-0'],
  ...over,
});

const redisFigures = (
  over: Partial<LedgerSnapshot> = {},
  later: string[] = [],
  tranchesAfter = over.tranches ?? new Map<string, number>(),
): RedisFigures => ({
  ledger: ledger(over),
  later: new Set(later),
  tranchesAfter,
});

const failing = (db: DbFigures, redis: RedisFigures | null, buckets = 1) =>
  reconcileChecks(db, redis, buckets)
    .checks.filter((c) => !c.ok)
    .map((c) => c.name);

const byName = (db: DbFigures, redis: RedisFigures | null, name: string, buckets = 1) =>
  reconcileChecks(db, redis, buckets).checks.find((c) => c.name === name);

describe('reconcile checks', () => {
  it('a settled sale passes all seven checks, with its figures', () => {
    const { checks, figures } = reconcileChecks(dbFigures(), redisFigures(), 1);
    expect(checks).toHaveLength(7);
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(figures).toMatchObject({ initial: 10, available: 7, orderUnits: 3, issued: 3, redisStock: 7, unsettled: 0 });
  });

  it('an unwarmed sale fails redis.warmed and runs only the MySQL checks', () => {
    const { checks, figures } = reconcileChecks(dbFigures(), null, 1);
    expect(checks.map((c) => c.name)).toEqual([
      'db.initial_equals_available_plus_deducted_minus_refilled',
      'db.order_units_equal_deduct_log',
      'db.live_orders_within_stock',
      'redis.warmed',
    ]);
    expect(failing(dbFigures(), null)).toEqual(['redis.warmed']);
    expect(figures.redisStock).toBeNull();
  });

  it('an order without its deduct log row fails the MySQL checks', () => {
    const db = dbFigures({ orders: [order('r1'), order('r2', 2), order('r9')], deducted: 3 });
    expect(failing(db, null)).toContain('db.order_units_equal_deduct_log');
  });

  it('units missing from available (under-selling) fail as much as extra ones', () => {
    expect(failing(dbFigures({ available: 6 }), redisFigures())).toEqual([
      'db.initial_equals_available_plus_deducted_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
    expect(failing(dbFigures({ available: 8 }), redisFigures())).toEqual([
      'db.initial_equals_available_plus_deducted_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });

  it('live orders beyond the initial stock fail an at_most check showing both figures', () => {
    const db = dbFigures({ initial: 2, available: -1 });
    const c = byName(db, null, 'db.live_orders_within_stock');
    expect(c).toEqual({ name: 'db.live_orders_within_stock', expected: 2, actual: 3, ok: false, rule: 'at_most' });
  });

  it('timed-out orders do not count as live', () => {
    const db = dbFigures({ initial: 2, available: -1, orders: [order('r1'), order('r2', 2, OrderStatus.TIMEOUT)] });
    expect(byName(db, null, 'db.live_orders_within_stock')).toMatchObject({ expected: 2, actual: 1, ok: true });
  });

  it('units held back and releases not yet in Redis are in neither available nor stock', () => {
    const db = dbFigures({ initial: 15, heldBack: 3, releases: [{ id: 'release:1', units: 2, applied: false }] });
    expect(failing(db, redisFigures())).toEqual([]);
    expect(reconcileChecks(db, redisFigures(), 1).figures).toMatchObject({ heldBack: 3, pendingReleases: 2 });
  });

  describe('released units are what `tranches` held at the Redis instant, whatever MySQL marked by its read', () => {
    const REDIS = 'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled';
    const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';
    const APPLIED = 'redis.applied_releases_in_redis';
    // 15 units, 3 held back, release 1 (2 units) committed; r1 and r2 sold (3).
    const release = (applied: boolean, units = 2) => ({ id: 'release:1', units, applied });
    const db = (applied: boolean) =>
      dbFigures({ initial: 15, heldBack: 3, available: applied ? 9 : 7, releases: [release(applied)] });
    const inRedis = (units: number) => new Map([['release:1', units]]);

    it('applied to Redis after its read and marked applied before the MySQL read', () => {
      const redis = redisFigures({ stock: 7 }, [], inRedis(2));
      expect(failing(db(true), redis)).toEqual([]);
      expect(reconcileChecks(db(true), redis, 1).figures).toMatchObject({ tranchesRedis: 0, tranchesApplied: 2 });
    });

    it('applied to Redis before its read and not yet marked applied at the MySQL read', () => {
      const redis = redisFigures({ stock: 9, tranches: inRedis(2) });
      expect(failing(db(false), redis)).toEqual([]);
      expect(reconcileChecks(db(false), redis, 1).figures).toMatchObject({ tranchesRedis: 2, tranchesApplied: 0 });
    });

    it('applied on both sides, and half applied (one of two buckets) on neither', () => {
      expect(failing(db(true), redisFigures({ stock: 9, tranches: inRedis(2) }))).toEqual([]);
      expect(failing(db(false), redisFigures({ stock: 8, tranches: inRedis(1) }))).toEqual([]);
    });

    it('still fails on a release MySQL applied that Redis never got (under-selling)', () => {
      expect(failing(db(true), redisFigures({ stock: 7 }))).toEqual([APPLIED]);
      expect(byName(db(true), redisFigures({ stock: 7 }), APPLIED)).toMatchObject({ expected: 2, actual: 0 });
    });

    it('still fails on tranche units MySQL never released, beyond a release, or recorded but not in stock', () => {
      const none = dbFigures({ initial: 15, heldBack: 5, available: 7 });
      expect(failing(none, redisFigures({ stock: 9, tranches: new Map([['release:99', 2]]) }))).toEqual([REDIS, CROSS]);
      expect(failing(db(false), redisFigures({ stock: 11, tranches: inRedis(4) }))).toEqual([REDIS, CROSS]);
      expect(failing(db(false), redisFigures({ stock: 7, tranches: inRedis(2) }))).toEqual([REDIS, CROSS]);
    });
  });

  it('an open entry with no order yet is unsettled: available still has its units', () => {
    // r3 (2 units) reserved, in the Stream, not settled: Redis stock 5, MySQL available 7.
    const redis = redisFigures({
      stock: 5,
      units: new Map([
        ['r1', 1],
        ['r2', 2],
        ['r3', 2],
      ]),
      open: [{ id: '6-0', reservationId: 'r3', quantity: 2 }],
    });
    const { checks, figures } = reconcileChecks(dbFigures(), redis, 1);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(figures.unsettled).toBe(2);
  });

  it('an open entry whose order MySQL already has is settled, not unsettled', () => {
    const redis = redisFigures({ open: [{ id: '4-0', reservationId: 'r2', quantity: 2 }] });
    expect(reconcileChecks(dbFigures(), redis, 1).figures.unsettled).toBe(0);
    expect(failing(dbFigures(), redis)).toEqual([]);
  });

  it('an order of a reservation after the bound is added back to available', () => {
    // r3 was granted after Redis's snapshot and settled before MySQL's: MySQL has it, the ledger does not.
    const db = dbFigures({ available: 6, deducted: 4, orders: [order('r1'), order('r2', 2), order('r3')] });
    expect(failing(db, redisFigures({}, ['r3']))).toEqual([]);
    expect(failing(db, redisFigures())).toEqual([
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });

  /** r2 (2 units) timed out: MySQL put its units back in `available` and queued the refill. */
  const timedOut = dbFigures({
    available: 9,
    refilled: 2,
    orders: [order('r1'), order('r2', 2, OrderStatus.TIMEOUT)],
    refills: [{ reservationId: 'r2', quantity: 2 }],
  });

  it('a refill not yet applied to Redis is counted as unsynced', () => {
    const { checks, figures } = reconcileChecks(timedOut, redisFigures(), 1);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(figures.unsynced).toBe(2);
    expect(failing({ ...timedOut, refills: [] }, redisFigures())).toEqual([
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });

  it('a refill applied to Redis is in its stock and refilled hash, not unsynced, whatever its outbox row says', () => {
    // Applied (stock 9, r2 in `refilled`): its outbox row may be done, or not yet marked done when
    // MySQL is read — the figures MySQL gives are the same either way, and so is the answer.
    const redis = redisFigures({ stock: 9, refilled: { r2: '2' } });
    const { checks, figures } = reconcileChecks(timedOut, redis, 1);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(figures.unsynced).toBe(0);
  });

  it('a refill applied between the Redis and the MySQL read counts as not in Redis (the race of a live sale)', () => {
    // Redis read before the refill (stock 7, r2 not in `refilled`); MySQL read after its outbox row
    // was marked done: `available` has the units, Redis's stock then did not.
    expect(failing(timedOut, redisFigures())).toEqual([]);
  });

  it('a refill in Redis that MySQL never committed fails (units that could be sold twice)', () => {
    const redis = redisFigures({ stock: 9, refilled: { r9: '2' } });
    expect(failing(dbFigures(), redis)).toEqual([
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
    expect(
      byName(dbFigures(), redis, 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked'),
    ).toMatchObject({
      expected: 7,
      actual: 9,
      ok: false,
    });
  });

  it('a refill Redis applied with other units than MySQL committed fails', () => {
    const redis = redisFigures({ stock: 10, refilled: { r2: '3' } });
    expect(failing(timedOut, redis)).toEqual([
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });

  it('a refill whose units Redis lost (in `refilled`, not in stock) fails as under-selling', () => {
    const redis = redisFigures({ stock: 7, refilled: { r2: '2' } });
    expect(failing(timedOut, redis)).toEqual([
      'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });

  it('a released reservation with no order or dead letter is surplus', () => {
    // r3 reserved, then released (compensated): its units are back in stock, not sold.
    const redis = redisFigures({
      units: new Map([
        ['r1', 1],
        ['r2', 2],
        ['r3', 1],
      ]),
      released: { r3: '1' },
    });
    const { checks, figures } = reconcileChecks(dbFigures(), redis, 1);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
    expect(figures.surplus).toBe(1);
  });

  it('a dead-lettered reservation not restocked keeps its units out of Redis', () => {
    const db = dbFigures({ dead: [{ reservationId: 'r3', quantity: 1 }] });
    const redis = redisFigures({
      stock: 6,
      units: new Map([
        ['r1', 1],
        ['r2', 2],
        ['r3', 1],
      ]),
    });
    expect(failing(db, redis)).toEqual([]);
    expect(reconcileChecks(db, redis, 1).figures.deadUnits).toBe(1);
  });

  describe('dead-lettered units given back are what `released` held at the Redis instant', () => {
    const CROSS = 'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked';
    const REDIS = 'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled';
    // r3 (2 units) reserved, then dead-lettered: MySQL never deducted it, so available stays 7.
    const units = new Map([
      ['r1', 1],
      ['r2', 2],
      ['r3', 2],
    ]);
    const db = dbFigures({ dead: [{ reservationId: 'r3', quantity: 2 }] });

    it('released (restocked) before the Redis read: its units are in stock, none owed', () => {
      const redis = redisFigures({ stock: 7, units, released: { r3: '2' } });
      expect(failing(db, redis)).toEqual([]);
      expect(reconcileChecks(db, redis, 1).figures).toMatchObject({ deadUnits: 2, deadNotRestocked: 0 });
    });

    it('released after the Redis read (whatever MySQL says by its read): its units are owed', () => {
      const redis = redisFigures({ stock: 5, units });
      expect(failing(db, redis)).toEqual([]);
      expect(reconcileChecks(db, redis, 1).figures).toMatchObject({ deadUnits: 2, deadNotRestocked: 2 });
    });

    it('released with nothing given back (cap): its units stay owed', () => {
      const redis = redisFigures({ stock: 5, units, released: { r3: '0' } });
      expect(failing(db, redis)).toEqual([]);
      expect(reconcileChecks(db, redis, 1).figures.deadNotRestocked).toBe(2);
    });

    it('still fails when Redis says it gave units back that its stock lacks, or holds units it never gave back', () => {
      expect(failing(db, redisFigures({ stock: 5, units, released: { r3: '2' } }))).toEqual([REDIS, CROSS]);
      expect(failing(db, redisFigures({ stock: 7, units }))).toEqual([REDIS, CROSS]);
      expect(failing(db, redisFigures({ stock: 6, units, released: { r3: '2' } }))).toEqual([REDIS, CROSS]);
    });
  });

  it('units in transit between buckets are accounted but fail the bucket check', () => {
    const inTransit = [{ reservationId: 'b1', quantity: 2, donor: 0, home: 1, state: 'p' }];
    const redis = redisFigures({ stock: 5, inTransit });
    expect(failing(dbFigures(), redis, 2)).toEqual(['redis.no_units_in_transit_between_buckets']);
    // One bucket has no such check.
    expect(failing(dbFigures(), redis, 1)).toEqual([]);
  });

  it('stock missing from Redis fails the Redis checks', () => {
    expect(failing(dbFigures(), redisFigures({ stock: 6 }))).toEqual([
      'redis.initial_minus_stock_equals_issued_minus_released_minus_refilled',
      'cross.available_equals_stock_plus_unsettled_plus_unsynced_plus_unrestocked',
    ]);
  });
});
