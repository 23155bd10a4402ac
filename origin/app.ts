/** The origin's HTTP surface: internal (edge-signed), admin and its console, payment webhook, health and metrics. */
import { Hono } from 'hono';
import { errorBody } from '../contract/errors.js';
import { saleOperationParts, type OriginParts } from './parts.js';
import { adminRoutes } from './operator/admin-routes.js';
import { consoleRoutes } from './console/console-routes.js';
import { onError } from './platform/http/errors.js';
import { internalRoutes, type InternalRouteDeps } from './reservation/internal-routes.js';
import type { ReserveFastPathDeps } from './reservation/reserve-fast-path.js';
import { lifecycleAdminRoutes } from './operator/lifecycle-routes.js';
import { bodySizeLimit, rawBody, traceContext } from './platform/http/middleware.js';
import { opsRoutes } from './watch/ops-routes.js';
import { openApiRoutes } from './openapi/openapi-routes.js';
import { ScrapeReads } from './watch/scrape-reads.js';
import { orderEventRoutes } from './orders/order-event-routes.js';
import { paymentRoutes } from './orders/payment-routes.js';
import type { OriginEnv } from './platform/http/types.js';

function baseApp(parts: OriginParts) {
  const app = new Hono<OriginEnv>();
  app.use('*', traceContext({ log: parts.log, authFailures: parts.authFailures }));
  app.onError(onError);
  app.notFound((c) => c.json(errorBody('not_found', 'no such route', c.get('traceId') ?? ''), 404));
  return app;
}

/** What the internal routes and the reserve fast path (server.ts) use, from the context. */
export function reservationDeps(parts: OriginParts): InternalRouteDeps & ReserveFastPathDeps {
  return {
    reserveGate: parts.reserveGate,
    authFailures: parts.authFailures,
    failover: parts.failover,
    catalog: parts.catalog,
    soldOut: parts.soldOut,
    requests: parts.redis.requests,
    publisher: parts.publisher,
    stockWatch: parts.stockWatch,
    admission: parts.lotteryAdmission,
    entries: parts.redis.lotteryEntries,
    db: parts.db,
    log: parts.log,
    metrics: parts.metrics,
    config: parts.config,
  };
}

/** The main listener; `/healthz` and `/metrics` are on it unless METRICS_PORT gives them their own. */
export function createApp(parts: OriginParts) {
  const app = baseApp(parts);
  app.use('*', bodySizeLimit({ maxBytes: parts.config.MAX_BODY_BYTES, timeoutMs: parts.config.BODY_TIMEOUT_MS }));
  app.use('*', rawBody({ timeoutMs: parts.config.BODY_TIMEOUT_MS }));

  app.route('/internal', internalRoutes(reservationDeps(parts)));
  // Before the other /admin routes: the console's static shell answers before their token check.
  app.get('/admin/console', (c) => c.redirect('/admin/console/', 301));
  app.route(
    '/admin/console/',
    consoleRoutes({
      saleConsole: {
        db: parts.db,
        publisher: parts.publisher,
        sales: parts.redis.sales,
        streams: parts.redis.streams,
        metrics: parts.metrics,
        failover: parts.failover,
        config: parts.config,
      },
      report: { db: parts.db, ledger: parts.redis.ledger, config: parts.config },
      charts: {
        db: parts.db,
        metrics: parts.metrics,
        series: parts.series,
        failover: parts.failover,
        shortBuckets: parts.shortBuckets,
        config: parts.config,
      },
      checklist: {
        db: parts.db,
        ledger: parts.redis.ledger,
        streams: parts.redis.streams,
        registry: parts.redis.registry,
        soldOut: parts.soldOut,
        config: parts.config,
      },
      config: parts.config,
    }),
  );
  // Also before them: the API reference's page files answer without the token (openapi/openapi-routes.ts).
  app.route('/admin', openApiRoutes({ config: parts.config }));
  app.route('/admin', adminRoutes(saleOperationParts(parts)));
  app.route(
    '/admin',
    lifecycleAdminRoutes({
      ...saleOperationParts(parts),
      streams: parts.redis.streams,
      recovery: parts.redis.recovery,
      saleRules: { db: parts.db, access: parts.redis.access },
    }),
  );
  app.route('/admin', orderEventRoutes({ db: parts.db, log: parts.log, config: parts.config }));
  app.route('/payments', paymentRoutes({ db: parts.db, log: parts.log, metrics: parts.metrics, config: parts.config }));
  if (parts.config.METRICS_PORT === undefined) app.route('/', healthAndMetrics(parts));
  return app;
}

/** The scrape-time reads of one origin: one instance, shared by /metrics and the console's series job. */
const scrapeReadsByParts = new WeakMap<OriginParts, ScrapeReads>();

export function scrapeReadsOf(parts: OriginParts): ScrapeReads {
  const kept = scrapeReadsByParts.get(parts);
  if (kept) return kept;
  const scrapeReads = new ScrapeReads({
    db: parts.db,
    log: parts.log,
    metrics: parts.metrics,
    registry: parts.redis.registry,
    sales: parts.redis.sales,
    replication: parts.redis.replication,
    publisher: parts.publisher,
    failover: parts.failover,
    streamGauges: { registry: parts.redis.registry, streams: parts.redis.streams, metrics: parts.metrics },
    orderEventGauges: { db: parts.db, metrics: parts.metrics, config: parts.config },
    config: parts.config,
  });
  scrapeReadsByParts.set(parts, scrapeReads);
  return scrapeReads;
}

/** `/healthz` and `/metrics`, with the reads a scrape makes, on whichever listener serves them. */
function healthAndMetrics(parts: OriginParts) {
  const scrapeReads = scrapeReadsOf(parts);
  return opsRoutes({
    db: parts.db,
    requests: parts.redis.requests,
    scrapeReads,
    metrics: parts.metrics,
    config: parts.config,
  });
}

/** The METRICS_PORT listener: `/healthz` and `/metrics` only. */
export function createOpsApp(parts: OriginParts) {
  const app = baseApp(parts);
  app.route('/', healthAndMetrics(parts));
  return app;
}
