/**
 * `/healthz` and `/metrics` for operators and Prometheus. They need `Authorization: Bearer
 * $METRICS_TOKEN` when it is set, and live on the main listener or, with METRICS_PORT, on their
 * own (loopback by default) so the main listener can be exposed for the payment webhook alone.
 */
import { Hono } from 'hono';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import { pingMysql } from '../platform/db/server-status.js';
import { bearerToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import type { Metrics } from '../platform/metrics.js';
import type { ReservationRequests } from '../redis/reservation-requests.js';
import { setPoolGauges, type ScrapeReads } from './scrape-reads.js';

/** What the two routes use: Redis and MySQL to ping, the scrape-time reads, the registry they fill. */
export interface OpsRouteDeps {
  db: Db;
  requests: Pick<ReservationRequests, 'ping'>;
  scrapeReads: Pick<ScrapeReads, 'collect'>;
  metrics: Metrics;
  config: Pick<OriginConfig, 'METRICS_TOKEN'>;
}

export function opsRoutes(deps: OpsRouteDeps) {
  const app = new Hono<OriginEnv>();
  const token = deps.config.METRICS_TOKEN;
  if (token !== undefined) {
    app.use('/healthz', bearerToken({ token, what: 'metrics token', route: '/metrics' }));
    app.use('/metrics', bearerToken({ token, what: 'metrics token', route: '/metrics' }));
  }

  app.get('/healthz', async (c) => {
    const [redis, mysql] = await Promise.allSettled([deps.requests.ping(), pingMysql(deps.db)]);
    const body = {
      ok: redis.status === 'fulfilled' && mysql.status === 'fulfilled',
      redis: redis.status === 'fulfilled',
      mysql: mysql.status === 'fulfilled',
    };
    return c.json(body, body.ok ? 200 : 503);
  });

  app.get('/metrics', async (c) => {
    await deps.scrapeReads.collect();
    setPoolGauges(deps.db, deps.metrics);
    return c.text(await deps.metrics.registry.metrics(), 200, { 'content-type': deps.metrics.registry.contentType });
  });

  return app;
}
