/**
 * The edge's cheap refusals, in the order docs/design.md §4 runs them after the ticket: sale window and
 * switches (from the cached snapshot), then who may buy (eligibility by a JWT claim), then the
 * per-user gate (which also holds the deny list, docs/design.md §10), then admission to the origin.
 */
import {
  isEligible,
  isShadowToken,
  publicState,
  REFUSALS,
  shadowMismatch,
  type ActivitySnapshot,
  type ContractError,
} from '../contract/index.js';
import type { EntryAnswer } from './durable/admission.js';
import { admissionShard as admissionObject, admissionShardName, userGate } from './durable/names.js';
import { retryAfterSeconds } from './durable/token-bucket.js';
import type { KeptPurchase } from './durable/line-entries.js';
import { refuse } from './refusal.js';
import { TtlCache } from './ttl-cache.js';

/** Refuses unless the sale is open right now: 425 too_early, 410 ended, 503 paused, 409 sold_out. */
export function assertOpen(snapshot: ActivitySnapshot, now: number): void {
  switch (publicState(snapshot, now)) {
    case 'open':
      return;
    case 'upcoming': {
      const wait = Date.parse(snapshot.config.startsAt) - now;
      throw refuse(REFUSALS.tooEarly, retryAfterSeconds(wait));
    }
    case 'ended':
      throw refuse(REFUSALS.ended);
    case 'paused':
      throw refuse(REFUSALS.paused);
    case 'sold_out':
      throw refuse(REFUSALS.soldOut);
  }
}

/**
 * 403 `not_eligible` when the activity is members-only (`eligibility`) and the user's JWT does not
 * carry the claim with one of the values. The claim may be a string or an array of strings.
 */
export function assertEligible(snapshot: ActivitySnapshot, claims: Record<string, unknown> | undefined): void {
  if (isEligible(snapshot.config.eligibility, claims)) return;
  throw refuse(REFUSALS.notEligible);
}

/**
 * 403 `shadow_mismatch` when the token's kind does not match the sale's (contract/shadow.ts): a real
 * token on a shadow (rehearsal) sale, or a shadow token on a real sale.
 */
export function assertShadowMatch(snapshot: ActivitySnapshot, claims: Record<string, unknown> | undefined): void {
  const mismatch = shadowMismatch(snapshot.config.shadow === true, isShadowToken(claims));
  if (mismatch) throw refuse(mismatch);
}

/** FNV-1a: a stable, cheap spread of user ids over shards. */
export function shardOf(userId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < userId.length; i++) {
    h ^= userId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/**
 * Isolate memory of refusals: (scope, user) → until when its UserGateDO said no token is left. Two
 * answers of the gate fill it: a refusal (retry after N ms), and an admission that emptied the
 * bucket (the answer says for how long it stays empty). Until then this isolate refuses the key
 * itself — exact, because only the DO hands out tokens and nothing but a rate change can make that
 * time earlier; it counts from before the call, so it ends no later than the DO's own — so a
 * buyer's repeat click after a purchase, or a bot hammering one user, costs no DO call. An entry
 * remembers the rate it was set at: after a live change of `userRatePerSec` (docs/design.md §10) it no
 * longer counts and the DO is asked. Bounded; expired entries are pruned when it fills.
 */
const REFUSED_MAX_ENTRIES = 50_000;
const refusedUntil = new TtlCache<{ until: number; ratePerSec: number }>(REFUSED_MAX_ENTRIES);

/** 429 `rate_limited` when this isolate remembers the gate's refusal of `key` at this rate. */
function assertNotRefused(key: string, ratePerSec: number, now: number): void {
  const refused = refusedUntil.get(key, now);
  if (refused === undefined) return;
  if (refused.ratePerSec === ratePerSec) throw rateLimited(refused.until - now);
  refusedUntil.delete(key);
}

/**
 * The remembered half of `admitUser`, with no call: 429 when this isolate already holds the gate's
 * refusal of (scope, user). A route runs it right after the JWT, before the ticket crypto (docs/design.md
 * §10: refusals about the user come after the JWT), so a repeat click of a user who just bought
 * costs a map lookup. Without a remembered refusal it does nothing; `admitUser` decides later.
 */
export function assertNotRefusedEarly(scope: string, userId: string, ratePerSec: number, now = Date.now()): void {
  assertNotRefused(`${scope}:${userId}`, ratePerSec, now);
}

function rateLimited(retryAfterMs: number): ContractError {
  return refuse(REFUSALS.rateLimited, retryAfterSeconds(retryAfterMs));
}

/**
 * 429 `rate_limited` unless this user still has a token for `scope` (e.g. `purchase:<activity>`,
 * `poll`) in their UserGateDO shard. The bucket and the refusal memory are keyed by scope AND user,
 * always: nothing one user does can use up or refuse another user's requests.
 * With `deny: true` (tickets and purchases) the same shard call answers 403 `denied` for a user on
 * the deny list, before any token is taken: the deny list costs no call of its own.
 */
export async function admitUser(
  env: Env,
  opts: {
    /** UserGateDO shards (EdgeSettings.userGateShards). */
    shards: number;
    userId: string;
    scope: string;
    ratePerSec: number;
    now?: number;
    /** Also refuse a user on the deny list (kept in the same gate shard). */
    deny?: boolean;
  },
): Promise<void> {
  const { shards, userId, scope, ratePerSec, now = Date.now() } = opts;
  const key = `${scope}:${userId}`;
  assertNotRefused(key, ratePerSec, now);
  const gate = userGate(env, shardOf(userId, shards));
  const answer = await gate.admit(key, ratePerSec, opts.deny ? userId : undefined);
  if (answer.ok) {
    if (answer.emptyForMs > 0)
      refusedUntil.set(key, { until: now + answer.emptyForMs, ratePerSec }, now + answer.emptyForMs, now);
    return;
  }
  if ('denied' in answer) throw refuse(REFUSALS.denied);
  const until = now + answer.retryAfterMs;
  refusedUntil.set(key, { until, ratePerSec }, until, now);
  throw rateLimited(answer.retryAfterMs);
}

/** Reservation status polls one user may make per second, all reservations together. */
export const POLL_RATE_PER_SEC = 1;

/**
 * The one rule for polls (reservations, lottery entries, waiting places): 429 `rate_limited` unless
 * this user has a poll token left in their UserGateDO shard. The bucket is the user's over every id
 * they name in that scope, so made-up ids cannot multiply what polls cost behind the edge: one bot
 * is one user's polls. A refusal is remembered in the isolate, so a bot's flood costs map lookups.
 *   - `reservation`: POLL_RATE_PER_SEC over all reservations (scope `poll`);
 *   - `waiting`: per activity, at the rate a buyer polling as told never exceeds (1 per
 *     WAITING_POLL_MIN_MS — pollAfterMs is never shorter), scope `waiting-poll:<activity>`.
 */
export function admitPoll(
  env: Env,
  settings: { userGateShards: number; waitingPollMinMs: number },
  userId: string,
  poll: { kind: 'reservation' } | { kind: 'waiting'; activityId: string },
): Promise<void> {
  const shards = settings.userGateShards;
  if (poll.kind === 'reservation')
    return admitUser(env, { shards, userId, scope: 'poll', ratePerSec: POLL_RATE_PER_SEC });
  return admitUser(env, {
    shards,
    userId,
    scope: `waiting-poll:${poll.activityId}`,
    ratePerSec: waitingPollRate(settings.waitingPollMinMs),
  });
}

/** Polls per second a waiting buyer makes at most when polling as told: pollAfterMs ≥ WAITING_POLL_MIN_MS. */
export function waitingPollRate(pollMinMs: number): number {
  return 1000 / pollMinMs;
}

/**
 * Admission leases (docs/design.md §4, the way Cloudflare Waiting Room hands slot allocations to Workers):
 * an isolate takes a small batch of tokens from its AdmissionDO shard and spends them from memory,
 * instead of calling the shard for every purchase. A lease lives ADMISSION_LEASE_TTL_MS; unspent
 * tokens then lapse, so leasing can only ever admit less than the shard's rate, never more. The
 * batch size follows this isolate's own pace (what it spent in the last lease, capped), so a quiet
 * isolate leases one token at a time and wastes nothing.
 */
export const ADMISSION_LEASE_TTL_MS = 250;
export const ADMISSION_LEASE_MAX = 16;

interface Lease {
  tokens: number;
  expiresAt: number;
  /** Tokens this isolate spent for this shard in the current window. */
  used: number;
  /** ... and in the previous one: what the next lease asks for. */
  previousUsed: number;
  /** Queue mode: the shard said a line exists; tokens granted earlier and arriving late lapse. */
  lined: boolean;
}

/**
 * Shard name → this isolate's lease window. An entry is kept one window past its own, so the next
 * window can read the pace of the last one; a shard unused for longer starts again at one token.
 */
const LEASES_MAX_ENTRIES = 10_000;
const leases = new TtlCache<Lease>(LEASES_MAX_ENTRIES);

/** This isolate's lease window for a shard (a new one when the last expired: its unspent tokens lapse). */
function leaseFor(shardName: string, now: number): Lease {
  let lease = leases.get(shardName, now);
  if (!lease || lease.expiresAt <= now) {
    lease = {
      tokens: 0,
      expiresAt: now + ADMISSION_LEASE_TTL_MS,
      used: 0,
      previousUsed: lease?.used ?? 1,
      lined: false,
    };
    leases.set(shardName, lease, lease.expiresAt + ADMISSION_LEASE_TTL_MS, now);
  }
  return lease;
}

/** How many tokens to ask the shard for: this isolate's pace in the last window, capped. */
function leaseWant(lease: Lease): number {
  return Math.min(ADMISSION_LEASE_MAX, Math.max(1, lease.previousUsed - lease.used));
}

/**
 * One granted token is this request's; the rest join this window's lease (other requests of the isolate
 * may have added theirs meanwhile: add, never overwrite). If the window ended meanwhile, they lapse.
 */
function addToLease(shardName: string, lease: Lease, granted: number): void {
  lease.used++;
  const now = Date.now();
  if (leases.get(shardName, now) === lease && lease.expiresAt > now && !lease.lined) lease.tokens += granted - 1;
}

function admissionShard(
  snapshot: ActivitySnapshot,
  userId: string,
): { activityId: string; index: number; name: string; ratePerSec: number } {
  const { activityId, admissionShards, admissionRatePerSec } = snapshot.config;
  const index = shardOf(userId, admissionShards);
  return {
    activityId,
    index,
    name: admissionShardName(activityId, index),
    ratePerSec: admissionRatePerSec / admissionShards,
  };
}

/** 503 `busy` unless a token of this user's AdmissionDO shard of the activity is available. */
export async function admitToOrigin(
  env: Env,
  snapshot: ActivitySnapshot,
  userId: string,
  now = Date.now(),
): Promise<void> {
  const shard = admissionShard(snapshot, userId);
  const lease = leaseFor(shard.name, now);
  if (lease.tokens > 0) {
    lease.tokens--;
    lease.used++;
    return;
  }
  const grant = await admissionObject(env, shard.activityId, shard.index).take(leaseWant(lease), shard.ratePerSec);
  if (grant.granted < 1) {
    throw refuse(REFUSALS.admissionBusy, retryAfterSeconds(grant.retryAfterMs));
  }
  addToLease(shard.name, lease, grant.granted);
}

/**
 * `overflow: "queue"` (docs/design.md §10): a token from the lease, else the shard's answer — tokens while
 * nobody waits, else this user's place in line (the shard keeps the purchase). Once the shard says a
 * line exists, this isolate drops its leased tokens, so its newcomers queue behind the line too.
 */
export async function enterLine(
  env: Env,
  snapshot: ActivitySnapshot,
  purchase: KeptPurchase,
  limits: { pollMinMs: number; pollBudgetPerSec: number },
  now = Date.now(),
): Promise<EntryAnswer | { kind: 'admitted' }> {
  const shard = admissionShard(snapshot, purchase.userId);
  const lease = leaseFor(shard.name, now);
  if (lease.tokens > 0) {
    lease.tokens--;
    lease.used++;
    return { kind: 'admitted' };
  }
  const answer = await admissionObject(env, shard.activityId, shard.index).enter(purchase, leaseWant(lease), {
    ratePerSec: shard.ratePerSec,
    ...limits,
  });
  if (answer.kind === 'admitted') addToLease(shard.name, lease, answer.granted);
  else if (answer.kind === 'waiting' || answer.kind === 'full') {
    // Tokens of this window were granted before the line formed: spending them now on newcomers
    // would put those ahead of the buyers already waiting (or let them past a full line). They
    // lapse, as unspent leases do.
    lease.tokens = 0;
    lease.lined = true;
  }
  return answer;
}

/** The AdmissionDO shard that holds this user's waiting entry. */
export function admissionStub(env: Env, snapshot: ActivitySnapshot, userId: string) {
  const shard = admissionShard(snapshot, userId);
  return admissionObject(env, shard.activityId, shard.index);
}

/** A shard's rate, for the line's ETAs and pacing. */
export function shardRate(snapshot: ActivitySnapshot): number {
  return snapshot.config.admissionRatePerSec / snapshot.config.admissionShards;
}
