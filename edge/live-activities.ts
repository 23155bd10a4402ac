/**
 * Is this an activity the origin told the edge about? (docs/design.md §10.) The isolate keeps a copy of
 * LiveActivitiesDO's list and re-reads it at most every LIVE_LIST_TTL_MS, so an unknown id costs a
 * Set lookup: no origin call, no ActivityDO. A push received by this isolate adds its id at once;
 * other isolates see a new activity within the TTL.
 */
import { liveActivities } from './durable/names.js';
import { refusal } from './refusal.js';

let live: { ids: Set<string>; expiresAt: number } | null = null;

/** 404 `not_found` unless the activity is on the origin's live list. */
export async function assertLive(env: Env, activityId: string, ttlMs: number, now = Date.now()): Promise<void> {
  if (!live || live.expiresAt <= now) {
    live = { ids: new Set(await liveActivities(env).list()), expiresAt: now + ttlMs };
  }
  if (!live.ids.has(activityId)) throw refusal('not_found', 'no such activity');
}

/** Every id on the live list (the stored one, not this isolate's copy). */
export function liveActivityIds(env: Env): Promise<string[]> {
  return liveActivities(env).list();
}

/** The origin pushed this activity: live here at once, and everywhere within the TTL. */
export async function addLive(env: Env, activityId: string): Promise<void> {
  await liveActivities(env).add(activityId);
  live?.ids.add(activityId);
}

/** The origin's full list replaces the stored one; this isolate re-reads it on its next request. */
export async function replaceLive(env: Env, ids: string[]): Promise<number> {
  const count = await liveActivities(env).replace(ids);
  live = null;
  return count;
}
