/** The origin's HTTP surface: internal (edge-signed), admin and its console, payment webhook, health and metrics. */
import { Hono } from 'hono';
import { errorBody } from '../contract/errors.js';
import type { OriginContext } from './context.js';
import { adminRoutes } from './sale/admin-routes.js';
import { consoleRoutes } from './console/console-routes.js';
import { onError } from './platform/http/errors.js';
import { internalRoutes } from './reservation/internal-routes.js';
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

/** The main listener; `/healthz` and `/metrics` are on it unless METRICS_PORT gives them their own. */
export function createApp(ctx: OriginContext) {
  const app = baseApp(ctx);
  app.use('*', bodySizeLimit({ maxBytes: ctx.config.MAX_BODY_BYTES, timeoutMs: ctx.config.BODY_TIMEOUT_MS }));
  app.use('*', rawBody({ timeoutMs: ctx.config.BODY_TIMEOUT_MS }));

  app.route('/internal', internalRoutes(ctx));
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
      checklist: { db: ctx.db, soldOut: ctx.soldOut, stock: ctx.stock, config: ctx.config },
      config: ctx.config,
    }),
  );
  app.route('/admin', adminRoutes(ctx));
  app.route('/admin', lifecycleAdminRoutes(ctx));
  app.route('/admin', orderEventRoutes(ctx));
  app.route('/payments', paymentRoutes(ctx));
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
    streamGauges: { metrics: ctx.metrics, stock: ctx.stock },
    orderEventGauges: { db: ctx.db, log: ctx.log, metrics: ctx.metrics, config: ctx.config },
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
