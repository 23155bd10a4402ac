/** The origin's HTTP surface: internal (edge-signed), admin and its console, payment webhook, health and metrics. */
import { Hono } from 'hono';
import { errorBody } from '../contract/errors.js';
import type { OriginContext } from './context.js';
import { adminRoutes } from './sale/admin-routes.js';
import { consoleRoutes } from './console/console-routes.js';
import { onError } from './platform/http/errors.js';
import { internalRoutes, type InternalRouteDeps } from './reservation/internal-routes.js';
import type { ReserveFastPathDeps } from './reservation/reserve-fast-path.js';
import { lifecycleAdminRoutes } from './sale/lifecycle-routes.js';
import { bodySizeLimit, rawBody, traceContext } from './platform/http/middleware.js';
import { opsRoutes } from './watch/ops-routes.js';
import { ScrapeReads } from './watch/scrape-reads.js';
import { orderEventRoutes } from './orders/order-event-routes.js';
import { paymentRoutes } from './orders/payment-routes.js';
import type { OriginEnv } from './platform/http/types.js';

function baseApp(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', traceContext({ log: ctx.log }));
  app.onError(onError);
  app.notFound((c) => c.json(errorBody('not_found', 'no such route', c.get('traceId') ?? ''), 404));
  return app;
}

/** What the internal routes and the reserve fast path (server.ts) use, from the context. */
export function reservationDeps(ctx: OriginContext): InternalRouteDeps & ReserveFastPathDeps {
  return {
    reserveGate: ctx.reserveGate,
    failover: ctx.failover,
    catalog: ctx.catalog,
    soldOut: ctx.soldOut,
    requests: ctx.stock.requests,
    publisher: ctx.publisher,
    stockWatch: ctx.stockWatch,
    admission: ctx.lottery,
    entries: ctx.stock.lottery,
    db: ctx.db,
    log: ctx.log,
    metrics: ctx.metrics,
    config: ctx.config,
  };
}

/** The main listener; `/healthz` and `/metrics` are on it unless METRICS_PORT gives them their own. */
export function createApp(ctx: OriginContext) {
  const app = baseApp(ctx);
  app.use('*', bodySizeLimit({ maxBytes: ctx.config.MAX_BODY_BYTES, timeoutMs: ctx.config.BODY_TIMEOUT_MS }));
  app.use('*', rawBody({ timeoutMs: ctx.config.BODY_TIMEOUT_MS }));

  app.route('/internal', internalRoutes(reservationDeps(ctx)));
  // Before the other /admin routes: the console's static shell answers before their token check.
  app.get('/admin/console', (c) => c.redirect('/admin/console/', 301));
  app.route(
    '/admin/console/',
    consoleRoutes({
      saleConsole: {
        db: ctx.db,
        publisher: ctx.publisher,
        sales: ctx.stock.sales,
        streams: ctx.stock.streams,
        metrics: ctx.metrics,
        failover: ctx.failover,
        config: ctx.config,
      },
      report: { db: ctx.db, ledger: ctx.stock.ledger, config: ctx.config },
      checklist: {
        db: ctx.db,
        ledger: ctx.stock.ledger,
        streams: ctx.stock.streams,
        registry: ctx.stock.registry,
        soldOut: ctx.soldOut,
        config: ctx.config,
      },
      config: ctx.config,
    }),
  );
  app.route(
    '/admin',
    adminRoutes({
      db: ctx.db,
      log: ctx.log,
      metrics: ctx.metrics,
      config: ctx.config,
      catalog: ctx.catalog,
      publisher: ctx.publisher,
      stockWatch: ctx.stockWatch,
      sales: ctx.stock.sales,
      access: ctx.stock.access,
      registry: ctx.stock.registry,
      replication: ctx.stock.replication,
      ledger: ctx.stock.ledger,
    }),
  );
  app.route(
    '/admin',
    lifecycleAdminRoutes({
      db: ctx.db,
      log: ctx.log,
      metrics: ctx.metrics,
      config: ctx.config,
      catalog: ctx.catalog,
      publisher: ctx.publisher,
      stockWatch: ctx.stockWatch,
      sales: ctx.stock.sales,
      access: ctx.stock.access,
      registry: ctx.stock.registry,
      streams: ctx.stock.streams,
      replication: ctx.stock.replication,
      ledger: ctx.stock.ledger,
      recovery: ctx.stock.recovery,
      saleRules: { db: ctx.db, access: ctx.stock.access },
    }),
  );
  app.route('/admin', orderEventRoutes({ db: ctx.db, log: ctx.log, config: ctx.config }));
  app.route('/payments', paymentRoutes({ db: ctx.db, log: ctx.log, metrics: ctx.metrics, config: ctx.config }));
  if (ctx.config.METRICS_PORT === undefined) app.route('/', healthAndMetrics(ctx));
  return app;
}

/** `/healthz` and `/metrics`, with the reads a scrape makes, on whichever listener serves them. */
function healthAndMetrics(ctx: OriginContext) {
  const scrapeReads = new ScrapeReads({
    db: ctx.db,
    log: ctx.log,
    metrics: ctx.metrics,
    registry: ctx.stock.registry,
    sales: ctx.stock.sales,
    replication: ctx.stock.replication,
    publisher: ctx.publisher,
    failover: ctx.failover,
    streamGauges: { registry: ctx.stock.registry, streams: ctx.stock.streams, metrics: ctx.metrics },
    orderEventGauges: { db: ctx.db, metrics: ctx.metrics, config: ctx.config },
    config: ctx.config,
  });
  return opsRoutes({ db: ctx.db, requests: ctx.stock.requests, scrapeReads, metrics: ctx.metrics, config: ctx.config });
}

/** The METRICS_PORT listener: `/healthz` and `/metrics` only. */
export function createOpsApp(ctx: OriginContext) {
  const app = baseApp(ctx);
  app.route('/', healthAndMetrics(ctx));
  return app;
}
