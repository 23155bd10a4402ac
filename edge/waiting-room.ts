/**
 * The waiting room's answers (docs/design.md §10 `overflow: "queue"`): what a purchase or a poll says for
 * the shard's answer about the user's entry — waiting (202 from a purchase, 200 from a poll) with
 * `{status:"waiting", position, etaSeconds, pollUrl, pollAfterMs}`; its turn (the kept purchase is
 * forwarded now and the result answered: the §3 reservation body or the refusal); its recorded
 * outcome; 429 when polled sooner than pollAfterMs; 404 when the entry is gone, saying why (not
 * polled in time, the line was reset, unknown).
 */
import type { Context } from 'hono';
import {
  ContractError,
  FINAL_ORIGIN_ANSWERS,
  isErrorCode,
  placeExpired,
  placeUnknown,
  REFUSALS,
  refusalError,
  WHILE_WAITING,
  type ActivitySnapshot,
} from '../contract/index.js';
import type { EdgeEnv } from './context.js';
import type { EntryAnswer, ShardFigures } from './durable/admission.js';
import { admissionShard } from './durable/names.js';
import { retryAfterSeconds } from './durable/token-bucket.js';
import {
  MISSED_POLLS_TO_DROP,
  OUTCOME_KEPT_MS,
  TIME_IN_LINE_BUCKETS_MS,
  type GoneReason,
  type LineLimits,
  type LineOutcome,
} from './durable/line-entries.js';
import { forwardPurchase, queued } from './forward-purchase.js';
import { admissionStub, shardRate } from './gates.js';
import { settingsOf, type EdgeSettings } from './settings.js';
import { TtlCache } from './ttl-cache.js';

export function waitingLimits(settings: EdgeSettings): Omit<LineLimits, 'ratePerSec'> {
  return {
    pollMinMs: settings.waitingPollMinMs,
    pollBudgetPerSec: settings.waitingPollBudgetPerSec,
    pollMaxMs: settings.waitingPollMaxMs,
    maxWaiting: settings.waitingLineMax,
  };
}

/** `<shard incarnation>-<sequence>`: the incarnation makes an id from before a shard restart unknown. */
const ENTRY_ID = /^([0-9a-z]{1,11})-([1-9][0-9]{0,14})$/;

export function entryIdOf(epoch: string, seq: number): string {
  return `${epoch}-${seq}`;
}

export function parseEntryId(text: string): { epoch: string; seq: number } {
  const m = ENTRY_ID.exec(text);
  if (!m) throw refusalError(REFUSALS.noSuchPlace);
  return { epoch: m[1]!, seq: Number(m[2]) };
}

export const pollUrlOf = (activityId: string, entryId: string) => `/api/activities/${activityId}/waiting/${entryId}`;

/**
 * Isolate memory of pacing: (activity, entry, user) → when the next poll is allowed. A poll before
 * that is 429 here, without a Durable Object call (the shard would say the same). Bounded.
 */
const PACING_MAX_ENTRIES = 50_000;
const nextPollAt = new TtlCache<number>(PACING_MAX_ENTRIES);

export function pacingKey(activityId: string, entryId: string, userId: string): string {
  return `${activityId}:${entryId}:${userId}`;
}

/** 429 `rate_limited` when this isolate told the entry to come back later than now. */
export function assertPaced(key: string, now: number): void {
  const at = nextPollAt.get(key, now);
  if (at !== undefined) throw tooSoon(at - now);
}

function remember(key: string, at: number): void {
  nextPollAt.set(key, at, at);
}

function tooSoon(ms: number): ContractError {
  return refusalError(REFUSALS.pollTooSoon, { retryAfter: retryAfterSeconds(ms) });
}

export async function answerPlace(
  c: Context<EdgeEnv>,
  snapshot: ActivitySnapshot,
  place: EntryAnswer,
  waitingStatus: 200 | 202,
): Promise<Response> {
  const { activityId, admissionShards } = snapshot.config;
  c.header('Cache-Control', 'no-store');
  switch (place.kind) {
    case 'waiting':
      return waitingAnswer(c, activityId, entryIdOf(place.epoch, place.seq), {
        // Exact within the user's shard; the other shards' lines are about as long (users spread by hash).
        position: place.position * admissionShards,
        etaMs: place.etaMs,
        pollAfterMs: place.pollAfterMs,
        status: waitingStatus,
      });
    case 'turn': {
      const stub = admissionStub(c.env, snapshot, place.purchase.userId);
      let outcome: LineOutcome;
      try {
        const result = await forwardPurchase(c, snapshot, place.purchase);
        // Kept purchases never come from a lottery window (the route sends those straight on).
        if (result.kind !== 'reserved') throw new Error('the origin answered an entry for a kept purchase');
        outcome = { reservationId: result.reservationId };
      } catch (err) {
        if (!(err instanceof ContractError)) throw err;
        if (FINAL_ORIGIN_ANSWERS.has(err.code)) {
          await stub.finish(place.epoch, place.seq, place.purchase.userId, { error: err.code });
          throw err;
        }
        // The origin failed for now (unavailable, not ready, shedding): the turn is kept, and the
        // buyer's next poll tries again — a hiccup does not cost a place won by waiting.
        const limits = { ratePerSec: shardRate(snapshot), ...waitingLimits(settingsOf(c.env)) };
        await stub.retryLater(place.epoch, place.seq, place.purchase.userId, limits);
        return waitingAnswer(c, activityId, entryIdOf(place.epoch, place.seq), {
          position: 0,
          etaMs: 0,
          pollAfterMs: settingsOf(c.env).waitingPollMinMs,
          status: waitingStatus,
        });
      }
      await stub.finish(place.epoch, place.seq, place.purchase.userId, outcome);
      return queued(c, outcome.reservationId, 'queued', { httpStatus: waitingStatus });
    }
    case 'done':
      if ('reservationId' in place.outcome) return queued(c, place.outcome.reservationId, 'repeat');
      throw refusal(place.outcome.error);
    case 'too_soon':
      throw tooSoon(place.retryAfterMs);
    case 'gone':
      throw placeGone(place.reason);
    case 'full':
      // Nothing was kept: the buyer clicks again later (the page says so); Retry-After is the next turn.
      throw refusalError(REFUSALS.lineFull, { retryAfter: retryAfterSeconds(place.retryAfterMs) });
    case 'admitted':
      throw new Error('an admitted purchase has no place in line');
  }
}

function waitingAnswer(
  c: Context<EdgeEnv>,
  activityId: string,
  entryId: string,
  w: { position: number; etaMs: number; pollAfterMs: number; status: 200 | 202 },
): Response {
  remember(pacingKey(activityId, entryId, c.get('userId')!), Date.now() + w.pollAfterMs);
  c.set('outcome', 'waiting');
  return c.json(
    {
      status: 'waiting' as const,
      position: w.position,
      etaSeconds: Math.round(w.etaMs / 100) / 10,
      pollUrl: pollUrlOf(activityId, entryId),
      pollAfterMs: w.pollAfterMs,
    },
    w.status,
  );
}

/** 404 `not_found` for a place no longer held, with the reason (docs/waiting-room.md "Messages"). */
export function placeGone(reason: GoneReason | undefined): ContractError {
  switch (reason?.why) {
    case 'expired':
      return refusalError(placeExpired(Math.round(reason.limitMs / 100) / 10, MISSED_POLLS_TO_DROP));
    case 'reset':
      return refusalError(REFUSALS.placeReset);
    default:
      return refusalError(placeUnknown(OUTCOME_KEPT_MS / 1000));
  }
}

/** A place's recorded refusal: what ended the wait (the sale closing while the buyer waited, or the origin at the turn). */
function refusal(code: string): ContractError {
  if (!isErrorCode(code)) return refusalError(REFUSALS.unavailable);
  return refusalError(WHILE_WAITING[code] ?? { code, message: code.replaceAll('_', ' ') });
}

/** The waiting room's figures of an activity, summed over its admission shards (one DO call each). */
export async function waitingRoomFigures(env: Env, snapshot: ActivitySnapshot) {
  const { activityId, admissionShards } = snapshot.config;
  const shards = await Promise.all(
    Array.from({ length: admissionShards }, (_, i) => admissionShard(env, activityId, i).figures()),
  );
  const sum = (pick: (f: ShardFigures) => number) => shards.reduce((n, f) => n + pick(f), 0);
  return {
    activityId,
    overflow: snapshot.config.overflow ?? 'reject',
    at: new Date().toISOString(),
    waiting: sum((f) => f.waiting),
    /** The longest shard's line, against WAITING_LINE_MAX (each shard's cap). */
    longestShard: Math.max(0, ...shards.map((f) => f.waiting)),
    lineMax: settingsOf(env).waitingLineMax,
    /** Bytes the shards' storage holds: the line's rows (waiting, turns, outcomes and reasons kept 60 s). */
    storageBytes: sum((f) => f.storageBytes),
    oldestWaitMs: Math.max(0, ...shards.map((f) => f.oldestWaitMs)),
    turnsPending: sum((f) => f.turnsPending),
    entered: sum((f) => f.entered),
    admitted: sum((f) => f.admitted),
    dropped: sum((f) => f.dropped),
    closed: sum((f) => f.closed),
    retried: sum((f) => f.retried),
    refusedFull: sum((f) => f.refusedFull),
    timeInLine: {
      bucketsMs: [...TIME_IN_LINE_BUCKETS_MS, null],
      cumulativeCounts: TIME_IN_LINE_BUCKETS_MS.map((_, i) => sum((f) => f.timeInLineBuckets[i]!)).concat(
        sum((f) => f.timeInLineBuckets[TIME_IN_LINE_BUCKETS_MS.length]!),
      ),
      sumMs: sum((f) => f.timeInLineSumMs),
    },
  };
}
