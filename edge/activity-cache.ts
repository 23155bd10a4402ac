/**
 * Isolate-memory cache of activity snapshots (DESIGN §4): each isolate asks the ActivityDO at most
 * once per ACTIVITY_CACHE_TTL_MS per activity, so an admin change is in force everywhere within
 * 1 s while thousands of isolates do not poll the DO per request. Misses are cached too.
 */
import { ContractError, type ActivitySnapshot } from '../contract/index.js';

/** Stated TTL of the isolate cache; ≤ 500 ms keeps admin changes in force within 1 s. */
export const ACTIVITY_CACHE_TTL_MS = 400;
const MAX_ENTRIES = 10_000;

interface Entry {
  snapshot: ActivitySnapshot | null;
  expiresAt: number;
}

const entries = new Map<string, Entry>();
// No sharing of in-flight reads between requests: a Worker request must not await I/O started by
// another request (workerd refuses it). The ActivityDO already turns concurrent misses into one
// origin fetch; here a few concurrent DO reads at expiry are cheap.

export function activityStub(env: Env, activityId: string) {
  return env.ACTIVITY.get(env.ACTIVITY.idFromName(activityId));
}

/** The activity's snapshot; 404 `not_found` when the origin does not know it, 503 when unreachable. */
export async function loadActivity(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot> {
  const now = Date.now();
  const hit = entries.get(activityId);
  let snapshot: ActivitySnapshot | null;
  if (hit && hit.expiresAt > now) {
    snapshot = hit.snapshot;
  } else {
    snapshot = await readFromDurableObject(env, activityId, traceId);
  }
  if (!snapshot) throw new ContractError('not_found', `activity ${activityId} not found`);
  return snapshot;
}

async function readFromDurableObject(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot | null> {
  const read = await activityStub(env, activityId).read(activityId, traceId);
  if (read.kind === 'unavailable') throw new ContractError('unavailable', read.message);
  const snapshot = read.kind === 'found' ? read.snapshot : null;
  rememberActivity(activityId, snapshot);
  return snapshot;
}

/** Puts a snapshot this isolate just learned (a push, or its own sold-out answer) into the cache. */
export function rememberActivity(activityId: string, snapshot: ActivitySnapshot | null): void {
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(activityId, { snapshot, expiresAt: Date.now() + ACTIVITY_CACHE_TTL_MS });
}
