/**
 * Edge internal API, called by the origin (docs/design.md §9, §10), signed like edge→origin calls:
 * - `PUT /internal/activities/:id` with a full ActivitySnapshot: upserts the ActivityDO, the colo
 *   cache and this isolate's cache, and puts the id on the live list; a push older than the snapshot
 *   held (lower version, or the same version signed no later) changes nothing;
 * - `PUT /internal/activities` `{"activityIds": [...]}`: the origin's full list of live activities
 *   (replaces the stored one); ids not on it are answered 404 without an origin call;
 * - `PUT /internal/deny` `{"users": [{"userId", "denied", "revision"}]}`: deny-list changes, handed
 *   to each user's UserGateDO shard (docs/design.md §10), which ignores any older than the revision it holds.
 * - `GET /internal/activities/:id/waiting-room`: the waiting room's figures, all shards summed.
 * - `GET /internal/figures`: the edge's figures over all isolates (EdgeFiguresDO) and the waiting
 *   line of each live queueing sale, read by the origin when Prometheus scrapes it.
 * The body limit (413) runs before the signature check (app.ts).
 */
import { Hono } from 'hono';
import {
  ContractError,
  EDGE_FIGURES_PATH,
  EDGE_SIGNATURE_HEADER,
  type EdgeFigures,
  EDGE_TIMESTAMP_HEADER,
  activitySnapshotSchema,
  verifyEdgeRequest,
} from '../../contract/index.js';
import { denyPushSchema, liveListSchema } from '../../contract/edge-push.js';
import { loadActivity, rememberActivity } from '../activity-cache.js';
import type { EdgeContext, EdgeEnv } from '../context.js';
import { activityObject, userGate } from '../durable/names.js';
import type { DenyChange } from '../durable/user-gate.js';
import { readTotals } from '../figures.js';
import { addLive, liveActivityIds, replaceLive } from '../live-activities.js';
import { shardOf } from '../gates.js';
import { settingsOf } from '../settings.js';
import { waitingRoomFigures } from '../waiting-room.js';
import { activityIdParam } from './activities.js';

/** Waiting lines read per figures call: a handful of sales are live at once; this bounds a mistake. */
const MAX_WAITING_LINES_READ = 50;

/** The origin's signature over the body the body limit read; 401 otherwise. Returns the body. */
async function assertSigned(c: EdgeContext): Promise<string> {
  const url = new URL(c.req.url);
  const body = c.get('body');
  const failure = await verifyEdgeRequest(settingsOf(c.env).edgeOriginSecret, {
    method: c.req.method,
    pathWithQuery: url.pathname + url.search,
    body,
    timestamp: c.req.header(EDGE_TIMESTAMP_HEADER),
    signature: c.req.header(EDGE_SIGNATURE_HEADER),
  });
  // The reason (missing / stale / bad_signature) is the caller's own business, and tells an
  // operator about clock skew or a secret mismatch; it reveals nothing of ours.
  if (failure) throw new ContractError('unauthenticated', `origin signature ${failure.replace('_', ' ')}`);
  return body;
}

async function signedBody(c: EdgeContext): Promise<unknown> {
  const body = await assertSigned(c);
  try {
    return JSON.parse(body);
  } catch {
    throw new ContractError('bad_request', 'body must be JSON');
  }
}

export const internalRoutes = new Hono<EdgeEnv>()
  .put('/activities', async (c) => {
    const parsed = liveListSchema.safeParse(await signedBody(c));
    if (!parsed.success) throw new ContractError('bad_request', parsed.error.issues[0]?.message ?? 'invalid list');
    const count = await replaceLive(c.env, parsed.data.activityIds);
    return c.json({ live: count });
  })
  .put('/deny', async (c) => {
    const parsed = denyPushSchema.safeParse(await signedBody(c));
    if (!parsed.success) throw new ContractError('bad_request', parsed.error.issues[0]?.message ?? 'invalid deny list');
    const shards = settingsOf(c.env).userGateShards;
    const byShard = new Map<number, DenyChange[]>();
    for (const entry of parsed.data.users) {
      const shard = shardOf(entry.userId, shards);
      byShard.set(shard, [...(byShard.get(shard) ?? []), entry]);
    }
    const answers = await Promise.all(
      [...byShard].map(([shard, entries]) => userGate(c.env, shard).setDenied(entries)),
    );
    // `ignored`: entries older than what the edge holds (a replay, a late push); the edge keeps the newer.
    return c.json({
      applied: answers.reduce((n, a) => n + a.applied, 0),
      ignored: answers.reduce((n, a) => n + a.ignored, 0),
    });
  })
  .put('/activities/:id', async (c) => {
    const json = await signedBody(c);
    const activityId = activityIdParam(c);
    const parsed = activitySnapshotSchema.safeParse(json);
    if (!parsed.success) throw new ContractError('bad_request', parsed.error.issues[0]?.message ?? 'invalid snapshot');
    if (parsed.data.config.activityId !== activityId) {
      throw new ContractError('bad_request', 'config.activityId does not match the path');
    }
    // The signature's timestamp (verified above, within EDGE_SIGNATURE_MAX_AGE_MS) orders pushes of one version.
    const signedAt = Number(c.req.header(EDGE_TIMESTAMP_HEADER));
    const { snapshot: stored, applied } = await activityObject(c.env, activityId).upsert(parsed.data, signedAt);
    await Promise.all([rememberActivity(activityId, stored), addLive(c.env, activityId)]);
    // `applied: false`: older than the snapshot the edge holds (a replay, pushes crossing); it keeps the newer.
    return c.json({
      activityId,
      version: stored.config.version,
      state: stored.state,
      soldOut: stored.soldOut,
      applied,
    });
  })
  // The waiting room's figures over all admission shards of an activity (operators, the rehearsal).
  .get('/activities/:id/waiting-room', async (c) => {
    await assertSigned(c);
    const activityId = activityIdParam(c);
    const snapshot = await loadActivity(c.env, activityId, c.get('traceId'));
    c.header('Cache-Control', 'no-store');
    return c.json(await waitingRoomFigures(c.env, snapshot));
  })
  // The edge's figures for the origin's /metrics (docs/watching-a-sale.md).
  .get(EDGE_FIGURES_PATH.slice('/internal'.length), async (c) => {
    await assertSigned(c);
    const traceId = c.get('traceId');
    const ids = (await liveActivityIds(c.env)).slice(0, MAX_WAITING_LINES_READ);
    const snapshots = await Promise.all(ids.map((id) => loadActivity(c.env, id, traceId).catch(() => null)));
    const lines = await Promise.all(
      snapshots
        .filter((s) => s?.config.overflow === 'queue')
        .map(async (s) => [s!.config.activityId, await waitingRoomFigures(c.env, s!)] as const),
    );
    const per = (pick: (f: (typeof lines)[number][1]) => number) =>
      Object.fromEntries(lines.map(([id, f]) => [id, pick(f)]));
    const figures: EdgeFigures = {
      ...(await readTotals(c.env)),
      waitingLine: per((f) => f.waiting),
      waitingLineLongestShard: per((f) => f.longestShard),
      waitingLineBytes: per((f) => f.storageBytes),
    };
    c.header('Cache-Control', 'no-store');
    return c.json(figures);
  });
