/**
 * Edge internal API, called by the origin (DESIGN §9): `PUT /internal/activities/:id` with a full
 * ActivitySnapshot, signed like edge→origin calls. Upserts the ActivityDO, the colo cache and this
 * isolate's cache.
 */
import { Hono } from 'hono';
import {
  ContractError,
  EDGE_SIGNATURE_HEADER,
  EDGE_TIMESTAMP_HEADER,
  activitySnapshotSchema,
  verifyEdgeRequest,
} from '../../contract/index.js';
import { activityStub, rememberActivity } from '../activity-cache.js';
import type { EdgeEnv } from '../context.js';
import { settingsOf } from '../settings.js';
import { activityIdParam } from './activities.js';

const MAX_SNAPSHOT_BYTES = 16 * 1024;

export const internalRoutes = new Hono<EdgeEnv>().put('/activities/:id', async (c) => {
  const url = new URL(c.req.url);
  const body = await c.req.text();
  const failure = await verifyEdgeRequest(settingsOf(c.env).edgeOriginSecret, {
    method: c.req.method,
    pathWithQuery: url.pathname + url.search,
    body,
    timestamp: c.req.header(EDGE_TIMESTAMP_HEADER),
    signature: c.req.header(EDGE_SIGNATURE_HEADER),
  });
  if (failure) throw new ContractError('unauthenticated', `origin signature ${failure.replace('_', ' ')}`);

  const activityId = activityIdParam(c);
  if (body.length > MAX_SNAPSHOT_BYTES) throw new ContractError('bad_request', 'snapshot too large');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ContractError('bad_request', 'body must be JSON');
  }
  const parsed = activitySnapshotSchema.safeParse(json);
  if (!parsed.success) throw new ContractError('bad_request', parsed.error.issues[0]?.message ?? 'invalid snapshot');
  if (parsed.data.config.activityId !== activityId) {
    throw new ContractError('bad_request', 'config.activityId does not match the path');
  }
  const stored = await activityStub(c.env, activityId).upsert(parsed.data);
  await rememberActivity(activityId, stored);
  return c.json({ activityId, version: stored.config.version, state: stored.state, soldOut: stored.soldOut });
});
