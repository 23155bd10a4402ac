/**
 * `GET /api/activities/:id/waiting/:entryId` (docs/design.md §10 `overflow: "queue"`): a waiting buyer's poll.
 * Cheapest refusals first, none of them calling the admission shard: a malformed entry id (404,
 * before anything else), the user's JWT, a poll sooner than this isolate told the entry (429 from
 * isolate memory), an activity without a waiting room (404, from the cached snapshot), the token's
 * kind against the sale's (403 `shadow_mismatch`, contract/shadow.ts), then the per-user poll limit
 * (edge/gates.ts `admitPoll`: one UserGateDO call, refusals remembered in the isolate) — so polls
 * with made-up ids cost at most one user's poll rate. A sale that is sold out, paused or ended
 * resolves the whole line on the first poll that sees it: every waiting entry answers that refusal,
 * without an origin call.
 */
import { Hono } from 'hono';
import { ContractError, publicState } from '../../contract/index.js';
import { loadActivity } from '../activity-cache.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import { admissionStub, admitPoll, assertShadowMatch, shardRate } from '../gates.js';
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
  // `overflow` is set when the sale is created and never changes: no place in line can exist here.
  if (snapshot.config.overflow !== 'queue') throw new ContractError('not_found', 'this sale has no waiting room');
  // Shadow traffic only on a shadow sale, and only shadow traffic there (contract/shadow.ts).
  assertShadowMatch(snapshot, c.get('claims'));
  const settings = settingsOf(c.env);
  await admitPoll(c.env, settings, userId, { kind: 'waiting', activityId });
  const state = publicState(snapshot, Date.now());
  const closeWith = CLOSING_STATES.has(state) ? state : undefined;
  const limits = { ratePerSec: shardRate(snapshot), ...waitingLimits(settings) };
  const place = await admissionStub(c.env, snapshot, userId).poll(epoch, seq, userId, limits, closeWith);
  return answerPlace(c, snapshot, place, 200);
});
