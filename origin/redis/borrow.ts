/**
 * Borrowing between stock buckets (docs/design.md §10): the short cross-slot protocol run when a user's home
 * bucket cannot serve. Each step is one script on one slot:
 *
 *   1. reserve-6 at home   marks the user pending (holder "~rid", borrowing[rid] = p|ts|user|q)
 *   2. take-3 at a donor   takes q units, records lent[rid] = q|home      (at most MAX_DONORS donors)
 *   3. confirm-3 at home   pending → the reservation, event appended to the home Stream
 *      or abandon-2 at home (no donor had the units) → the user is free to try again
 *
 * Why it is safe. The user's one holder record (pending or granted) lives at home, so two clicks can
 * never hold two reservations. Units leave a donor only into `lent`, named by reservation, so units
 * in transit are always visible (reconciliation counts them). confirm succeeds only while the borrow
 * is pending; once abandoned it refuses, so lent units of an abandoned borrow can go back
 * (give-back-2) without ever being sold twice. A process that dies between steps leaves a pending
 * borrow and maybe lent units; `returnStranded` (recover) abandons what is older than the stale
 * limit and returns its units.
 */
import type { Logger } from '../platform/logger.js';
import type { ActivityKeys } from './keys.js';
import type { Sale } from './sale.js';
import { abandonScript, type AbandonReply } from './scripts/abandon.js';
import { confirmScript } from './scripts/confirm.js';
import { giveBackScript } from './scripts/give-back.js';
import type { ReserveInput, ReserveOutcome } from './scripts/reserve.js';
import type { ScriptRunner } from './scripts/runner.js';
import { takeScript } from './scripts/take.js';

/** Other buckets asked per borrow, at most (docs/design.md §10: "at most 2"). */
export const MAX_DONORS = 2;

export interface BorrowDeps {
  run<T>(work: () => Promise<T>): Promise<T>;
  scripts: ScriptRunner;
  keys(sale: Sale, bucket: number): ActivityKeys;
  log: Logger;
  /** Test seam: runs between taking from a donor and confirming at home (the crash test kills the process here). */
  afterTake?: () => Promise<void>;
}

export interface StrandedBorrow {
  reservationId: string;
  home: number;
  /** The bucket the units went back to; null when none had been taken. */
  donor: number | null;
  quantity: number;
}

/** A borrow's outcome; a granted one names the donor bucket its units came from (WAIT must cover it too). */
export type BorrowResult =
  Exclude<ReserveOutcome, { kind: 'reserved' }> | (Extract<ReserveOutcome, { kind: 'reserved' }> & { donor: number });

export async function borrow(
  deps: BorrowDeps,
  input: ReserveInput,
  home: number,
  reservationId: string,
  homeStock: number,
): Promise<BorrowResult> {
  const { quantity } = input;
  const others = Array.from({ length: input.buckets }, (_, b) => b).filter((b) => b !== home);
  const stocks = await deps.run(() =>
    Promise.all(others.map((b) => deps.scripts.redis.get(deps.keys(input, b).stock))),
  );
  const levels = others.map((b, i) => ({ bucket: b, stock: Number(stocks[i] ?? 0) }));
  const total = homeStock + levels.reduce((s, l) => s + l.stock, 0);
  // The fullest buckets first: they are the likeliest to still have the units when asked.
  const donors = levels
    .filter((l) => l.stock >= quantity)
    .sort((a, b) => b.stock - a.stock)
    .slice(0, MAX_DONORS);
  const h = deps.keys(input, home);
  const tried: number[] = [];
  try {
    for (const { bucket } of donors) {
      const d = deps.keys(input, bucket);
      tried.push(bucket);
      const taken = await deps.run(() => deps.scripts.run(takeScript, d, { reservationId, quantity, home }));
      if (!taken) continue;
      await deps.afterTake?.();
      const { userId, requestId, traceId } = input;
      const confirmed = await deps.run(() =>
        deps.scripts.run(confirmScript, h, {
          userId,
          reservationId,
          quantity,
          donor: bucket,
          requestId,
          traceId,
          now: Date.now(),
        }),
      );
      if (confirmed)
        return { kind: 'reserved', reservationId, remaining: Math.max(total - quantity, 0), donor: bucket };
      // Given up meanwhile (recovery took it for stranded): the units must not stay lent.
      await giveBack(deps, input, bucket, reservationId);
      return { kind: 'busy' };
    }
  } catch (err) {
    await undo(deps, input, home, reservationId, tried).catch((undoErr: Error) =>
      deps.log.warn(
        { activityId: input.activityId, reservationId, err: undoErr.message },
        'borrow left half-done; recover returns its units once it is stale',
      ),
    );
    throw err;
  }
  await abandon(deps, input, home, reservationId, 0);
  if (total <= 0) return { kind: 'sold_out' };
  // Units remain but no single bucket had `quantity` of them (or they went while we asked).
  return quantity > 1 ? { kind: 'insufficient_stock' } : { kind: 'busy' };
}

/** Best effort after a failed step: give the borrow up and return whatever a donor lent. */
async function undo(deps: BorrowDeps, sale: Sale, home: number, reservationId: string, donors: number[]) {
  const given = await abandon(deps, sale, home, reservationId, 0);
  if (given !== 'abandoned' && given !== 'already') return;
  for (const donor of donors) await giveBack(deps, sale, donor, reservationId);
}

function abandon(
  deps: BorrowDeps,
  sale: Sale,
  home: number,
  reservationId: string,
  markedBefore: number,
): Promise<AbandonReply> {
  return deps.run(() => deps.scripts.run(abandonScript, deps.keys(sale, home), { reservationId, markedBefore }));
}

function giveBack(deps: BorrowDeps, sale: Sale, donor: number, reservationId: string): Promise<boolean> {
  return deps.run(() => deps.scripts.run(giveBackScript, deps.keys(sale, donor), { reservationId }));
}

/**
 * Recovery of borrows left half-done by a process that died: every pending borrow marked before
 * `markedBefore` is given up at home, and every lent entry whose borrow was given up goes back to
 * its donor. Confirmed borrows are sold and left alone.
 */
export async function returnStranded(
  deps: Omit<BorrowDeps, 'run'>,
  sale: Sale,
  markedBefore: number,
): Promise<StrandedBorrow[]> {
  const run: BorrowDeps['run'] = (work) => work();
  const full = { ...deps, run };
  const buckets = Array.from({ length: sale.buckets }, (_, b) => b);
  const redis = deps.scripts.redis;
  const borrowing = await Promise.all(buckets.map((b) => redis.hgetall(deps.keys(sale, b).borrowing)));
  const lent = await Promise.all(buckets.map((b) => redis.hgetall(deps.keys(sale, b).lent)));
  const returned: StrandedBorrow[] = [];
  const lentFor = new Map<string, { donor: number; quantity: number }>();
  for (const [donor, entries] of lent.entries())
    for (const [rid, value] of Object.entries(entries))
      lentFor.set(rid, { donor, quantity: Number(value.split('|')[0]) });

  for (const [home, entries] of borrowing.entries()) {
    for (const [rid, state] of Object.entries(entries)) {
      if (state.startsWith('c')) continue;
      const gaveUp = await abandon(full, sale, home, rid, markedBefore);
      if (gaveUp !== 'abandoned' && gaveUp !== 'already') continue;
      const loan = lentFor.get(rid);
      if (loan && (await giveBack(full, sale, loan.donor, rid))) {
        returned.push({ reservationId: rid, home, donor: loan.donor, quantity: loan.quantity });
      } else if (gaveUp === 'abandoned') {
        const quantity = Number(state.split('|')[3] ?? 0);
        returned.push({ reservationId: rid, home, donor: null, quantity });
      }
    }
  }
  if (returned.length > 0)
    deps.log.warn({ activityId: sale.activityId, returned }, 'stranded borrows given up; their units are back');
  return returned;
}
