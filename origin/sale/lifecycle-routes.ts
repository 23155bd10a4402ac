/**
 * Admin routes of the order lifecycle (`Authorization: Bearer $ADMIN_TOKEN`): dead letters,
 * recover after Redis loss, cleanup after a sale.
 */
import { Hono } from 'hono';
import type { OriginContext } from '../context.js';
import { cleanup } from './cleanup.js';
import { giveUpDeadLetter, listDeadLetters, retryDeadLetter } from '../recovery/dead-letter-admin.js';
import { recover } from '../recovery/recover.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, reservationIdParam } from '../platform/http/validate.js';

export function lifecycleAdminRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ operators: ctx.config.ADMIN_OPERATORS }));

  app.get('/activities/:id/dead-letters', idParam(), async (c) => {
    return c.json(await listDeadLetters(ctx, c.req.valid('param').id));
  });

  app.post('/dead-letters/:reservationId/retry', reservationIdParam(), async (c) => {
    return c.json(await retryDeadLetter(ctx, c.req.valid('param').reservationId));
  });

  app.post('/dead-letters/:reservationId/give-up', reservationIdParam(), async (c) => {
    return c.json(await giveUpDeadLetter(ctx, c.req.valid('param').reservationId));
  });

  app.post('/activities/:id/recover', idParam(), async (c) => {
    return c.json(await recover(ctx, c.req.valid('param').id));
  });

  app.post('/activities/:id/cleanup', idParam(), async (c) => {
    return c.json(await cleanup(ctx, c.req.valid('param').id));
  });

  return app;
}
