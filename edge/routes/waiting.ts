/**
 * `GET /api/activities/:id/waiting/:entryId` (DESIGN §10 `overflow: "queue"`): a waiting buyer's poll.
 * Paced by the entry itself (sooner than the pollAfterMs it was given → 429, answered from isolate
 * memory when this isolate gave it), so no user gate call. A sale that is sold out, paused or ended
 * resolves the whole line on the first poll that sees it: every waiting entry answers that refusal,
 * without an origin call.
 */
import { Hono } from 'hono';
import { publicState } from '../../contract/index.js';
import { loadActivity } from '../activity-cache.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import { admissionStub, shardRate } from '../gates.js';
import { settingsOf } from '../settings.js';
import { answerPlace, assertPaced, pacingKey, parseEntryId, waitingLimits } from '../waiting-room.js';
import { activityIdParam } from './activities.js';

const CLOSING_STATES: ReadonlySet<string> = new Set(['sold_out', 'paused', 'ended']);

export const waitingRoutes = new Hono<EdgeEnv>().get('/:id/waiting/:entryId', async (c) => {
  const activityId = activityIdParam(c);
  const entryId = c.req.param('entryId');
  const { epoch, seq } = parseEntryId(entryId);
  const userId = await requireUser(c);
  assertPaced(pacingKey(activityId, entryId, userId), Date.now());
  const snapshot = await loadActivity(c.env, activityId, c.get('traceId'));
  const state = publicState(snapshot, Date.now());
  const closeWith = CLOSING_STATES.has(state) ? state : undefined;
  const limits = { ratePerSec: shardRate(snapshot), ...waitingLimits(settingsOf(c.env)) };
  const place = await admissionStub(c.env, snapshot, userId).poll(epoch, seq, userId, limits, closeWith);
  return answerPlace(c, snapshot, place, 200);
});
