/** `GET /api/reservations/:reservationId` (DESIGN §3): the owner polls; the origin answers. */
import { Hono } from 'hono';
import { ContractError, activityOfReservation, type ReservationBody } from '../../contract/index.js';
import { requireUser } from '../auth.js';
import type { EdgeEnv } from '../context.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';

export const reservationRoutes = new Hono<EdgeEnv>().get('/:reservationId', async (c) => {
  const reservationId = c.req.param('reservationId');
  const activityId = activityOfReservation(reservationId);
  if (!activityId) throw new ContractError('not_found', 'no such reservation');
  c.set('activityId', activityId);
  const userId = await requireUser(c);
  const answer = await callOrigin<ReservationBody>(settingsOf(c.env), {
    method: 'GET',
    path: `/internal/reservations/${reservationId}?userId=${userId}`,
    traceId: c.get('traceId'),
  });
  c.header('Cache-Control', 'no-store');
  return c.json(answer.body);
});
