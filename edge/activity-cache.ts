/**
 * Reading an activity at scale (DESIGN §4): isolate memory (ACTIVITY_CACHE_TTL_MS) → the colo's
 * Cache API (COLO_CACHE_TTL_MS) → ActivityDO. Thousands of isolates must not each poll one DO (soft
 * limit ~1,000 req/s): per colo, the DO sees about one read per COLO_CACHE_TTL_MS per activity.
 * The two TTLs add up to < 1 s, so an admin change is in force everywhere within 1 s; a push from
 * the origin refreshes the DO, the colo entry and the receiving isolate at once. Misses are cached
 * too.
 */
import { ContractError, type ActivitySnapshot } from '../contract/index.js';
import { assertLive } from './live-activities.js';
import { originFailure } from './origin.js';
import { settingsOf } from './settings.js';
import { TtlCache } from './ttl-cache.js';

/** Stated TTL of the isolate cache. */
export const ACTIVITY_CACHE_TTL_MS = 300;
/** Stated TTL of the colo (Cache API) entry; with the isolate TTL, < 1 s in all. */
export const COLO_CACHE_TTL_MS = 500;
const MAX_ENTRIES = 10_000;

/** Activity id → its snapshot, or null for an activity the origin does not know (misses are cached too). */
const entries = new TtlCache<ActivitySnapshot | null>(MAX_ENTRIES);
// No sharing of in-flight reads between requests: a Worker request must not await I/O started by
// another request (workerd refuses it). The ActivityDO already turns concurrent misses into one
// origin fetch; here a few concurrent reads at expiry are cheap.

export function activityStub(env: Env, activityId: string) {
  return env.ACTIVITY.get(env.ACTIVITY.idFromName(activityId));
}

/**
 * The snapshot this isolate holds right now, without any I/O (null when it holds none or an expired
 * one): lets a doomed click be refused on the public state before the JWT and ticket (DESIGN §10).
 */
export function peekActivity(activityId: string, now = Date.now()): ActivitySnapshot | null {
  return entries.get(activityId, now) ?? null;
}

/** Activities this isolate is refreshing after a request's answer: a flag per id (never a shared promise). */
const refreshing = new TtlCache<true>(MAX_ENTRIES);

/**
 * For a request that found no snapshot in isolate memory and was refused before it loaded one (no
 * JWT, a bad ticket): load it after the answer (`waitUntil`), so the doomed clicks that follow are
 * answered on the public state before any crypto (DESIGN §10). At most one such load per activity
 * per ACTIVITY_CACHE_TTL_MS in this isolate; it reads the colo cache or the ActivityDO like any
 * other miss (never the origin while the DO holds the snapshot), and a failure only means a later
 * miss tries again. Staleness is the cache's own: each entry still lives ACTIVITY_CACHE_TTL_MS.
 */
export function refreshActivityLater(
  env: Env,
  ctx: Pick<ExecutionContext, 'waitUntil'>,
  activityId: string,
  traceId: string,
): void {
  const now = Date.now();
  if (refreshing.get(activityId, now) !== undefined) return;
  refreshing.set(activityId, true, now + ACTIVITY_CACHE_TTL_MS, now);
  ctx.waitUntil(loadActivity(env, activityId, traceId).then(noop, noop));
}

const noop = () => {};

/**
 * The activity's snapshot; 404 `not_found` when the origin has not listed it (no origin call, no
 * ActivityDO) or does not know it, 503 when unreachable.
 */
export async function loadActivity(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot> {
  const now = Date.now();
  let snapshot = entries.get(activityId, now);
  if (snapshot === undefined) {
    await assertLive(env, activityId, settingsOf(env).liveListTtlMs, now);
    const colo = await readColo(activityId, now);
    snapshot = colo !== undefined ? colo : await readFromDurableObject(env, activityId, traceId);
    remember(activityId, snapshot, now);
  }
  if (!snapshot) throw new ContractError('not_found', `activity ${activityId} not found`);
  return snapshot;
}

async function readFromDurableObject(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot | null> {
  const read = await activityStub(env, activityId).read(activityId, traceId);
  if (read.kind === 'unavailable') throw originFailure(traceId, read.message);
  const snapshot = read.kind === 'found' ? read.snapshot : null;
  await writeColo(activityId, snapshot);
  return snapshot;
}

/** Puts a snapshot this isolate just learned (a push, or its own sold-out answer) into both caches. */
export async function rememberActivity(activityId: string, snapshot: ActivitySnapshot | null): Promise<void> {
  remember(activityId, snapshot, Date.now());
  await writeColo(activityId, snapshot);
}

function remember(activityId: string, snapshot: ActivitySnapshot | null, now: number): void {
  entries.set(activityId, snapshot, now + ACTIVITY_CACHE_TTL_MS, now);
}

// The colo cache holds `{snapshot, storedAt}`; freshness is ours (the Cache API counts in seconds).
const coloKey = (activityId: string) => `https://activity-cache.internal/${activityId}`;

async function readColo(activityId: string, now: number): Promise<ActivitySnapshot | null | undefined> {
  try {
    const res = await caches.default.match(coloKey(activityId));
    if (!res) return undefined;
    const { snapshot, storedAt } = (await res.json()) as { snapshot: ActivitySnapshot | null; storedAt: number };
    return now - storedAt <= COLO_CACHE_TTL_MS ? snapshot : undefined;
  } catch {
    return undefined; // a cache problem only costs a DO read
  }
}

async function writeColo(activityId: string, snapshot: ActivitySnapshot | null): Promise<void> {
  try {
    const body = JSON.stringify({ snapshot, storedAt: Date.now() });
    await caches.default.put(coloKey(activityId), new Response(body, { headers: { 'Cache-Control': 'max-age=2' } }));
  } catch {
    /* best effort */
  }
}
