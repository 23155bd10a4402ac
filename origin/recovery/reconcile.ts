/**
 * Reconciliation (docs/design.md §6), per activity+SKU. Every check reports expected and actual; any
 * mismatch — under-selling as much as over-selling — makes `ok` false.
 *
 *   DB:    initial = available + not released + Σ deduct − Σ refill;  Σ order quantity = Σ deduct
 *   Redis: initial − not released − stock = issued − released − refilled;  issued = settled + unsettled + dead-lettered + surplus
 *   Both:  available = stock + unsettled + refills not in Redis + dead-lettered units not restocked
 *                      + (releases applied in MySQL − tranches in Redis)
 *
 * It must be exact while a sale is live, so it reads two snapshots and relates them:
 *   1. Redis at one instant per bucket (one MULTI): stock, the Stream's last id (the bound), the
 *      group's position, `released`, `refilled`, `tranches`, `lent`, `borrowing`. Only Stream
 *      entries up to the bound count as issued.
 *   2. MySQL in one read-only transaction on one consistent snapshot (START TRANSACTION WITH
 *      CONSISTENT SNAPSHOT at REPEATABLE READ, whatever the server's default), after 1.
 *   3. After 2: the reservations beyond the bound, `tranches` again, and every bucket's fingerprint
 *      (what moves when any flow touches it). Equal to 1's: Redis held still across the MySQL read.
 * The buckets of a sale are read one after another (on a cluster, on different servers), so a
 * borrow between two buckets' MULTIs is seen half done; and a flow this arithmetic does not know
 * would show the same way. So a failing check that involves Redis counts only on a reading Redis
 * held still across (3 equals 1): otherwise the whole reading is taken again, up to
 * RECONCILE_READ_ATTEMPTS readings; if Redis never held still the result is `unstable` (skipped,
 * not an alarm). A MySQL-only check is exact on its own snapshot and counts at once; a reading
 * whose checks all pass is accepted whether Redis moved or not (every equation held).
 * An entry still pending, or not yet delivered, is unsettled — unless MySQL already has its order
 * or dead letter, or Redis had released it (settled or compensated between the reads). Orders of
 * reservations beyond the bound were granted after snapshot 1, so their units are added back to
 * `available` for the cross check.
 *
 * Every flow that gives Redis units and then writes MySQL (refills, dead letters' restocks,
 * tranches) is counted by what snapshot 1's Redis recorded of it, never by the MySQL row's
 * status: each script adds the units to a bucket's stock and records them in a hash of that bucket
 * in one step, and that bucket's MULTI reads both, so the hash at snapshot 1 is exactly what its
 * stock holds. A status read at snapshot 2 misses what was applied between the reads (counted in
 * neither) and counts what Redis had before snapshot 1 but MySQL marked after snapshot 2 twice —
 * and while timeouts stream refills, every read meets such moves.
 *   - "Refills not in Redis" = refills MySQL committed (a timeout puts `available += q`, the REFILL
 *     log row and the outbox row in one transaction), whatever their outbox status, whose
 *     reservation is not in `refilled` (lua/refill-2.lua, the one bucket the reservation refills).
 *   - "Dead-lettered units not restocked" = Σ quantity − `released`[reservation] (lua/release-3.lua
 *     on the home bucket), not MySQL's `restocked`, which dead-lettering.ts writes after the release.
 *     Surplus compensation (no dead letter) is read from snapshot 1 alone.
 *   - Tranches (docs/design.md §10, sale/tranches.ts): step 1 moves units from `held_back` to a release
 *     row in one transaction (their sum is constant); step 2 gives Redis the release's share per
 *     bucket (lua/refill-2.lua on `tranches`), then marks the row applied and adds it to `available`.
 *     "Not released" for the Redis check = held back + every release − what `tranches` held of
 *     them (each at most its units, only releases MySQL has: other units show as stock nobody
 *     released); the MySQL check keeps held back + pending rows. The cross check relates the two
 *     with (applied in MySQL − held by Redis). That difference alone cannot tell a release applied
 *     between the reads from one MySQL marked applied that Redis never got (under-selling), so
 *     `tranches` is read again after MySQL (3): every release MySQL had applied must be there —
 *     its entries are never removed while the sale is warm, and recover rewrites them from the
 *     applied releases with the stock it proves (lua/recover-9.lua).
 */
import { requireActivity, saleOf } from '../sale/sale-store.js';
import { trancheId } from '../sale/tranches.js';
import { inConsistentSnapshot, type Db } from '../platform/db/pool.js';
import type { OriginConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { LedgerReads } from '../redis/ledger-reads.js';
import type { Sale } from '../redis/redis-store.js';
import type { InTransit } from '../redis/sale-ledger.js';
import { ordersForReconcile } from '../orders/order-store.js';
import { loggedRefills } from '../orders/refill-outbox-store.js';
import { stockFigures, stockLogTotals } from '../orders/stock-row-store.js';
import { StockReleaseStatus, releasesOfSale } from '../sale/tranche-store.js';
import { deadUnitsOfSale } from '../orders/dead-letter-store.js';
import { reconcileChecks, type Check, type DbFigures } from './reconcile-checks.js';

export type { Check } from './reconcile-checks.js';

/** What reconciliation reads: MySQL and Redis's ledger reads; RECONCILE_READ_ATTEMPTS (1 without a config). */
export interface ReconcileDeps {
  db: Db;
  ledger: LedgerReads;
  config?: Pick<OriginConfig, 'RECONCILE_READ_ATTEMPTS'>;
}

/** Where a mismatch is told: the mismatch gauge and the alert line. */
export interface MismatchAlarmDeps {
  log: Logger;
  metrics: Pick<Metrics, 'reconciliationMismatches'>;
}

export interface Reconciliation {
  activityId: string;
  ok: boolean;
  at: string;
  checks: Check[];
  figures: Record<string, number | null>;
  /** Stock buckets: units taken from a donor bucket for a borrow not confirmed (a process died mid-borrow). */
  inTransit: InTransit[];
  /** Readings taken (more than 1: a Redis-side check failed while Redis moved during the MySQL read). */
  readings: number;
  /**
   * A Redis-side check failed on every reading, and Redis moved during each: the figures were not
   * read at one moment, so the failure proves nothing — skipped, not an alarm (`ok` stays false).
   */
  unstable: boolean;
}

/** A check that reads MySQL alone: exact on its consistent snapshot, whatever Redis did meanwhile. */
const mysqlOnly = (c: Check) => c.name.startsWith('db.');

/** Readings (reconcile.ts header) until one is consistent, at most RECONCILE_READ_ATTEMPTS. */
export async function reconcile(deps: ReconcileDeps, activityId: string): Promise<Reconciliation> {
  const record = await requireActivity(deps.db, activityId);
  const sale = saleOf(record);
  const attempts = deps.config?.RECONCILE_READ_ATTEMPTS ?? 1;
  for (let reading = 1; ; reading++) {
    const { outcome, ledger, held } = await readOnce(deps, sale, record.config.skuId);
    const failing = outcome.checks.filter((c) => !c.ok);
    // A failure counts when MySQL alone shows it, or when Redis held still around the MySQL read.
    const proven = held || !ledger || failing.length === 0 || failing.some(mysqlOnly);
    if (proven || reading >= attempts)
      return {
        activityId,
        ok: failing.length === 0,
        at: new Date().toISOString(),
        ...outcome,
        inTransit: ledger?.inTransit ?? [],
        readings: reading,
        unstable: !proven,
      };
  }
}

/** One reading: Redis (1), MySQL (2), Redis after it (3); `held`: Redis's fingerprints did not move from 1 to 3. */
async function readOnce(deps: ReconcileDeps, sale: Sale, skuId: string) {
  const ledger = await deps.ledger.ledgerSnapshot(sale);
  const db = await readDbFigures(deps.db, sale, skuId);
  // Snapshot 3: reservations granted after the bound (read after MySQL, so it covers every order
  // MySQL could have for them), and the tranches Redis has added (every release MySQL had applied
  // by its read must be there); last, the fingerprints, so that "held" covers those reads too.
  const redis = ledger && {
    ledger,
    later: await deps.ledger.reservationsAfter(sale, ledger.bounds),
    tranchesAfter: await deps.ledger.tranches(sale),
  };
  const held = !!ledger && sameList(ledger.fingerprints, await deps.ledger.ledgerFingerprints(sale));
  return { outcome: reconcileChecks(db, redis, sale.buckets), ledger, held };
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Snapshot 2: MySQL, every figure from one consistent read view. */
async function readDbFigures(pool: Db, of: Sale, skuId: string): Promise<DbFigures> {
  // The shadow flag goes with it: a shadow sale's rows are in the shadow tables (origin/orders/ledger.ts).
  const sale = { activityId: of.activityId, skuId, shadow: of.shadow === true };
  return inConsistentSnapshot(pool, async (tx) => {
    const stock = (await stockFigures(tx, sale))!;
    const releases = await releasesOfSale(tx, sale);
    const log = await stockLogTotals(tx, sale);
    const orders = await ordersForReconcile(tx, sale);
    // A retried dead letter is a live reservation again (back in the Stream): not dead units.
    const dead = await deadUnitsOfSale(tx, sale);
    // Every refill queued for Redis, pending or done (what Redis applied is told by its `refilled`
    // hash, not by the row's status); a refill whose outbox row is missing shows as units Redis never gets.
    const refills = await loggedRefills(tx, sale);
    // SUM() arrives as a decimal string: every figure is made a number here.
    return {
      initial: Number(stock.initial_stock),
      available: Number(stock.available),
      heldBack: Number(stock.held_back),
      releases: releases.map((r) => ({
        id: trancheId(r.id),
        units: Number(r.units),
        applied: Number(r.status) === StockReleaseStatus.APPLIED,
      })),
      deducted: Number(log.deducted),
      refilled: Number(log.refilled),
      orders: orders.map((o) => ({
        reservationId: o.reservation_id,
        quantity: Number(o.quantity),
        status: Number(o.status),
      })),
      dead: dead.map((d) => ({ reservationId: d.reservation_id, quantity: Number(d.quantity) })),
      refills: refills.map((r) => ({ reservationId: r.reservation_id, quantity: Number(r.quantity) })),
    };
  });
}

/** Sets the mismatch gauge and, on a mismatch, logs the alert line operators page on. */
export function raiseMismatch(deps: MismatchAlarmDeps, rec: Reconciliation): void {
  const failing = rec.checks.filter((c) => !c.ok);
  deps.metrics.reconciliationMismatches.set({ activity: rec.activityId }, failing.length);
  if (failing.length > 0) {
    deps.log.error(
      { alert: 'reconciliation_mismatch', activityId: rec.activityId, failing, figures: rec.figures },
      'reconciliation mismatch',
    );
  }
}
