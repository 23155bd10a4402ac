/**
 * Admin routes of the order lifecycle (`Authorization: Bearer $ADMIN_TOKEN`): dead letters,
 * recover after Redis loss, cleanup after a sale.
 */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { activityOfReservation, isId } from '../../contract/ids.js';
import type { OriginContext } from '../context.js';
import { cleanup } from '../lifecycle/cleanup.js';
import { giveUpDeadLetter, listDeadLetters, retryDeadLetter } from '../lifecycle/dead-letters.js';
import { recover } from '../lifecycle/recover.js';
import { adminToken } from './middleware.js';
import type { OriginEnv } from './types.js';

function activityIdOf(value: string): string {
  if (!isId(value)) throw new ContractError('bad_request', 'activity id must be a decimal positive 64-bit integer');
  return value;
}

function reservationIdOf(value: string): string {
  if (!activityOfReservation(value))
    throw new ContractError('bad_request', 'reservation id must be <activityId>-<32 hex characters>');
  return value;
}

export function lifecycleAdminRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ token: ctx.config.ADMIN_TOKEN }));

  app.get('/activities/:id/dead-letters', async (c) => {
    return c.json(await listDeadLetters(ctx, activityIdOf(c.req.param('id'))));
  });

  app.post('/dead-letters/:reservationId/retry', async (c) => {
    return c.json(await retryDeadLetter(ctx, reservationIdOf(c.req.param('reservationId'))));
  });

  app.post('/dead-letters/:reservationId/give-up', async (c) => {
    return c.json(await giveUpDeadLetter(ctx, reservationIdOf(c.req.param('reservationId'))));
  });

  app.post('/activities/:id/recover', async (c) => {
    return c.json(await recover(ctx, activityIdOf(c.req.param('id'))));
  });

  app.post('/activities/:id/cleanup', async (c) => {
    return c.json(await cleanup(ctx, activityIdOf(c.req.param('id'))));
  });

  return app;
}
