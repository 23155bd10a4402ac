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

/** 429 `rate_limited` unless `key` (scoped to one user) still has a token in its UserGateDO shard. */
export async function admitUser(
  env: Env,
  shards: number,
  userId: string,
  key: string,
  ratePerSec: number,
): Promise<void> {
  const ns = env.USER_GATE;
  const answer = await ns.get(ns.idFromName(`user-gate-${shardOf(userId, shards)}`)).admit(key, ratePerSec);
  if (!answer.ok) {
    throw new ContractError('rate_limited', 'too many requests; slow down', {
      retryAfter: retryAfterSeconds(answer.retryAfterMs),
    });
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
