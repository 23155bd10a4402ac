/**
 * Admin routes of the order lifecycle (`Authorization: Bearer $ADMIN_TOKEN`): dead letters,
 * recover after Redis loss, cleanup after a sale.
 */
import { Hono } from 'hono';
import type { OriginContext } from '../context.js';
import { cleanup } from './cleanup.js';
import {
  giveUpDeadLetter,
  listDeadLetters,
  retryDeadLetter,
  type DeadLetterAdminDeps,
} from '../recovery/dead-letter-admin.js';
import { recover, type RecoverDeps } from '../recovery/recover.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, reservationIdParam } from '../platform/http/validate.js';

export function lifecycleAdminRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ operators: ctx.config.ADMIN_OPERATORS }));
  const deadLetters: DeadLetterAdminDeps = {
    db: ctx.db,
    log: ctx.log,
    catalog: ctx.catalog,
    sales: ctx.stock.sales,
    streams: ctx.stock.streams,
  };
  const recovering: RecoverDeps = {
    db: ctx.db,
    log: ctx.log,
    metrics: ctx.metrics,
    publisher: ctx.publisher,
    sales: ctx.stock.sales,
    recovery: ctx.stock.recovery,
    ledger: ctx.stock.ledger,
    saleRules: { db: ctx.db, stock: ctx.stock },
    config: ctx.config,
  };

  app.get('/activities/:id/dead-letters', idParam(), async (c) => {
    return c.json(await listDeadLetters({ db: ctx.db }, c.req.valid('param').id));
  });

  app.post('/dead-letters/:reservationId/retry', reservationIdParam(), async (c) => {
    return c.json(await retryDeadLetter(deadLetters, c.req.valid('param').reservationId));
  });

  app.post('/dead-letters/:reservationId/give-up', reservationIdParam(), async (c) => {
    return c.json(await giveUpDeadLetter(deadLetters, c.req.valid('param').reservationId));
  });

  app.post('/activities/:id/recover', idParam(), async (c) => {
    return c.json(await recover(recovering, c.req.valid('param').id));
  });

  app.post('/activities/:id/cleanup', idParam(), async (c) => {
    return c.json(await cleanup(ctx, c.req.valid('param').id));
  });

  return app;
}
