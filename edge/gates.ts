/**
 * The edge's cheap refusals, in the order DESIGN §4 runs them after the ticket: sale window and
 * switches (from the cached snapshot), then the per-user gate, then admission to the origin.
 */
import { ContractError, publicState, type ActivitySnapshot } from '../contract/index.js';
import { retryAfterSeconds } from './durable/token-bucket.js';

/** Refuses unless the sale is open right now: 425 too_early, 410 ended, 503 paused, 409 sold_out. */
export function assertOpen(snapshot: ActivitySnapshot, now: number): void {
  switch (publicState(snapshot, now)) {
    case 'open':
      return;
    case 'upcoming': {
      const wait = Date.parse(snapshot.config.startsAt) - now;
      throw new ContractError('too_early', 'the sale has not started yet', { retryAfter: retryAfterSeconds(wait) });
    }
    case 'ended':
      throw new ContractError('ended', 'the sale has ended');
    case 'paused':
      throw new ContractError('paused', 'the sale is paused', { retryAfter: 5 });
    case 'sold_out':
      throw new ContractError('sold_out', 'sold out');
  }
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
 * Isolate memory of refusals: key → the time its UserGateDO said the next token comes. Until then
 * this isolate refuses the key itself — exact, because only the DO hands out tokens and nothing can
 * make that time earlier — so a bot hammering one user costs no DO call. Bounded; expired entries
 * are pruned when it fills.
 */
const refusedUntil = new Map<string, number>();
const REFUSED_MAX_ENTRIES = 50_000;

function rateLimited(retryAfterMs: number): ContractError {
  return new ContractError('rate_limited', 'too many requests; slow down', {
    retryAfter: retryAfterSeconds(retryAfterMs),
  });
}

/** 429 `rate_limited` unless `key` (scoped to one user) still has a token in its UserGateDO shard. */
export async function admitUser(
  env: Env,
  shards: number,
  userId: string,
  key: string,
  ratePerSec: number,
  now = Date.now(),
): Promise<void> {
  const until = refusedUntil.get(key);
  if (until !== undefined) {
    if (until > now) throw rateLimited(until - now);
    refusedUntil.delete(key);
  }
  const ns = env.USER_GATE;
  const answer = await ns.get(ns.idFromName(`user-gate-${shardOf(userId, shards)}`)).admit(key, ratePerSec);
  if (!answer.ok) {
    if (refusedUntil.size >= REFUSED_MAX_ENTRIES) {
      for (const [k, t] of refusedUntil) if (t <= now) refusedUntil.delete(k);
      if (refusedUntil.size >= REFUSED_MAX_ENTRIES) refusedUntil.clear();
    }
    refusedUntil.set(key, now + answer.retryAfterMs);
    throw rateLimited(answer.retryAfterMs);
  }
}

/** 503 `busy` unless this user's AdmissionDO shard of the activity grants a token. */
export async function admitToOrigin(env: Env, snapshot: ActivitySnapshot, userId: string): Promise<void> {
  const { activityId, admissionShards, admissionRatePerSec } = snapshot.config;
  const ns = env.ADMISSION;
  const shard = ns.get(ns.idFromName(`${activityId}:${shardOf(userId, admissionShards)}`));
  const grant = await shard.take(1, admissionRatePerSec / admissionShards);
  if (grant.granted < 1) {
    throw new ContractError('busy', 'too many buyers right now; try again shortly', {
      retryAfter: retryAfterSeconds(grant.retryAfterMs),
    });
  }
}
