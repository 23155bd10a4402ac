/**
 * Forwarding a purchase the edge has admitted (docs/design.md §4 step 8): the one signed
 * `POST /internal/reserve`. Used by the purchase route for an admitted click and by the waiting room
 * for a kept purchase whose turn has come (its ticket was verified when it joined the line and is
 * not checked again). A granted reservation sets the holder receipt; an origin `sold_out` marks the
 * activity sold out in this isolate and its ActivityDO.
 */
import type { Context } from 'hono';
import {
  ContractError,
  isShadowForwarded,
  type ActivitySnapshot,
  type EntryResponse,
  type ReserveResponse,
} from '../contract/index.js';
import { rememberActivity } from './activity-cache.js';
import { activityObject } from './durable/names.js';
import type { EdgeEnv } from './context.js';
import type { KeptPurchase } from './durable/line-entries.js';
import { countAdmitted } from './figures.js';
import { callOrigin } from './origin.js';
import { setReceipt } from './receipt.js';
import { settingsOf } from './settings.js';

/** What the origin said about a reservation it holds: its current status (a repeat may be `ordered`, `paid`, …). */
export type ReservationState = Pick<ReserveResponse, 'status' | 'orderNo' | 'expireAt'>;

/**
 * The origin's decision: a reservation, or (inside a lottery window, by the origin's clock) an entry;
 * `repeat` when the origin answered one it already had. A refusal is a thrown ContractError.
 */
export type ForwardResult =
  | { kind: 'reserved'; reservationId: string; repeat: boolean; current: ReservationState }
  | { kind: 'entered'; entryId: string; repeat: boolean };

export async function forwardPurchase(
  c: Context<EdgeEnv>,
  snapshot: ActivitySnapshot,
  purchase: KeptPurchase,
): Promise<ForwardResult> {
  const settings = settingsOf(c.env);
  const { activityId } = snapshot.config;
  const { userId, quantity, requestId, claims } = purchase;
  const traceId = c.get('traceId');
  let answer;
  const shadow = isShadowForwarded(claims);
  countAdmitted(shadow);
  try {
    answer = await callOrigin<ReserveResponse | EntryResponse>(settings, {
      method: 'POST',
      path: '/internal/reserve',
      body: { activityId, userId, quantity, requestId, traceId, claims },
      traceId,
      shadow,
    });
  } catch (err) {
    if (err instanceof ContractError && err.code === 'sold_out') {
      // Later buyers stop here without an origin call, in this isolate at once and everywhere within the cache TTL.
      c.executionCtx.waitUntil(
        Promise.all([
          rememberActivity(activityId, { ...snapshot, soldOut: true }),
          activityObject(c.env, activityId).markSoldOut(),
        ]),
      );
    }
    throw err;
  }
  const repeat = answer.status === 200;
  const body = answer.body;
  if (body.status === 'entered') return { kind: 'entered', entryId: body.entryId, repeat };
  const { reservationId } = body;
  await setReceipt(c, settings.ticketKeys, { activityId, userId, reservationId, endsAt: snapshot.config.endsAt });
  return { kind: 'reserved', reservationId, repeat, current: body };
}

/**
 * The §3 purchase answer for a reservation: 202 `queued` when new, 200 for a repeat (or the HTTP
 * status given), carrying the origin's current status of it when known (`ordered`, `paid`, … with
 * orderNo / expireAt). A repeat answered without the origin (receipt, waiting room) says `queued`:
 * its pollUrl tells the rest.
 */
export function queued(
  c: Context<EdgeEnv>,
  reservationId: string,
  outcome: 'queued' | 'repeat',
  opts: { httpStatus?: 200 | 202; current?: ReservationState } = {},
) {
  c.set('outcome', outcome);
  c.header('Cache-Control', 'no-store');
  const { status = 'queued', orderNo, expireAt } = opts.current ?? {};
  return c.json(
    {
      status,
      reservationId,
      pollUrl: `/api/reservations/${reservationId}`,
      ...(orderNo === undefined ? {} : { orderNo }),
      ...(expireAt === undefined ? {} : { expireAt }),
    },
    opts.httpStatus ?? (outcome === 'repeat' ? 200 : 202),
  );
}
