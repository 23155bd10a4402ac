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
import { drawOrder, type OrderedEntrant } from './draw-rule.js';
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
  const renew = async () => {
    if (!(await claimDraw(ctx.db, activityId, s.owner, s.leaseMs)))
      throw new LeaseLost(`draw lease of ${activityId} lost`);
  };
  const activity = await requireActivity(ctx.db, activityId);
  const window = lotteryWindow(activity.config);
  let record = await findDraw(ctx.db, activityId);
  if (!window || !record) return 'not_lottery';
  const sale: Sale = saleOf(activity);

  let ordered: OrderedEntrant[] | null = null;
  if (record.state === 'pending' || record.state === 'drawing') {
    // From here no entry gets in (lua/enter-3.lua answers CLOSED): the set read below is final.
    await ctx.stock.closeEntries(sale);
    if (record.state === 'pending') {
      const units = await ctx.stock.stock(sale);
      if (units === null) throw new ContractError('not_ready', `lottery ${activityId} is not warmed; the draw waits`);
      await beginDraw(ctx.db, activityId, units);
      record = (await findDraw(ctx.db, activityId))!;
    }
    ordered = await orderedEntrants(ctx, sale, record.seed);
    const winners = await reserveInOrder(ctx, sale, ordered, s, renew);
    let unitsWon = 0;
    for (const e of ordered) if (winners.has(e.userId)) unitsWon += e.quantity;
    const drawnAt = new Date();
    const summary = {
      entrants: ordered.length,
      winners: winners.size,
      unitsWon,
      drawMs: Math.max(0, drawnAt.getTime() - window.closesAt),
      drawnAt,
    };
    if (await finishDraw(ctx.db, activityId, summary)) ctx.log.info({ activityId, ...summary }, 'lottery drawn');
    record = (await findDraw(ctx.db, activityId))!;
  }

  if (record.state === 'drawn') {
    await announce(ctx, sale);
    await publishEntrants(ctx, sale, record, ordered, s, renew);
    if (await markPublished(ctx.db, activityId)) {
      ctx.log.info({ activityId, entrants: record.entrants }, 'lottery entrant list published');
      await pushSnapshot(ctx, activityId);
    }
  }
  return 'published';
}

/**
 * Reserves for each entrant in draw order until no unit is left. Batches are sent together on one
 * connection, so Redis runs them in order: the outcome is the one of a call after another.
 */
async function reserveInOrder(
  ctx: DrawDeps,
  sale: Sale,
  ordered: OrderedEntrant[],
  s: DrawSettings,
  renew: () => Promise<void>,
): Promise<Map<string, string>> {
  const winners = new Map<string, string>();
  // With several buckets a reservation may borrow across slots: one at a time keeps the draw order.
  const batchSize = sale.buckets > 1 ? 1 : s.reserveBatch;
  for (let i = 0; i < ordered.length; i += batchSize) {
    const batch = ordered.slice(i, i + batchSize);
    const results = await Promise.all(
      batch.map((e) =>
        ctx.stock.reserveForDraw({
          ...sale,
          userId: e.userId,
          quantity: e.quantity,
          requestId: `draw-${e.userId}`,
          traceId: e.ticket.slice(0, 32),
        }),
      ),
    );
    const won = new Map<string, string>();
    let gone = false;
    results.forEach((r, j) => {
      const userId = batch[j]!.userId;
      if (r.kind === 'reserved' || r.kind === 'repeat') won.set(userId, r.reservationId);
      if ((r.kind === 'reserved' && r.remaining <= 0) || r.kind === 'sold_out') gone = true;
      // Stopped, paused or lost Redis state: the draw cannot decide now; it resumes where it was.
      if (r.kind === 'paused' || r.kind === 'ended' || r.kind === 'not_warmed' || r.kind === 'busy')
        throw new ContractError(
          r.kind === 'not_warmed' ? 'not_ready' : r.kind,
          `draw of ${sale.activityId} waits: ${r.kind}`,
        );
    });
    await ctx.stock.recordWinners(sale, won);
    for (const [u, r] of won) winners.set(u, r);
    if (gone) break;
    await renew();
  }
  return winners;
}

/** The winners are final: polls answer results, FCFS opens on what is left, the edge learns the seed. */
async function announce(ctx: DrawDeps, sale: Sale): Promise<void> {
  await ctx.stock.markDrawn(sale);
  const left = await ctx.stock.stock(sale);
  if (left !== null && left <= 0) ctx.publisher.setSoldOut(sale.activityId, true);
  await pushSnapshot(ctx, sale.activityId);
}

/** The entrant list (ticket, quantity, won) into MySQL in batches; a batch written before a crash is skipped. */
async function publishEntrants(
  ctx: DrawDeps,
  sale: Sale,
  record: DrawRecord,
  known: OrderedEntrant[] | null,
  s: DrawSettings,
  renew: () => Promise<void>,
): Promise<void> {
  const ordered = known ?? (await orderedEntrants(ctx, sale, record.seed));
  const winners = await ctx.stock.winners(sale);
  for (let i = 0; i < ordered.length; i += s.publishBatch) {
    const rows = ordered
      .slice(i, i + s.publishBatch)
      .map((e) => ({ ticket: e.ticket, quantity: e.quantity, won: winners.has(e.userId) }));
    await insertEntrants(ctx.db, sale.activityId, rows);
    await renew();
  }
}

async function orderedEntrants(ctx: DrawDeps, sale: Sale, seed: string): Promise<OrderedEntrant[]> {
  const entrants = await ctx.stock.entrants(sale);
  return drawOrder(
    seed,
    Array.from(entrants, ([userId, quantity]) => ({ userId, quantity })),
  );
}

function pushSnapshot(ctx: DrawDeps, activityId: string): Promise<void> {
  return ctx.publisher.publish(activityId);
}
