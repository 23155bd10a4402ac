/**
 * The lottery draw (docs/design.md §10; scheme 2), run by the DrawJob once an
 * activity's window has closed. Nobody can know the outcome before the close, and nobody can change
 * the list after it:
 *  - the seed is derived from DRAW_SECRET (origin environment only) and checked against the
 *    commitment published at creation; MySQL holds it only from the reveal on;
 *  - entries are closed in Redis, then the closed list is read once in entry order and its digest
 *    recorded and published (state drawing) before anything is drawn; every ticket depends on it;
 *    beside it (scheme 3) the close record: the units drawn, maxPerUser and the eligibility rule in
 *    force at the close, which the draw then uses (a later PATCH or an edited row does not move them);
 *  - a second pass keeps only the smallest tickets (bounded by the units, draw-selection.ts), and the
 *    draw walks them: a denied user (deny list, one query) or one not eligible under the rule in force
 *    at the close (the claims stored with the entry) is passed over and the units go to the next in
 *    draw order; the rest go through the reserve rule a purchase uses (lua/includes/reserve-rule.lua),
 *    a batch of winners per call of lua/draw-reserve-6.lua, until no unit is left.
 * Exactly once across origins and crashes, as before: a lease on the MySQL record; the order is a
 * pure function of the seed and the closed list; reserve is idempotent per user (a resumed draw gets
 * EXISTS + the same reservation, and a recorded winner or exclusion stands); conditional updates.
 */
import { ContractError } from '../../contract/errors.js';
import { lotteryWindow } from '../../contract/activity.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import type { Sale } from '../redis/redis-store.js';
import type { Worker } from 'node:worker_threads';
import { DrawHashThreads } from './draw-hash-threads.js';
import { publishEntrants } from './draw-publication.js';
import { closeDigestOf, commitmentOf, seedOf, type DrawParameters } from './draw-rule.js';
import {
  beginDraw,
  claimDraw,
  findDraw,
  finishDraw,
  markPublished,
  recordDigest,
  type DrawRecord,
} from './draw-store.js';
import { walkDrawOrder, type DrawnOutcome, type WalkSettings } from './draw-walk.js';

/** What the draw uses: its MySQL record and entrant list, the entries in Redis, units left, and the edge's snapshot. */
export interface DrawDeps {
  db: Db;
  log: Logger;
  /** Entries, the draw's reservations, winners and exclusions (lua/draw-reserve-6.lua and friends). */
  entries: LotteryEntries;
  /** Units left in the sale. */
  sales: Pick<SaleStock, 'stock'>;
  /** Pushes the snapshot at each step the edge shows; sets sold-out when the draw took every unit. */
  publisher: Pick<SnapshotPublisher, 'publish' | 'setSoldOut'>;
}

export type DrawOutcome = 'published' | 'held_elsewhere' | 'not_lottery';

export interface DrawSettings extends WalkSettings {
  owner: string;
  leaseMs: number;
  publishBatch: number;
  /** DRAW_SECRET: the key every scheme-2 seed is derived from. */
  drawSecret: string;
  /**
   * DRAW_HASH_WORKERS: worker threads hashing pages of the list beside the main thread
   * (draw-hash-threads.ts); 0 or absent: the main thread alone. The outcome is the same either way.
   */
  hashWorkers?: number;
  /** DRAW_HASH_ANSWER_MS: how long a hashing worker may take to answer one request before the pass fails. */
  hashAnswerMs: number;
  /** Called with each hashing worker as it is started (tests make one fail). */
  onHashWorker?: (worker: Worker) => void;
  /** Called once the winners are final (state drawn), before the list is published (bench/draw.ts times it). */
  onWinnersFinal?: () => void;
}

class LeaseLost extends Error {}

export async function runDraw(deps: DrawDeps, activityId: string, s: DrawSettings): Promise<DrawOutcome> {
  if (!(await claimDraw(deps.db, activityId, s.owner, s.leaseMs))) return 'held_elsewhere';
  // Renewed (one committed UPDATE) once a third of the lease has passed, not after every batch: the
  // lease never runs out while we work, and a lease taken over (we stalled past it) is still noticed
  // before the next batch, since more than a third of it has passed by then.
  let claimedAt = Date.now();
  const renew = async () => {
    if (Date.now() - claimedAt < s.leaseMs / 3) return;
    const now = Date.now();
    if (!(await claimDraw(deps.db, activityId, s.owner, s.leaseMs)))
      throw new LeaseLost(`draw lease of ${activityId} lost`);
    claimedAt = now;
  };
  const activity = await requireActivity(deps.db, activityId);
  const window = lotteryWindow(activity.config);
  let record = await findDraw(deps.db, activityId);
  if (!window || !record) return 'not_lottery';
  const sale: Sale = saleOf(activity);
  const seed = seedFor(record, s.drawSecret);

  let outcome: DrawnOutcome | null = null;
  if (record.state === 'pending' || record.state === 'drawing') {
    // Hashing workers load while the entries close, and take pages once loaded; stopped on every way out.
    const threads = DrawHashThreads.start(s.hashWorkers ?? 0, s.hashAnswerMs, s.onHashWorker);
    let started: number;
    try {
      // From here no entry gets in (lua/enter-6.lua answers CLOSED): the list read below is final.
      await deps.entries.closeEntries(sale);
      if (record.state === 'pending') {
        const units = await deps.sales.stock(sale);
        if (units === null) throw new ContractError('not_ready', `lottery ${activityId} is not warmed; the draw waits`);
        s.onPhase?.('other');
        const digest = await threads.digest(deps.entries, sale, s, seed);
        s.onPhase?.('digest');
        // The digest and the close record are public (pushed with the activity) before any ticket is
        // computed or the seed shown.
        const parameters: DrawParameters = {
          units,
          maxPerUser: activity.config.maxPerUser,
          eligibility: activity.config.eligibility ?? null,
        };
        const close =
          record.scheme >= 3 ? { parameters, digest: closeDigestOf(record.scheme, parameters, digest) } : null;
        if (await beginDraw(deps.db, activityId, units, digest, close)) {
          deps.log.info({ activityId, units, entrantsDigest: digest }, 'lottery entries closed');
          await pushSnapshot(deps, activityId);
        }
      } else if (!record.entrantsDigest) {
        // A draw begun by a version before the digest: digest its closed list now, then go on by this rule.
        await recordDigest(deps.db, activityId, await threads.digest(deps.entries, sale, s, seed));
      }
      record = (await findDraw(deps.db, activityId))!;
      started = Date.now();
      // Scheme 3 draws by the rule recorded at the close; older records by the activity's current one.
      const rule = record.closeParameters ? record.closeParameters.eligibility : (activity.config.eligibility ?? null);
      outcome = await walkDrawOrder(deps, sale, record, seed, s, renew, threads, rule);
    } finally {
      await threads.close();
    }
    const drawnAt = new Date();
    const summary = {
      seed,
      entrants: outcome.entrants,
      excluded: outcome.excluded.size,
      winners: outcome.winners.size,
      unitsWon: outcome.unitsWon,
      drawMs: Math.max(0, drawnAt.getTime() - window.closesAt),
      drawnAt,
    };
    if (await finishDraw(deps.db, activityId, summary))
      deps.log.info({ activityId, ...summary, seed: undefined, walkMs: drawnAt.getTime() - started }, 'lottery drawn');
    s.onWinnersFinal?.();
    record = (await findDraw(deps.db, activityId))!;
  }

  if (record.state === 'drawn') {
    await announce(deps, sale);
    s.onPhase?.('other');
    await publishEntrants(deps, sale, record, seed, outcome, s, renew);
    s.onPhase?.('publication');
    if (await markPublished(deps.db, activityId)) {
      deps.log.info({ activityId, entrants: record.entrants }, 'lottery entrant list published');
      await pushSnapshot(deps, activityId);
    }
  }
  return 'published';
}

/**
 * The seed: scheme 2 derives it from DRAW_SECRET and the stored nonce, and refuses to draw with one
 * that does not match the published commitment (DRAW_SECRET changed since creation); scheme 1 stored it.
 */
function seedFor(record: DrawRecord, drawSecret: string): string {
  if (record.scheme < 2 || !record.seedNonce) {
    if (!record.seed) throw new Error(`draw of ${record.activityId} has neither a seed nor a nonce`);
    return record.seed;
  }
  const seed = seedOf(drawSecret, record.activityId, record.seedNonce);
  if (commitmentOf(seed, record.scheme) !== record.commitment)
    throw new ContractError(
      'conflict',
      `the seed from DRAW_SECRET does not match the commitment of lottery ${record.activityId}: ` +
        'DRAW_SECRET changed since the activity was created; the draw waits for the original secret',
    );
  return seed;
}

/** The winners are final: polls answer results, FCFS opens on what is left, the edge learns the seed. */
async function announce(deps: DrawDeps, sale: Sale): Promise<void> {
  await deps.entries.markDrawn(sale);
  const left = await deps.sales.stock(sale);
  if (left !== null && left <= 0) deps.publisher.setSoldOut(sale.activityId, true);
  await pushSnapshot(deps, sale.activityId);
}

function pushSnapshot(deps: DrawDeps, activityId: string): Promise<void> {
  return deps.publisher.publish(activityId);
}
