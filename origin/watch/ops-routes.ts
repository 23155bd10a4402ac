/**
 * `/healthz` and `/metrics` for operators and Prometheus. They need `Authorization: Bearer
 * $METRICS_TOKEN` when it is set, and live on the main listener or, with METRICS_PORT, on their
 * own (loopback by default) so the main listener can be exposed for the payment webhook alone.
 */
import { Hono } from 'hono';
import type { OriginContext } from '../context.js';
import { ScrapeReads, setPoolGauges } from './scrape-reads.js';
import { pingMysql } from '../platform/db/server-status.js';
import { bearerToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';

export function opsRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  const token = ctx.config.METRICS_TOKEN;
  if (token !== undefined) {
    app.use('/healthz', bearerToken({ token, what: 'metrics token' }));
    app.use('/metrics', bearerToken({ token, what: 'metrics token' }));
  }

  app.get('/healthz', async (c) => {
    const [redis, mysql] = await Promise.allSettled([ctx.stock.requests.ping(), pingMysql(ctx.db)]);
    const body = {
      ok: redis.status === 'fulfilled' && mysql.status === 'fulfilled',
      redis: redis.status === 'fulfilled',
      mysql: mysql.status === 'fulfilled',
    };
    return c.json(body, body.ok ? 200 : 503);
  });

  const reads = new ScrapeReads(ctx);
  app.get('/metrics', async (c) => {
    await reads.collect();
    setPoolGauges(ctx);
    return c.text(await ctx.metrics.registry.metrics(), 200, { 'content-type': ctx.metrics.registry.contentType });
  });

  return app;
}
