/**
 * Admin routes of the order lifecycle (`Authorization: Bearer $ADMIN_TOKEN`): dead letters,
 * recover after Redis loss, cleanup after a sale.
 */
import { Hono } from 'hono';
import { cleanup, type CleanupDeps } from './cleanup.js';
import {
  giveUpDeadLetter,
  listDeadLetters,
  retryDeadLetter,
  type DeadLetterAdminDeps,
} from '../recovery/dead-letter-admin.js';
import { recover, type RecoverDeps } from '../recovery/recover.js';
import type { OriginConfig } from '../platform/config.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, reservationIdParam } from '../platform/http/validate.js';

/** Each route's service (dead letters, recover, cleanup), and the operators whose tokens open them. */
export type LifecycleRouteDeps = DeadLetterAdminDeps &
  RecoverDeps &
  CleanupDeps & {
    config: Pick<OriginConfig, 'ADMIN_OPERATORS'>;
  };

export function lifecycleAdminRoutes(deps: LifecycleRouteDeps) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ operators: deps.config.ADMIN_OPERATORS }));

  app.get('/activities/:id/dead-letters', idParam(), async (c) => {
    return c.json(await listDeadLetters(deps, c.req.valid('param').id));
  });

  app.post('/dead-letters/:reservationId/retry', reservationIdParam(), async (c) => {
    return c.json(await retryDeadLetter(deps, c.req.valid('param').reservationId));
  });

  app.post('/dead-letters/:reservationId/give-up', reservationIdParam(), async (c) => {
    return c.json(await giveUpDeadLetter(deps, c.req.valid('param').reservationId));
  });

  app.post('/activities/:id/recover', idParam(), async (c) => {
    return c.json(await recover(deps, c.req.valid('param').id));
  });

  app.post('/activities/:id/cleanup', idParam(), async (c) => {
    return c.json(await cleanup(deps, c.req.valid('param').id));
  });

  return app;
}
