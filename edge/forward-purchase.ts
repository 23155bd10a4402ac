/**
 * Forwarding a purchase the edge has admitted (DESIGN §4 step 8): one signed `POST /internal/reserve`.
 * Used by the purchase route for an admitted click and by the waiting room for a kept purchase whose
 * turn has come (its ticket was verified when it joined the line and is not checked again).
 */
import type { Context } from 'hono';
import { ContractError, type ActivitySnapshot, type ReserveResponse } from '../contract/index.js';
import { activityStub, rememberActivity } from './activity-cache.js';
import type { EdgeEnv } from './context.js';
import type { KeptPurchase } from './durable/waiting-line.js';
import { callOrigin } from './origin.js';
import { setReceipt } from './receipt.js';
import { settingsOf } from './settings.js';

/** The origin's decision: a reservation (`repeat` when the origin answered an existing one), or a thrown ContractError. */
export async function forwardPurchase(
  c: Context<EdgeEnv>,
  snapshot: ActivitySnapshot,
  purchase: KeptPurchase,
): Promise<{ reservationId: string; repeat: boolean }> {
  const settings = settingsOf(c.env);
  const { activityId } = snapshot.config;
  const { userId, quantity, requestId } = purchase;
  const traceId = c.get('traceId');
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
  return { reservationId, repeat: answer.status === 200 };
}

/** The §3 purchase answer for a reservation: 202 when new, 200 for a repeat (or as `status` says). */
export function queued(c: Context<EdgeEnv>, reservationId: string, outcome: 'queued' | 'repeat', status?: 200 | 202) {
  c.set('outcome', outcome);
  c.header('Cache-Control', 'no-store');
  return c.json(
    { status: 'queued' as const, reservationId, pollUrl: `/api/reservations/${reservationId}` },
    status ?? (outcome === 'repeat' ? 200 : 202),
  );
}
