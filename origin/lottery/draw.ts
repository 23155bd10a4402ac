/**
 * The lottery draw (DESIGN §10), run by the DrawJob once an activity's window has closed. Exactly
 * once across origins and crashes:
 *  - a lease on the MySQL draw record lets one origin at a time work; a dead holder's lease runs out;
 *  - the order is a pure function of the secret seed and the closed set of entries (entries are
 *    closed in Redis before they are read), so a resumed draw walks the same order;
 *  - each winner goes through the normal reserve script, which is idempotent per user (a resumed
 *    draw gets EXISTS + the same reservation), so no unit is taken twice;
 *  - the state moves pending → drawing → drawn → published by conditional updates.
 */
import { ContractError } from '../../contract/errors.js';
import { lotteryWindow } from '../../contract/activity.js';
import { requireActivity, saleOf } from '../activity/store.js';
import type { OriginContext } from '../context.js';
import type { Sale } from '../redis/stock-store.js';
import { DrawQueue } from './draw-order.js';
import type { OrderedEntrant } from './draw-rule.js';
import {
  beginDraw,
  claimDraw,
  findDraw,
  finishDraw,
  insertEntrants,
  markPublished,
  type DrawRecord,
} from './draw-store.js';

/** What this module uses of the origin's context. */
export type DrawDeps = Pick<OriginContext, 'db' | 'log' | 'publisher' | 'stock'>;

export type DrawOutcome = 'published' | 'held_elsewhere' | 'not_lottery';

export interface DrawSettings {
  owner: string;
  leaseMs: number;
  reserveBatch: number;
  publishBatch: number;
}

class LeaseLost extends Error {}

export async function runDraw(ctx: DrawDeps, activityId: string, s: DrawSettings): Promise<DrawOutcome> {
  if (!(await claimDraw(ctx.db, activityId, s.owner, s.leaseMs))) return 'held_elsewhere';
  // Renewed (one committed UPDATE) once a third of the lease has passed, not after every batch: the
  // lease never runs out while we work, and a lease taken over (we stalled past it) is still noticed
  // before the next batch, since more than a third of it has passed by then.
  let claimedAt = Date.now();
  const renew = async () => {
    if (Date.now() - claimedAt < s.leaseMs / 3) return;
    const now = Date.now();
    if (!(await claimDraw(ctx.db, activityId, s.owner, s.leaseMs)))
      throw new LeaseLost(`draw lease of ${activityId} lost`);
    claimedAt = now;
  };
  const activity = await requireActivity(ctx.db, activityId);
  const window = lotteryWindow(activity.config);
  let record = await findDraw(ctx.db, activityId);
  if (!window || !record) return 'not_lottery';
  const sale: Sale = saleOf(activity);

  let queue: DrawQueue | null = null;
  let winners: Map<string, string> | null = null;
  if (record.state === 'pending' || record.state === 'drawing') {
    // From here no entry gets in (lua/enter-3.lua answers CLOSED): the set read below is final.
    await ctx.stock.closeEntries(sale);
    if (record.state === 'pending') {
      const units = await ctx.stock.stock(sale);
      if (units === null) throw new ContractError('not_ready', `lottery ${activityId} is not warmed; the draw waits`);
      await beginDraw(ctx.db, activityId, units);
      record = (await findDraw(ctx.db, activityId))!;
    }
    queue = await drawQueue(ctx, sale, record.seed);
    const drawn = await reserveInOrder(ctx, sale, queue, s, renew);
    winners = drawn.winners;
    const drawnAt = new Date();
    const summary = {
      entrants: queue.entrants.length,
      winners: winners.size,
      unitsWon: drawn.unitsWon,
      drawMs: Math.max(0, drawnAt.getTime() - window.closesAt),
      drawnAt,
    };
    if (await finishDraw(ctx.db, activityId, summary)) ctx.log.info({ activityId, ...summary }, 'lottery drawn');
    record = (await findDraw(ctx.db, activityId))!;
  }

  if (record.state === 'drawn') {
    await announce(ctx, sale);
    await publishEntrants(ctx, sale, record, queue, winners, s, renew);
    if (await markPublished(ctx.db, activityId)) {
      ctx.log.info({ activityId, entrants: record.entrants }, 'lottery entrant list published');
      await pushSnapshot(ctx, activityId);
    }
  }
  return 'published';
}

/**
 * Reserves for each entrant in draw order until no unit is left, taking the order from the queue
 * only as far as it goes. Batches are sent together on one connection, so Redis runs them in order:
 * the outcome is the one of a call after another. A batch's winners are written while the next
 * batch runs (awaited with it, and all of them before the draw is marked drawn), not in a round trip
 * of their own; a crash in between is healed as before: the resumed draw gets `repeat` and records.
 */
async function reserveInOrder(
  ctx: DrawDeps,
  sale: Sale,
  queue: DrawQueue,
  s: DrawSettings,
  renew: () => Promise<void>,
): Promise<{ winners: Map<string, string>; unitsWon: number }> {
  const winners = new Map<string, string>();
  let unitsWon = 0;
  let recorded: Promise<void> = Promise.resolve();
  // With several buckets a reservation may borrow across slots: one at a time keeps the draw order.
  const batchSize = sale.buckets > 1 ? 1 : s.reserveBatch;
  for (let batch = queue.take(batchSize); batch.length > 0; batch = queue.take(batchSize)) {
    const [, results] = await Promise.all([
      recorded,
      Promise.all(
        batch.map((e) =>
          ctx.stock.reserveForDraw({
            ...sale,
            userId: e.userId,
            quantity: e.quantity,
            requestId: `draw-${e.userId}`,
            traceId: e.ticket.slice(0, 32),
          }),
        ),
      ),
    ]);
    const won = new Map<string, string>();
    let gone = false;
    results.forEach((r, j) => {
      const userId = batch[j]!.userId;
      if (r.kind === 'reserved' || r.kind === 'repeat') {
        won.set(userId, r.reservationId);
        unitsWon += batch[j]!.quantity;
      }
      if ((r.kind === 'reserved' && r.remaining <= 0) || r.kind === 'sold_out') gone = true;
      // Stopped, paused or lost Redis state: the draw cannot decide now; it resumes where it was.
      if (r.kind === 'paused' || r.kind === 'ended' || r.kind === 'not_warmed' || r.kind === 'busy')
        throw new ContractError(
          r.kind === 'not_warmed' ? 'not_ready' : r.kind,
          `draw of ${sale.activityId} waits: ${r.kind}`,
        );
    });
    recorded = ctx.stock.recordWinners(sale, won);
    // Keep a failed write from counting as unhandled before it is awaited with the next batch.
    recorded.catch(() => {});
    for (const [u, r] of won) winners.set(u, r);
    if (gone) break;
    await renew();
  }
  await recorded;
  return { winners, unitsWon };
}

/** The winners are final: polls answer results, FCFS opens on what is left, the edge learns the seed. */
async function announce(ctx: DrawDeps, sale: Sale): Promise<void> {
  await ctx.stock.markDrawn(sale);
  const left = await ctx.stock.stock(sale);
  if (left !== null && left <= 0) ctx.publisher.setSoldOut(sale.activityId, true);
  await pushSnapshot(ctx, sale.activityId);
}

/**
 * The entrant list (ticket, quantity, won) into MySQL in batches; a batch written before a crash is
 * skipped. Rows go in the queue's order, not ticket order: the table's key is the ticket and the
 * public list reads by it; sorting first cost the origin more than MySQL saved (bench/draw.ts).
 * The winners are the ones this run recorded, or Redis's record on a resume.
 */
async function publishEntrants(
  ctx: DrawDeps,
  sale: Sale,
  record: DrawRecord,
  known: DrawQueue | null,
  knownWinners: Map<string, string> | null,
  s: DrawSettings,
  renew: () => Promise<void>,
): Promise<void> {
  const { entrants } = known ?? (await drawQueue(ctx, sale, record.seed));
  const winners = knownWinners ?? (await ctx.stock.winners(sale));
  for (let i = 0; i < entrants.length; i += s.publishBatch) {
    const rows = entrants
      .slice(i, i + s.publishBatch)
      .map((e: OrderedEntrant) => ({ ticket: e.ticket, quantity: e.quantity, won: winners.has(e.userId) }));
    await insertEntrants(ctx.db, sale.activityId, rows);
    await renew();
  }
}

async function drawQueue(ctx: DrawDeps, sale: Sale, seed: string): Promise<DrawQueue> {
  const entrants = await ctx.stock.entrants(sale);
  return DrawQueue.of(
    seed,
    Array.from(entrants, ([userId, quantity]) => ({ userId, quantity })),
  );
}

function pushSnapshot(ctx: DrawDeps, activityId: string): Promise<void> {
  return ctx.publisher.publish(activityId);
}
