/**
 * The waiting room's answers (DESIGN §10 `overflow: "queue"`): what a purchase or a poll says for
 * the shard's answer about the user's entry — waiting (202 from a purchase, 200 from a poll) with
 * `{status:"waiting", position, etaSeconds, pollUrl, pollAfterMs}`; its turn (the kept purchase is
 * forwarded now and the result answered: the §3 reservation body or the refusal); its recorded
 * outcome; 429 when polled sooner than pollAfterMs; 404 when the entry is gone (dropped, unknown).
 */
import type { Context } from 'hono';
import { ContractError, isErrorCode, type ActivitySnapshot } from '../contract/index.js';
import type { EdgeEnv } from './context.js';
import type { EntryAnswer } from './durable/admission.js';
import { retryAfterSeconds } from './durable/token-bucket.js';
import type { LineOutcome } from './durable/waiting-line.js';
import { forwardPurchase, queued } from './forward-purchase.js';
import { admissionStub } from './gates.js';
import type { EdgeSettings } from './settings.js';

export function waitingLimits(settings: EdgeSettings): { pollMinMs: number; pollBudgetPerSec: number } {
  return { pollMinMs: settings.waitingPollMinMs, pollBudgetPerSec: settings.waitingPollBudgetPerSec };
}

/** `<shard incarnation>-<sequence>`: the incarnation makes an id from before a shard restart unknown. */
const ENTRY_ID = /^([0-9a-z]{1,11})-([1-9][0-9]{0,14})$/;

export function entryIdOf(epoch: string, seq: number): string {
  return `${epoch}-${seq}`;
}

export function parseEntryId(text: string): { epoch: string; seq: number } {
  const m = ENTRY_ID.exec(text);
  if (!m) throw new ContractError('not_found', 'no such place in line');
  return { epoch: m[1]!, seq: Number(m[2]) };
}

export const pollUrlOf = (activityId: string, entryId: string) => `/api/activities/${activityId}/waiting/${entryId}`;

/**
 * Isolate memory of pacing: (activity, entry, user) → when the next poll is allowed. A poll before
 * that is 429 here, without a Durable Object call (the shard would say the same). Bounded.
 */
const nextPollAt = new Map<string, number>();
const PACING_MAX_ENTRIES = 50_000;

export function pacingKey(activityId: string, entryId: string, userId: string): string {
  return `${activityId}:${entryId}:${userId}`;
}

/** 429 `rate_limited` when this isolate told the entry to come back later than now. */
export function assertPaced(key: string, now: number): void {
  const at = nextPollAt.get(key);
  if (at === undefined) return;
  if (at > now) throw tooSoon(at - now);
  nextPollAt.delete(key);
}

function remember(key: string, at: number): void {
  if (nextPollAt.size >= PACING_MAX_ENTRIES) {
    const now = Date.now();
    for (const [k, t] of nextPollAt) if (t <= now) nextPollAt.delete(k);
    if (nextPollAt.size >= PACING_MAX_ENTRIES) nextPollAt.clear();
  }
  nextPollAt.set(key, at);
}

function tooSoon(ms: number): ContractError {
  return new ContractError('rate_limited', 'polled sooner than pollAfterMs; wait before polling again', {
    retryAfter: retryAfterSeconds(ms),
  });
}

/** Refusals a kept purchase ends with; anything else (origin unavailable, …) leaves its turn for the next poll. */
const FINAL_REFUSALS: ReadonlySet<string> = new Set([
  'sold_out',
  'insufficient_stock',
  'limit_exceeded',
  'paused',
  'ended',
  'too_early',
  'bad_request',
]);

export async function answerPlace(
  c: Context<EdgeEnv>,
  snapshot: ActivitySnapshot,
  place: EntryAnswer,
  waitingStatus: 200 | 202,
): Promise<Response> {
  const { activityId, admissionShards } = snapshot.config;
  c.header('Cache-Control', 'no-store');
  switch (place.kind) {
    case 'waiting': {
      const entryId = entryIdOf(place.epoch, place.seq);
      const userId = c.get('userId')!;
      remember(pacingKey(activityId, entryId, userId), Date.now() + place.pollAfterMs);
      c.set('outcome', 'waiting');
      return c.json(
        {
          status: 'waiting' as const,
          // Exact within the user's shard; the other shards' lines are about as long (users spread by hash).
          position: place.position * admissionShards,
          etaSeconds: Math.round(place.etaMs / 100) / 10,
          pollUrl: pollUrlOf(activityId, entryId),
          pollAfterMs: place.pollAfterMs,
        },
        waitingStatus,
      );
    }
    case 'turn': {
      const stub = admissionStub(c.env, snapshot, place.purchase.userId);
      let outcome: LineOutcome;
      try {
        const { reservationId } = await forwardPurchase(c, snapshot, place.purchase);
        outcome = { reservationId };
      } catch (err) {
        if (err instanceof ContractError && FINAL_REFUSALS.has(err.code)) {
          await stub.finish(place.epoch, place.seq, place.purchase.userId, { error: err.code });
        }
        throw err;
      }
      await stub.finish(place.epoch, place.seq, place.purchase.userId, outcome);
      return queued(c, outcome.reservationId, 'queued', waitingStatus);
    }
    case 'done':
      if ('reservationId' in place.outcome) return queued(c, place.outcome.reservationId, 'repeat');
      throw refusal(place.outcome.error);
    case 'too_soon':
      throw tooSoon(place.retryAfterMs);
    case 'gone':
      throw new ContractError('not_found', 'this place in line is no longer held (not polled in time); buy again');
    case 'admitted':
      throw new Error('an admitted purchase has no place in line');
  }
}

const REFUSAL_MESSAGES: Record<string, string> = {
  sold_out: 'sold out',
  paused: 'the sale is paused',
  ended: 'the sale has ended',
};

function refusal(code: string): ContractError {
  if (!isErrorCode(code)) return new ContractError('unavailable', 'the service is unavailable; try again shortly');
  return new ContractError(code, REFUSAL_MESSAGES[code] ?? code.replaceAll('_', ' '), {
    retryAfter: code === 'paused' ? 5 : undefined,
  });
}
