/**
 * The walk down the draw order (origin/lottery/draw.ts runs it once the list's digest is recorded):
 * pass 2 keeps the smallest tickets (draw-selection.ts, on the hashing threads), and the candidates
 * go, in draw order, either past (deny list, eligibility under the rule in force at the close, an
 * earlier exclusion) or through the reserve rule, a batch per call of lua/draw-reserve-6.lua, until no
 * unit is left; winners and exclusions are recorded in Redis as the walk goes.
 */
import { ContractError } from '../../contract/errors.js';
import { isEligible } from '../../contract/eligibility.js';
import { deniedUserIds } from '../access/deny-list.js';
import type { Db } from '../platform/db/pool.js';
import type { LotteryEntries } from '../redis/lottery-entries.js';
import type { Sale } from '../redis/redis-store.js';
import type { ReadSettings } from './draw-entries.js';
import type { DrawHashThreads } from './draw-hash-threads.js';
import type { Candidate } from './draw-selection.js';
import type { DrawRecord } from './draw-store.js';

/** The draw's phases as DrawSettings.onPhase names them. */
export type DrawPhase = 'digest' | 'selection' | 'reservations' | 'publication' | 'other';

/** Where the walk reads and records: the deny list in MySQL, the entries and reservations in Redis. */
export interface DrawStores {
  db: Db;
  entries: LotteryEntries;
}

export interface WalkSettings extends ReadSettings {
  /** Winners per reserve call (DRAW_RESERVE_BATCH); one when the sale has several stock buckets. */
  reserveBatch: number;
  /**
   * Called as each phase of the work ends (bench/draw.ts charges the time since the previous call to
   * it): `digest` (pass 1), `selection` (each pass 2), `reservations` (walking the candidates),
   * `publication` (the entrant list); `other` for the bookkeeping in between.
   */
  onPhase?: (phase: DrawPhase) => void;
}

/** Candidates kept per pass beyond the units: room for exclusions and too-large asks before another pass. */
const SPARE_CANDIDATES = (units: number) => Math.max(100, Math.ceil(units / 10));

export interface DrawnOutcome {
  winners: Map<string, string>;
  excluded: Set<string>;
  unitsWon: number;
  entrants: number;
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
export async function walkDrawOrder(
  deps: DrawStores,
  sale: Sale,
  record: DrawRecord,
  seed: string,
  s: WalkSettings,
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
  reply: Promise<{ isExcluded: boolean[]; results: Awaited<ReturnType<LotteryEntries['reserveForDraw']>> }>;
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
  deps: DrawStores,
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
