/** The origin's HTTP surface: internal (edge-signed), admin, health and metrics. */
import { Hono } from 'hono';
import { errorBody } from '../../contract/errors.js';
import type { OriginContext } from '../context.js';
import { collectStreamGauges } from '../settlement/stream-stats.js';
import { adminRoutes } from './admin-routes.js';
import { onError } from './errors.js';
import { internalRoutes } from './internal-routes.js';
import { lifecycleAdminRoutes } from './lifecycle-routes.js';
import { rawBody, traceContext } from './middleware.js';
import { paymentRoutes } from './payment-routes.js';
import type { OriginEnv } from './types.js';

/** Request bodies above this are refused with 400 before anything is parsed. */
export const MAX_BODY_BYTES = 16 * 1024;

export function createApp(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', traceContext({ log: ctx.log }));
  app.use('*', rawBody({ maxBytes: MAX_BODY_BYTES }));
  app.onError(onError);
  app.notFound((c) => c.json(errorBody('not_found', 'no such route', c.get('traceId') ?? ''), 404));

  app.route('/internal', internalRoutes(ctx));
  app.route('/admin', adminRoutes(ctx));
  app.route('/admin', lifecycleAdminRoutes(ctx));
  app.route('/payments', paymentRoutes(ctx));

  app.get('/healthz', async (c) => {
    const [redis, mysql] = await Promise.allSettled([ctx.stock.ping(), ctx.db.query('SELECT 1')]);
    const body = {
      ok: redis.status === 'fulfilled' && mysql.status === 'fulfilled',
      redis: redis.status === 'fulfilled',
      mysql: mysql.status === 'fulfilled',
    };
    return c.json(body, body.ok ? 200 : 503);
  });

  app.get('/metrics', async (c) => {
    await collectStreamGauges(ctx).catch(() => undefined);
    return c.text(await ctx.metrics.registry.metrics(), 200, { 'content-type': ctx.metrics.registry.contentType });
  });

  return app;
}
