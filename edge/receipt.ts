/**
 * Holder receipts: the contract promises a holder's repeat purchase the same reservation, never a
 * failure — but once the sold-out flag is set the edge answers without calling the origin. So a
 * granted purchase also sets an HttpOnly cookie, scoped to the activity's API path, carrying the
 * reservation id and an HMAC over (activity, user, reservation) with the ticket key. A repeat that
 * meets the sold-out flag and brings a valid receipt for this user gets 200 with its reservation,
 * still without an origin call; everyone else pays nothing (no cookie, no HMAC). Clients without
 * cookies find their reservation with `GET /api/activities/:id/reservation`.
 */
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { hmacHex, isReservationId, verifyHmacHex } from '../contract/index.js';
import type { TicketKey } from './ticket.js';

export const receiptCookie = (activityId: string) => `sk_receipt_${activityId}`;

const signed = (activityId: string, userId: string, reservationId: string) =>
  `receipt.v1.${activityId}.${userId}.${reservationId}`;

export async function setReceipt(
  c: Context,
  keys: TicketKey[],
  r: { activityId: string; userId: string; reservationId: string; endsAt: string },
): Promise<void> {
  const key = keys[0]!;
  const mac = await hmacHex(key.secret, signed(r.activityId, r.userId, r.reservationId));
  setCookie(c, receiptCookie(r.activityId), `${r.reservationId}.${key.kid}.${mac}`, {
    path: `/api/activities/${r.activityId}`,
    httpOnly: true,
    secure: new URL(c.req.url).protocol === 'https:',
    sameSite: 'Strict',
    maxAge: Math.max(60, Math.ceil((Date.parse(r.endsAt) - Date.now()) / 1000) + 86_400),
  });
}

/** Whether the request brings a receipt cookie for the activity at all (unchecked: no crypto). */
export function hasReceipt(c: Context, activityId: string): boolean {
  return getCookie(c, receiptCookie(activityId)) !== undefined;
}

/** The reservation id of a valid receipt this request brings for (activity, user), else null. */
export async function readReceipt(
  c: Context,
  keys: TicketKey[],
  activityId: string,
  userId: string,
): Promise<string | null> {
  const value = getCookie(c, receiptCookie(activityId));
  if (!value || value.length > 200) return null;
  const [reservationId, kid, mac] = value.split('.');
  const key = keys.find((k) => k.kid === kid);
  if (!key || !reservationId || !isReservationId(reservationId) || !mac) return null;
  return (await verifyHmacHex(key.secret, signed(activityId, userId, reservationId), mac)) ? reservationId : null;
}
