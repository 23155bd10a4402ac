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
import { isEligible } from '../../contract/eligibility.js';
import { deniedUserIds } from '../access/deny-list.js';
import { requireActivity, saleOf } from '../sale/sale-store.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import { parseEntry, type Sale } from '../redis/redis-store.js';
import type { Worker } from 'node:worker_threads';
import { forEachEntryPage, type ReadSettings } from './draw-entries.js';
import { DrawHashThreads } from './draw-hash-threads.js';
import type { Candidate } from './draw-selection.js';
import { DrawHmac, hexOf } from './draw-hmac.js';
import { closeDigestOf, commitmentOf, seedOf, type DrawParameters } from './draw-rule.js';
import {
  beginDraw,
  claimDraw,
  findDraw,
  finishDraw,
  insertEntrants,
  markPublished,
  recordDigest,
  type DrawRecord,
  type EntrantRow,
} from './draw-store.js';

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

/** The draw's phases as DrawSettings.onPhase names them. */
export type DrawPhase = 'digest' | 'selection' | 'reservations' | 'publication' | 'other';

export type DrawOutcome = 'published' | 'held_elsewhere' | 'not_lottery';

export interface DrawSettings extends ReadSettings {
  owner: string;
  leaseMs: number;
  reserveBatch: number;
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
  /**
   * Called as each phase of the work ends (bench/draw.ts charges the time since the previous call to
   * it): `digest` (pass 1), `selection` (each pass 2), `reservations` (walking the candidates),
   * `publication` (the entrant list); `other` for the bookkeeping in between.
   */
  onPhase?: (phase: DrawPhase) => void;
}

/** Candidates kept per pass beyond the units: room for exclusions and too-large asks before another pass. */
const SPARE_CANDIDATES = (units: number) => Math.max(100, Math.ceil(units / 10));

class LeaseLost extends Error {}

interface DrawnOutcome {
  winners: Map<string, string>;
  excluded: Set<string>;
  unitsWon: number;
  entrants: number;
}

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
      outcome = await drawWinners(deps, sale, record, seed, s, renew, threads, rule);
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

/**
 * Walks the draw order from the top until no unit is left: an excluded entrant is passed over; the
 * rest go through the reserve rule in batches, one script call per batch (lua/draw-reserve-6.lua runs
 * them in order, so the outcome is that of one reserve call after another); the next batch's call goes
 * out before the last is answered while the units left cover both. A batch's winners and exclusions are
 * recorded while the next batch runs; a crash in between is healed on resume (reserve answers
 * `repeat`, and the checks give the same answers unless the deny list or the rule changed since, in
 * which case a recorded winner or exclusion still stands).
 */
async function drawWinners(
  deps: DrawDeps,
  sale: Sale,
  record: DrawRecord,
  seed: string,
  s: DrawSettings,
  renew: () => Promise<void>,
  threads: DrawHashThreads,
  rule: Parameters<typeof isEligible>[0],
): Promise<DrawnOutcome> {
  const digest = record.entrantsDigest!;
  const units = record.closeParameters?.units ?? record.units ?? 0;
  const [denied, known, excludedBefore] = await Promise.all([
    deniedUserIds(deps.db),
    deps.entries.winners(sale),
    deps.entries.excludedEntrants(sale),
  ]);
  const winners = new Map<string, string>();
  const excluded = new Set<string>();
  let unitsWon = 0;
  let recorded: Promise<unknown> = Promise.resolve();
  let recordFailed: { error: unknown } | undefined;
  // With several buckets a reservation may borrow across slots: one at a time keeps the draw order.
  const batchSize = sale.buckets > 1 ? 1 : s.reserveBatch;
  const capacity = units + SPARE_CANDIDATES(units);
  let after: Int32Array | null = null;
  /** Units left as the latest granted reservation reported them (none yet: null). */
  let knownLeft: number | null = null;
  const checks: BatchChecks = { rule, known, excludedBefore, denied };
  let walked = 0;
  let entrants = 0;
  let gone = units <= 0;
  while (!gone) {
    s.onPhase?.('other');
    const pass = await threads.select(deps.entries, sale, s, seed, digest, capacity, after);
    s.onPhase?.('selection');
    entrants = pass.entrants;
    const { candidates } = pass;
    // Each batch's reserve call goes out while the one before it is still being answered, but only
    // while the units left are known to cover both batches' asks: then no winner of either can be
    // refused for stock, so the outcome does not depend on the order the two calls were decided in,
    // nor on the earlier call failing and being retried on resume (see sendBatch).
    let next: SentBatch | null = candidates.length > 0 ? sendBatch(deps, sale, candidates, 0, batchSize, checks) : null;
    for (let i = 0; next && !gone; i += batchSize) {
      const current: SentBatch = next;
      const following = i + batchSize;
      next = null;
      if (sale.buckets === 1 && following < candidates.length && knownLeft !== null) {
        const ahead = asksOf(candidates, following, batchSize);
        if (knownLeft >= current.asks + ahead) {
          next = sendBatch(deps, sale, candidates, following, batchSize, checks);
          // The client writes a call at its next turn of the event loop, with whatever else was sent
          // by then, and Redis answers the commands of one write together: let this call go out on its
          // own, so the one before is answered as soon as it is decided, while Redis decides this one.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      const batch = current.batch;
      const { isExcluded, results } = await current.reply;
      if (recordFailed) throw recordFailed.error;
      // In draw order: an exclusion counts only while units are left (after that everyone loses anyway,
      // so the list's `excluded` flags do not depend on the batch size).
      const won = new Map<string, string>();
      const newlyExcluded: string[] = [];
      let at = 0;
      batch.forEach((c, j) => {
        if (isExcluded[j]) {
          if (gone) return;
          excluded.add(c.userId);
          if (!excludedBefore.has(c.userId)) newlyExcluded.push(c.userId);
          return;
        }
        const r = results[at++]!;
        // Denied after the list above was read: the bucket's deny hash (lua/reserve-6.lua) refused the
        // reservation. Passed over like the rest, so the published `excluded` flags account for it.
        if (r.kind === 'denied' || r.kind === 'not_eligible') {
          if (gone) return;
          excluded.add(c.userId);
          if (!excludedBefore.has(c.userId)) newlyExcluded.push(c.userId);
          return;
        }
        if (r.kind === 'reserved' || r.kind === 'repeat') {
          won.set(c.userId, r.reservationId);
          unitsWon += c.quantity;
        }
        if (r.kind === 'reserved') knownLeft = r.remaining;
        if ((r.kind === 'reserved' && r.remaining <= 0) || r.kind === 'sold_out') gone = true;
        // Stopped, paused or lost Redis state: the draw cannot decide now; it resumes where it was.
        if (r.kind === 'paused' || r.kind === 'ended' || r.kind === 'not_warmed' || r.kind === 'busy')
          throw new ContractError(
            r.kind === 'not_warmed' ? 'not_ready' : r.kind,
            `draw of ${sale.activityId} waits: ${r.kind}`,
          );
      });
      // Recorded at once and not waited for here: a recording written together with the next
      // batch's call is answered only with that call (Redis answers the commands of one write
      // together), so waiting for it would keep this loop from handling a batch while Redis decides
      // the next. Batches record different users, so their order does not matter. A failed
      // recording fails the walk at its next batch; all are awaited before the winners are announced.
      const recording = Promise.all([
        won.size > 0 ? deps.entries.recordWinners(sale, won) : null,
        newlyExcluded.length > 0 ? deps.entries.recordExcluded(sale, newlyExcluded) : null,
      ]);
      recording.catch((error: unknown) => (recordFailed ??= { error }));
      recorded = Promise.all([recorded, recording]);
      recorded.catch(() => {}); // handled: recordFailed above, and the await below
      for (const [u, r] of won) winners.set(u, r);
      await renew();
      if (!next && !gone && following < candidates.length)
        next = sendBatch(deps, sale, candidates, following, batchSize, checks);
    }
    s.onPhase?.('reservations');
    walked += candidates.length;
    if (candidates.length < capacity || walked >= entrants) break;
    const last = candidates[candidates.length - 1]!.ticket;
    after = wordsOf(last);
  }
  await recorded;
  if (entrants === 0) entrants = (await deps.entries.entryCounts(sale)).reduce((a, b) => a + b, 0);
  return { winners, excluded, unitsWon, entrants };
}

/** What decides, before any reserve call, that a candidate is passed over. */
interface BatchChecks {
  rule: Parameters<typeof isEligible>[0];
  /** Winners recorded by an earlier run of this draw: they stand. */
  known: Map<string, string>;
  excludedBefore: Set<string>;
  denied: Set<string>;
}

/** A batch of candidates whose reserve call has gone out. */
interface SentBatch {
  batch: Candidate[];
  /** Units the batch asks for at most (its excluded candidates counted too). */
  asks: number;
  reply: Promise<{ isExcluded: boolean[]; results: Awaited<ReturnType<DrawDeps['entries']['reserveForDraw']>> }>;
}

function asksOf(candidates: Candidate[], from: number, size: number): number {
  let asks = 0;
  for (let i = from; i < Math.min(from + size, candidates.length); i++) asks += candidates[i]!.quantity;
  return asks;
}

/**
 * Sends the reserve call of `candidates[from, from + size)` (lua/draw-reserve-6.lua, one call): the
 * candidates passed over are told apart first (deny list, eligibility under the rule in force at the
 * close, earlier exclusions), the rest are reserved in draw order. Calls go out on one connection and
 * Redis runs them in the order sent.
 */
function sendBatch(
  deps: DrawDeps,
  sale: Sale,
  candidates: Candidate[],
  from: number,
  size: number,
  checks: BatchChecks,
): SentBatch {
  const batch = candidates.slice(from, from + size);
  const reply = (async () => {
    const { rule, known, excludedBefore, denied } = checks;
    const claims = rule
      ? await deps.entries.entrantClaims(
          sale,
          batch.map((c) => c.userId),
        )
      : null;
    const isExcluded = batch.map(
      (c) =>
        !known.has(c.userId) &&
        (excludedBefore.has(c.userId) ||
          denied.has(c.userId) ||
          (rule !== null && !isEligible(rule, claims?.get(c.userId)))),
    );
    const toReserve = batch.filter((_, j) => !isExcluded[j]);
    const results = await deps.entries.reserveForDraw(
      sale,
      toReserve.map((c) => ({
        userId: c.userId,
        quantity: c.quantity,
        requestId: `draw-${c.userId}`,
        traceId: c.ticket.slice(0, 32),
      })),
    );
    return { isExcluded, results };
  })();
  // Awaited in turn; a call left unawaited when the draw stops early must not count as unhandled.
  reply.catch(() => {});
  return { batch, asks: asksOf(candidates, from, size), reply };
}

function wordsOf(hex: string): Int32Array {
  const out = new Int32Array(8);
  for (let i = 0; i < 8; i++) out[i] = Number.parseInt(hex.slice(8 * i, 8 * i + 8), 16) | 0;
  return out;
}

/** The winners are final: polls answer results, FCFS opens on what is left, the edge learns the seed. */
async function announce(deps: DrawDeps, sale: Sale): Promise<void> {
  await deps.entries.markDrawn(sale);
  const left = await deps.sales.stock(sale);
  if (left !== null && left <= 0) deps.publisher.setSoldOut(sale.activityId, true);
  await pushSnapshot(deps, sale.activityId);
}

/**
 * Pass 3: the entrant list (entrant, entry, ticket, quantity, won, excluded) into MySQL in batches; a
 * batch written before a crash is skipped. Rows go in entry order: the table's key is the ticket and
 * the public list reads by it. The winners and exclusions are this run's, or Redis's record on a resume.
 */
async function publishEntrants(
  deps: DrawDeps,
  sale: Sale,
  record: DrawRecord,
  seed: string,
  known: { winners: Map<string, string>; excluded: Set<string> } | null,
  s: DrawSettings,
  renew: () => Promise<void>,
): Promise<void> {
  const winners = known?.winners ?? (await deps.entries.winners(sale));
  const excluded = known?.excluded ?? (await deps.entries.excludedEntrants(sale));
  const hmac = new DrawHmac(seed);
  // A scheme-1 draw that an older version drew but did not publish: its tickets are the entrant ids.
  const ticketHmac = record.entrantsDigest ? new DrawHmac(seed, record.entrantsDigest) : null;
  const entrant = new Int32Array(8);
  const ticket = new Int32Array(8);
  let rows: EntrantRow[] = [];
  // One INSERT in flight while the next batch is hashed (MySQL, not this process, is the slower side).
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    if (rows.length === 0) return;
    const batch = rows;
    rows = [];
    await inFlight;
    await renew();
    inFlight = insertEntrants(deps.db, sale.activityId, batch);
    // Surfaces at the next flush or at the end, not as an unhandled rejection meanwhile.
    inFlight.catch(() => {});
  };
  await forEachEntryPage(deps.entries, sale, s, async (page, first) => {
    // Every row needs its user id as a string anyway (winners, exclusions): one string per line here.
    const lines = page === '' ? [] : page.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const e = parseEntry(lines[i]!);
      hmac.ofString(e.userId, entrant);
      if (!ticketHmac) {
        rows.push({ ticket: hexOf(entrant), quantity: e.quantity, won: winners.has(e.userId) });
      } else {
        ticketHmac.ofHex(entrant, 0, ticket);
        rows.push({
          entrant: hexOf(entrant),
          entry: first + i + 1,
          ticket: hexOf(ticket),
          quantity: e.quantity,
          won: winners.has(e.userId),
          excluded: excluded.has(e.userId),
        });
      }
      if (rows.length >= s.publishBatch) await flush();
    }
  });
  await flush();
  await inFlight;
}

function pushSnapshot(deps: DrawDeps, activityId: string): Promise<void> {
  return deps.publisher.publish(activityId);
}
