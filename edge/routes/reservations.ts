/**
 * `GET /api/reservations/:reservationId` (docs/design.md §3): the owner polls; the origin answers. Polls are
 * rate-limited per user — over all reservation ids, so made-up ids cannot multiply a user's origin
 * calls (POLL_RATE_PER_SEC, 429 + Retry-After) — and a reservation of an activity the edge was not
 * told about is 404 without an origin call, and a token of the wrong kind for the sale (a real
 * token on a shadow sale's reservation, a shadow one on a real sale's) is 403 `shadow_mismatch`. So 100k holders polling through a settlement backlog
 * cannot turn into more than 100k status reads a second at the origin, and one bot into no more
 * than one.
 */
import { Hono, type Context } from 'hono';
import {
  ContractError,
  activityOfReservation,
  isShadowToken,
  parseEntryId,
  type EntryPollBody,
} from '../../contract/index.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import { loadActivity } from '../activity-cache.js';
import { admitPoll, assertShadowMatch } from '../gates.js';
import { assertLive } from '../live-activities.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';

export const reservationRoutes = new Hono<EdgeEnv>().get('/:reservationId', (c) =>
  poll(c, c.req.param('reservationId')),
);

/**
 * `GET /api/activities/:id/entries/:entryId` — a lottery entry's poll (docs/design.md §10) under its activity,
 * the shape the sale page accepts; the same answer as `/api/reservations/<entryId>`.
 */
export const entryRoutes = new Hono<EdgeEnv>().get('/:id/entries/:entryId', (c) => {
  const entry = parseEntryId(c.req.param('entryId'));
  if (!entry || entry.activityId !== c.req.param('id')) throw new ContractError('not_found', 'no such entry');
  return poll(c, c.req.param('entryId'));
});

async function poll(c: Context<EdgeEnv>, reservationId: string) {
  // A lottery entry id (`<activity>-entry-<user>`) polls here too: drawing, then the reservation or lost.
  const activityId = activityOfReservation(reservationId) ?? parseEntryId(reservationId)?.activityId;
  if (!activityId) throw new ContractError('not_found', 'no such reservation');
  c.set('activityId', activityId);
  const userId = await requireUser(c);
  const settings = settingsOf(c.env);
  await assertLive(c.env, activityId, settings.liveListTtlMs);
  // Shadow traffic only on a shadow sale, and only shadow traffic there (contract/shadow.ts).
  assertShadowMatch(await loadActivity(c.env, activityId, c.get('traceId')), c.get('claims'));
  await admitPoll(c.env, settings, userId, { kind: 'reservation' });
  const answer = await callOrigin<EntryPollBody>(settings, {
    method: 'GET',
    path: `/internal/reservations/${reservationId}?userId=${userId}`,
    traceId: c.get('traceId'),
    shadow: isShadowToken(c.get('claims')),
  });
  c.header('Cache-Control', 'no-store');
  return c.json(answer.body);
}
