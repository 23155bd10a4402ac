/**
 * `POST /api/activities/:id/purchase?t=<ticket>` (DESIGN §3, §4): the cheapest checks first —
 * shape, user JWT, ticket, cached activity (window, switches, sold-out flag), per-user gate,
 * admission — and only then one signed call to the origin's `POST /internal/reserve`.
 */
import { Hono, type Context } from 'hono';
import {
  ContractError,
  isRequestId,
  publicState,
  purchaseBodySchema,
  type ReserveResponse,
} from '../../contract/index.js';
import { activityStub, loadActivity, rememberActivity } from '../activity-cache.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import { admitToOrigin, admitUser, assertOpen } from '../gates.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';
import { readReceipt, setReceipt } from '../receipt.js';
import { verifyTicket } from '../ticket.js';
import { activityIdParam } from './activities.js';

const MAX_BODY_BYTES = 1024;

function parseQuantity(text: string): number {
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
  const text = await c.req.text();
  if (text.length > MAX_BODY_BYTES) throw new ContractError('bad_request', 'body too large');
  const quantity = parseQuantity(text);

  // 2. Who, 3. with what right.
  const userId = await requireUser(c);
  const settings = settingsOf(c.env);
  const now = Date.now();
  await verifyTicket(settings.ticketKeys, c.req.query('t'), { activityId, userId, now });

  // 4. Activity window, switches and sold-out flag, from isolate memory.
  const traceId = c.get('traceId');
  const snapshot = await loadActivity(c.env, activityId, traceId);
  if (snapshot.soldOut) {
    // A holder's repeat still gets its reservation (DESIGN §3), from its receipt, without the origin.
    const held = await readReceipt(c, settings.ticketKeys, activityId, userId);
    if (held && publicState(snapshot, now) === 'sold_out') return queued(c, held, 'repeat');
  }
  assertOpen(snapshot, now);

  // 5. Per-user rate, 6. admission to the origin.
  await admitUser(
    c.env,
    settings.userGateShards,
    userId,
    `purchase:${activityId}:${userId}`,
    snapshot.config.userRatePerSec,
  );
  await admitToOrigin(c.env, snapshot, userId);

  // 7. The origin decides.
  let answer;
  try {
    answer = await callOrigin<ReserveResponse>(settings, {
      method: 'POST',
      path: '/internal/reserve',
      body: { activityId, userId, quantity, requestId, traceId },
      traceId,
    });
  } catch (err) {
    if (err instanceof ContractError && err.code === 'sold_out') {
      // Later buyers stop here without an origin call, in this isolate at once and everywhere within the cache TTL.
      c.executionCtx.waitUntil(
        Promise.all([
          rememberActivity(activityId, { ...snapshot, soldOut: true }),
          activityStub(c.env, activityId).markSoldOut(),
        ]),
      );
    }
    throw err;
  }
  const { reservationId } = answer.body;
  await setReceipt(c, settings.ticketKeys, { activityId, userId, reservationId, endsAt: snapshot.config.endsAt });
  return queued(c, reservationId, answer.status === 200 ? 'repeat' : 'queued');
});

function queued(c: Context<EdgeEnv>, reservationId: string, outcome: 'queued' | 'repeat') {
  c.set('outcome', outcome);
  c.header('Cache-Control', 'no-store');
  return c.json(
    { status: 'queued' as const, reservationId, pollUrl: `/api/reservations/${reservationId}` },
    outcome === 'repeat' ? 200 : 202,
  );
}
