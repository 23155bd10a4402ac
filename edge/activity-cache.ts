/**
 * Reading an activity at scale (docs/design.md §4): isolate memory (ACTIVITY_CACHE_TTL_MS) → the colo's
 * Cache API (COLO_CACHE_TTL_MS) → ActivityDO. Thousands of isolates must not each poll one DO (soft
 * limit ~1,000 req/s): per colo, the DO sees about one read per COLO_CACHE_TTL_MS per activity.
 * The two TTLs add up to < 1 s, so an admin change is in force everywhere within 1 s; a push from
 * the origin refreshes the DO, the colo entry and the receiving isolate at once. Misses are cached
 * too.
 */
import { type ActivitySnapshot } from '../contract/index.js';
import { activityObject } from './durable/names.js';
import { assertLive } from './live-activities.js';
import { originFailure } from './origin.js';
import { refusal } from './refusal.js';
import { settingsOf } from './settings.js';
import { TtlCache } from './ttl-cache.js';

/** Stated TTL of the isolate cache. */
export const ACTIVITY_CACHE_TTL_MS = 300;
/** Stated TTL of the colo (Cache API) entry; with the isolate TTL, < 1 s in all. */
export const COLO_CACHE_TTL_MS = 500;
const MAX_ENTRIES = 10_000;

/**
 * A hit older than this is reloaded in the background by the request that meets it (the route
 * answers from the hit meanwhile), so steady traffic never meets an expired entry and the public
 * state keeps answering before the crypto (docs/design.md §10). The entry's age limit is unchanged.
 */
export const ACTIVITY_REFRESH_AHEAD_MS = ACTIVITY_CACHE_TTL_MS / 2;

/** Activity id → its snapshot, or null for an activity the origin does not know (misses are cached too). */
const entries = new TtlCache<{ snapshot: ActivitySnapshot | null; refreshAt: number }>(MAX_ENTRIES);
// No sharing of in-flight reads between requests: a Worker request must not await I/O started by
// another request (workerd refuses it). The ActivityDO already turns concurrent misses into one
// origin fetch; here a few concurrent reads at expiry are cheap.

/** When this isolate last learned a snapshot first-hand (a push, its own sold-out answer). */
const learnedAt = new TtlCache<number>(MAX_ENTRIES);

/** What a request gives so that a hit due for refresh is reloaded after its answer. */
export interface Refresher {
  env: Env;
  ctx: Pick<ExecutionContext, 'waitUntil'>;
  traceId: string;
}

/**
 * The snapshot this isolate holds right now, without any I/O (null when it holds none or an expired
 * one): lets a doomed click be refused on the public state before the JWT and ticket (docs/design.md §10).
 * With `refresher`, a hit older than ACTIVITY_REFRESH_AHEAD_MS is reloaded in the background.
 */
export function peekActivity(activityId: string, now = Date.now(), refresher?: Refresher): ActivitySnapshot | null {
  const entry = entries.get(activityId, now);
  if (entry === undefined) return null;
  if (refresher && now >= entry.refreshAt)
    refreshActivityLater(refresher.env, refresher.ctx, activityId, refresher.traceId);
  return entry.snapshot;
}

/** Activities this isolate is reloading after a request's answer: a flag per id (never a shared promise). */
const refreshing = new TtlCache<true>(MAX_ENTRIES);

/**
 * Reloads the activity after this request's answer (`waitUntil`): for a hit due for refresh, and
 * for a request that found no snapshot and was refused before it loaded one (no JWT, a bad
 * ticket), so the doomed clicks that follow are answered on the public state before any crypto
 * (docs/design.md §10). One such load per activity at a time in this isolate (after a failure, none for
 * ACTIVITY_CACHE_TTL_MS); it reads the colo cache or the ActivityDO like any other miss (never the
 * origin while the DO holds the snapshot), never overwrites a snapshot this isolate learned
 * first-hand meanwhile, and a failure only means a later request tries again. Staleness is the
 * caches' own: an isolate entry lives ACTIVITY_CACHE_TTL_MS, a colo entry COLO_CACHE_TTL_MS.
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
  // Done: the entry's refreshAt paces the next one. Failed: the flag's TTL does.
  ctx.waitUntil(reload(env, activityId, traceId, now).then(() => refreshing.delete(activityId), noop));
}

const noop = () => {};

/**
 * The activity's snapshot; 404 `not_found` when the origin has not listed it (no origin call, no
 * ActivityDO) or does not know it, 503 when unreachable.
 */
export async function loadActivity(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot> {
  const now = Date.now();
  const entry = entries.get(activityId, now);
  const snapshot = entry !== undefined ? entry.snapshot : await reload(env, activityId, traceId, now);
  if (!snapshot) throw refusal('not_found', `activity ${activityId} not found`);
  return snapshot;
}

/** Live list → colo → ActivityDO, into isolate memory (unless a first-hand snapshot arrived meanwhile). */
async function reload(env: Env, activityId: string, traceId: string, now: number): Promise<ActivitySnapshot | null> {
  await assertLive(env, activityId, settingsOf(env).liveListTtlMs, now);
  const colo = await readColo(activityId, now);
  const snapshot = colo !== undefined ? colo : await readFromDurableObject(env, activityId, traceId);
  if ((learnedAt.get(activityId) ?? -Infinity) < now) remember(activityId, snapshot, now);
  return snapshot;
}

async function readFromDurableObject(env: Env, activityId: string, traceId: string): Promise<ActivitySnapshot | null> {
  const read = await activityObject(env, activityId).read(activityId, traceId);
  if (read.kind === 'unavailable') throw originFailure(traceId, read.message);
  const snapshot = read.kind === 'found' ? read.snapshot : null;
  await writeColo(activityId, snapshot);
  return snapshot;
}

/** Puts a snapshot this isolate just learned (a push, or its own sold-out answer) into both caches. */
export async function rememberActivity(activityId: string, snapshot: ActivitySnapshot | null): Promise<void> {
  const now = Date.now();
  learnedAt.set(activityId, now, now + ACTIVITY_CACHE_TTL_MS + COLO_CACHE_TTL_MS, now);
  remember(activityId, snapshot, now);
  await writeColo(activityId, snapshot);
}

function remember(activityId: string, snapshot: ActivitySnapshot | null, now: number): void {
  entries.set(activityId, { snapshot, refreshAt: now + ACTIVITY_REFRESH_AHEAD_MS }, now + ACTIVITY_CACHE_TTL_MS, now);
}

// The colo cache holds `{snapshot, storedAt}`; freshness is ours (the Cache API counts in seconds).
const coloKey = (activityId: string) => `https://activity-cache.internal/${activityId}`;

async function readColo(activityId: string, now: number): Promise<ActivitySnapshot | null | undefined> {
  try {
    const res = await caches.default.match(coloKey(activityId));
    if (!res) return undefined;
    const { snapshot, storedAt } = await res.json<{ snapshot: ActivitySnapshot | null; storedAt: number }>();
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
