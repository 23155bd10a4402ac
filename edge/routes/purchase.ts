/**
 * `POST /api/activities/:id/purchase?t=<ticket>` (docs/design.md §3, §4, §10): the cheapest checks first —
 * shape (the body limit ran before), the public state when this isolate already holds the
 * activity's snapshot (no crypto for a doomed click), user JWT, ticket, activity (window, switches,
 * sold-out flag), per-user gate, admission — and only then one signed call to the origin's
 * `POST /internal/reserve`.
 */
import { Hono, type Context } from 'hono';
import {
  ContractError,
  forwardedClaims,
  inLotteryWindow,
  isRequestId,
  publicState,
  purchaseBodySchema,
} from '../../contract/index.js';
import { loadActivity, peekActivity, refreshActivityLater } from '../activity-cache.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import {
  admitToOrigin,
  admitUser,
  assertEligible,
  assertNotRefusedEarly,
  assertOpen,
  assertShadowMatch,
  enterLine,
} from '../gates.js';
import { forwardPurchase, queued } from '../forward-purchase.js';
import { settingsOf } from '../settings.js';
import { hasReceipt, readReceipt } from '../receipt.js';
import { answerPlace, waitingLimits } from '../waiting-room.js';
import { checkTicket } from '../ticket.js';
import { TtlCache } from '../ttl-cache.js';
import { activityIdParam } from './activities.js';

/**
 * Purchase bodies already parsed, text → quantity: clients send the same few texts
 * (`{"quantity":1}`), so the shape check of a doomed click is a lookup, not JSON.parse and the
 * schema. Valid bodies only (≤ MAX_BODY_BYTES each); a text's quantity never changes.
 */
const PARSED_BODIES_MAX = 64;
const parsedBodies = new TtlCache<number>(PARSED_BODIES_MAX);

function parseQuantity(text: string): number {
  let quantity = parsedBodies.get(text, 0);
  if (quantity === undefined) {
    quantity = parseQuantityOnce(text);
    parsedBodies.set(text, quantity, Infinity, 0); // never expires; bounded by PARSED_BODIES_MAX
  }
  return quantity;
}

function parseQuantityOnce(text: string): number {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ContractError('bad_request', 'body must be JSON like {"quantity":1}');
  }
  const parsed = purchaseBodySchema.safeParse(json);
  if (!parsed.success) throw new ContractError('bad_request', parsed.error.issues[0]?.message ?? 'invalid body');
  return parsed.data.quantity;
}

export const purchaseRoutes = new Hono<EdgeEnv>().post('/:id/purchase', async (c) => {
  // 1. Shape.
  const activityId = activityIdParam(c);
  const requestId = c.req.header('idempotency-key');
  if (!isRequestId(requestId)) {
    throw new ContractError('bad_request', 'Idempotency-Key header must be 1-64 characters of [A-Za-z0-9._:-]');
  }
  const quantity = parseQuantity(c.get('body'));

  // 2. The public state, if this isolate holds the snapshot: it reveals nothing GET /api/activities
  // does not, so it may answer before the JWT and ticket (§10). A sold-out click that brings a
  // receipt goes on: it may be a holder's repeat, which gets its reservation.
  const now = Date.now();
  const traceId = c.get('traceId');
  const cached = peekActivity(activityId, now, { env: c.env, ctx: c.executionCtx, traceId });
  if (cached && !(cached.soldOut && hasReceipt(c, activityId))) assertOpen(cached, now);

  // 3. Who, 4. with what right. A click refused here without the snapshot in memory loads it after
  // its answer, so the stream of doomed clicks behind it is answered at step 2 (§10).
  const settings = settingsOf(c.env);
  const scope = `purchase:${activityId}`;
  let userId: string;
  try {
    // A token or ticket this isolate already knows is answered without a promise.
    const user = requireUser(c);
    userId = typeof user === 'string' ? user : await user;
    // The user's gate already refused them (remembered here): before the ticket crypto (§10).
    if (cached) assertNotRefusedEarly(scope, userId, cached.config.userRatePerSec, now);
    await checkTicket(settings.ticketKeys, c.req.query('t'), { activityId, userId, now });
  } catch (err) {
    if (!cached) refreshActivityLater(c.env, c.executionCtx, activityId, traceId);
    throw err;
  }

  // 5. Activity window, switches and sold-out flag, from isolate memory.
  const snapshot = await loadActivity(c.env, activityId, traceId);
  // Shadow traffic only on a shadow sale, and only shadow traffic there (contract/shadow.ts).
  assertShadowMatch(snapshot, c.get('claims'));
  if (snapshot.soldOut) {
    // A holder's repeat still gets its reservation (docs/design.md §3), from its receipt, without the origin.
    const held = await readReceipt(c, settings.ticketKeys, activityId, userId);
    if (held && publicState(snapshot, now) === 'sold_out') return queued(c, held, 'repeat');
  }
  assertOpen(snapshot, now);

  // 6. Who may buy (eligibility; the deny list rides on the gate call), per-user rate, 7. admission to the origin.
  assertEligible(snapshot, c.get('claims'));
  const claims = forwardedClaims(c.get('claims'));
  await admitUser(c.env, {
    shards: settings.userGateShards,
    userId,
    scope,
    ratePerSec: snapshot.config.userRatePerSec,
    now: Date.now(),
    deny: true,
  });
  // Lottery window (docs/design.md §10): every click in the window counts, so admission does not cap
  // entries (an entry is one cheap script, no stock); the user gate above still applies.
  const lottery = inLotteryWindow(snapshot.config, now);
  // Beyond the admission rate: 503 busy, or with overflow "queue" a place in the waiting room, which
  // keeps the purchase and runs it when its turn comes (§10, edge/waiting-room.ts).
  if (!lottery && snapshot.config.overflow === 'queue') {
    const place = await enterLine(c.env, snapshot, { userId, requestId, quantity, claims }, waitingLimits(settings));
    if (place.kind !== 'admitted') return answerPlace(c, snapshot, place, 202);
  } else if (!lottery) {
    await admitToOrigin(c.env, snapshot, userId);
  }

  // 8. The origin decides.
  const result = await forwardPurchase(c, snapshot, { userId, quantity, requestId, claims });
  // The origin's clock decides entry vs reservation: it answers `entered` inside its window.
  if (result.kind === 'entered') return entered(c, result.entryId, result.repeat);
  return queued(c, result.reservationId, result.repeat ? 'repeat' : 'queued', { current: result.current });
});

const activityIdOfEntry = (entryId: string) => entryId.slice(0, entryId.indexOf('-'));

function entered(c: Context<EdgeEnv>, entryId: string, repeat: boolean) {
  c.set('outcome', repeat ? 'repeat' : 'entered');
  c.header('Cache-Control', 'no-store');
  const pollUrl = `/api/activities/${activityIdOfEntry(entryId)}/entries/${entryId}`;
  return c.json({ status: 'entered' as const, entryId, pollUrl }, repeat ? 200 : 202);
}
