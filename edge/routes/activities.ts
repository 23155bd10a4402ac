/**
 * Public activity routes (docs/design.md §3): the activity itself, purchase tickets, and the caller's own
 * reservation in an activity.
 */
import { Hono } from 'hono';
import { ContractError, isId, isShadowToken, publicActivity, type ReservationBody } from '../../contract/index.js';
import { loadActivity, peekActivity, refreshActivityLater } from '../activity-cache.js';
import { requireUser } from '../auth.js';
import type { EdgeContext, EdgeEnv } from '../context.js';
import { CHALLENGE_HEADER, verifyChallenge } from '../bot-check.js';
import { admitUser, assertEligible, assertNotRefusedEarly, assertOpen, assertShadowMatch } from '../gates.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';
import { issueTicket } from '../ticket.js';

/** Public activity answers may be cached this long by browsers and the colo (they carry serverTime). */
const ACTIVITY_MAX_AGE_SECONDS = 1;

export function activityIdParam(c: EdgeContext): string {
  const id = c.req.param('id');
  if (!isId(id)) throw new ContractError('bad_request', 'activity id must be a decimal positive 64-bit integer');
  c.set('activityId', id);
  return id;
}

export const activityRoutes = new Hono<EdgeEnv>()
  .get('/:id', async (c) => {
    const activityId = activityIdParam(c);
    const snapshot = await loadActivity(c.env, activityId, c.get('traceId'));
    c.header('Cache-Control', `public, max-age=${ACTIVITY_MAX_AGE_SECONDS}`);
    return c.json(publicActivity(snapshot, Date.now()));
  })

  .post('/:id/tickets', async (c) => {
    const activityId = activityIdParam(c);
    // The public state first when this isolate holds the snapshot: no JWT work for a doomed click (§10).
    let now = Date.now();
    const cached = peekActivity(activityId, now, { env: c.env, ctx: c.executionCtx, traceId: c.get('traceId') });
    if (cached) assertOpen(cached, now);
    const scope = `ticket:${activityId}`;
    let userId: string;
    try {
      userId = await requireUser(c);
      // A refusal the user's gate already gave, remembered here: no activity load, no gate call.
      if (cached) assertNotRefusedEarly(scope, userId, cached.config.userRatePerSec, now);
    } catch (err) {
      // Load the snapshot after this answer, so the doomed clicks behind it stop at the state (§10).
      if (!cached) refreshActivityLater(c.env, c.executionCtx, activityId, c.get('traceId'));
      throw err;
    }
    const snapshot = await loadActivity(c.env, activityId, c.get('traceId'));
    now = Date.now();
    assertOpen(snapshot, now);
    // Shadow traffic only on a shadow sale, and only shadow traffic there (contract/shadow.ts).
    assertShadowMatch(snapshot, c.get('claims'));
    const settings = settingsOf(c.env);
    // Who may buy (docs/design.md §10): members-only, then the deny list (in the user's gate shard).
    assertEligible(snapshot, c.get('claims'));
    // Issuance is behind the user's gate too: a burst of tickets is 429 + Retry-After.
    await admitUser(c.env, {
      shards: settings.userGateShards,
      userId,
      scope,
      ratePerSec: snapshot.config.userRatePerSec,
      now,
      deny: true,
    });
    // Last: the one check that calls out (the bot-check verifier).
    if (settings.botCheck) await verifyChallenge(settings.botCheck, c.req.header(CHALLENGE_HEADER));
    const expiresAt = now + settings.ticketTtlSeconds * 1000;
    const ticket = await issueTicket(settings.ticketKeys, { activityId, userId, expiresAt });
    c.header('Cache-Control', 'no-store');
    return c.json({
      purchaseUrl: `/api/activities/${activityId}/purchase?t=${ticket}`,
      expiresAt: new Date(expiresAt).toISOString(),
    });
  })

  .get('/:id/reservation', async (c) => {
    const activityId = activityIdParam(c);
    const userId = await requireUser(c);
    const traceId = c.get('traceId');
    const snapshot = await loadActivity(c.env, activityId, traceId);
    assertShadowMatch(snapshot, c.get('claims'));
    const settings = settingsOf(c.env);
    // Its own bucket, so looking up a reservation never eats the purchase allowance.
    await admitUser(c.env, {
      shards: settings.userGateShards,
      userId,
      scope: `lookup:${activityId}`,
      ratePerSec: snapshot.config.userRatePerSec,
    });
    const answer = await callOrigin<ReservationBody>(settings, {
      method: 'GET',
      path: `/internal/activities/${activityId}/reservation?userId=${userId}`,
      traceId,
      shadow: isShadowToken(c.get('claims')),
    });
    c.header('Cache-Control', 'no-store');
    return c.json(answer.body);
  });
