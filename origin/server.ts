/**
 * Starts an origin: HTTP and/or settlement consumers per ORIGIN_ROLE, on one context. Used by
 * `npm run origin` (main.ts) and by tests, which start real origins in-process.
 */
import type { OriginConfig } from './platform/config.js';
import { buildOriginParts, saleOperationParts, type OriginParts } from './parts.js';
import { LiveListJob, createLiveListPush } from './platform/edge-push.js';
import { liveActivityIds } from './sale/sale-store.js';
import { createApp, createOpsApp, reservationDeps, scrapeReadsOf } from './app.js';
import { SeriesJob } from './console/series-job.js';
import { reserveFastPath } from './reservation/reserve-fast-path.js';
import { listen } from './platform/http/listen.js';
import type { Logger } from './platform/logger.js';
import { DrawJob } from './lottery/draw-job.js';
import { FailoverWatch } from './recovery/failover-watch.js';
import { orderEventWorkerFor, shadowOrderEventWorkerFor, type OrderEventWorker } from './orders/order-event-worker.js';
import { OutboxWorker } from './sale/outbox-worker.js';
import { TimeoutJob } from './orders/timeout-job.js';
import { WarmupJob } from './operator/warmup-job.js';
import { ReconcileJob } from './recovery/reconcile-job.js';
import { ReleaseJob } from './sale/tranches.js';
import { DenyPushJob } from './access/deny-list.js';
import { Settlement } from './settlement/settlement.js';

export interface RunningOrigin {
  parts: OriginParts;
  /** http://host:port when the HTTP role runs. */
  url: string | null;
  /** Where `/healthz` and `/metrics` are served: `url`, or the METRICS_PORT listener. */
  metricsUrl: string | null;
  settlement: Settlement | null;
  /** Watches the Redis primary under every warmed sale; every role runs it (the settlement role recovers). */
  failoverWatch: FailoverWatch;
  /** Timeout job, outbox worker, reconciliation, order events, scheduled warm-up and releases: they run wherever settlement runs. */
  lifecycle: {
    timeouts: TimeoutJob;
    outbox: OutboxWorker;
    reconciliation: ReconcileJob;
    /** Null when ORDER_EVENTS_URL is unset. */
    orderEvents: OrderEventWorker | null;
    shadowOrderEvents: OrderEventWorker | null;
    draws: DrawJob;
    warmups: WarmupJob;
    releases: ReleaseJob;
  } | null;
  stop(): Promise<void>;
}

type Server = import('node:http').Server;

export async function startOrigin(config: OriginConfig, log?: Logger): Promise<RunningOrigin> {
  const parts = await buildOriginParts(config, log);
  const servers: Server[] = [];
  let url: string | null = null;
  let metricsUrl: string | null = null;
  if (config.ORIGIN_ROLE !== 'consumers') {
    const main = await listen(createApp(parts).fetch, config.PORT, config.HOST, config, (next) =>
      reserveFastPath(reservationDeps(parts), next),
    );
    servers.push(main.server);
    url = metricsUrl = main.url;
    if (config.METRICS_PORT !== undefined) {
      const ops = await listen(createOpsApp(parts).fetch, config.METRICS_PORT, config.METRICS_HOST, config);
      servers.push(ops.server);
      metricsUrl = ops.url;
    }
  }
  const settlement =
    config.ORIGIN_ROLE !== 'http'
      ? new Settlement({
          db: parts.db,
          registry: parts.redis.registry,
          streams: parts.redis.streams,
          sales: parts.redis.sales,
          log: parts.log,
          metrics: parts.metrics,
          config,
        })
      : null;
  await settlement?.start();
  const lifecycle =
    config.ORIGIN_ROLE !== 'http'
      ? {
          timeouts: new TimeoutJob({ db: parts.db, log: parts.log, metrics: parts.metrics, config }),
          outbox: new OutboxWorker({
            db: parts.db,
            catalog: parts.catalog,
            sales: parts.redis.sales,
            publisher: parts.publisher,
            log: parts.log,
            metrics: parts.metrics,
            config,
          }),
          reconciliation: new ReconcileJob({
            db: parts.db,
            ledger: parts.redis.ledger,
            registry: parts.redis.registry,
            log: parts.log,
            metrics: parts.metrics,
            config,
          }),
          orderEvents: orderEventWorkerFor(
            { db: parts.db, log: parts.log, metrics: parts.metrics, config },
            () => settlement?.behindWithin(config.ORDER_EVENTS_POLL_MS) ?? false,
          ),
          // A shadow sale's events (docs/rehearsal.md): their own outbox, to SHADOW_ORDER_EVENTS_URL only.
          shadowOrderEvents: shadowOrderEventWorkerFor({
            db: parts.db,
            log: parts.log,
            metrics: parts.metrics,
            config,
          }),
          draws: new DrawJob({
            db: parts.db,
            log: parts.log,
            entries: parts.redis.lotteryEntries,
            sales: parts.redis.sales,
            publisher: parts.publisher,
            config,
          }),
          warmups: new WarmupJob(saleOperationParts(parts)),
          releases: new ReleaseJob({
            db: parts.db,
            log: parts.log,
            config: parts.config,
            catalog: parts.catalog,
            sales: parts.redis.sales,
            publisher: parts.publisher,
          }),
        }
      : null;
  if (lifecycle) {
    lifecycle.timeouts.onTimedOut = () => lifecycle.outbox.wake();
    lifecycle.timeouts.start();
    lifecycle.outbox.start();
    lifecycle.reconciliation.start();
    lifecycle.orderEvents?.start();
    lifecycle.shadowOrderEvents?.start();
    lifecycle.draws.start();
    lifecycle.warmups.start();
    lifecycle.releases.start();
  }
  // The HTTP role tells the edge which activities exist (docs/design.md §10); nothing to tell without an edge.
  const liveList =
    config.ORIGIN_ROLE !== 'consumers' && config.EDGE_URL
      ? new LiveListJob(
          // Every activity not ended more than EDGE_LIVE_AFTER_END_SECONDS ago: an ended sale still
          // answers `ended`, and its holders still poll and pay.
          () => liveActivityIds(parts.db, config.EDGE_LIVE_AFTER_END_SECONDS),
          createLiveListPush({
            edgeUrl: config.EDGE_URL,
            secret: config.EDGE_ORIGIN_SECRET,
            timeoutMs: config.EDGE_PUSH_TIMEOUT_MS,
            log: parts.log,
          }),
          config.EDGE_LIVE_LIST_PUSH_MS,
          parts.log,
        )
      : null;
  liveList?.start();
  // Deny-list changes the edge did not confirm are pushed again (docs/design.md §10: in force within 1 s).
  const denyPush =
    config.ORIGIN_ROLE !== 'consumers' && config.EDGE_URL
      ? new DenyPushJob({ db: parts.db, log: parts.log, config: parts.config })
      : null;
  denyPush?.start();
  // The console's charts: each sale's per-second series, kept where the console is served.
  const series =
    config.ORIGIN_ROLE !== 'consumers'
      ? new SeriesJob({
          db: parts.db,
          log: parts.log,
          metrics: parts.metrics,
          streams: parts.redis.streams,
          sales: parts.redis.sales,
          scrapeReads: scrapeReadsOf(parts),
          store: parts.series,
          config,
        })
      : null;
  series?.start();
  const failoverWatch = new FailoverWatch(
    {
      db: parts.db,
      log: parts.log,
      metrics: parts.metrics,
      publisher: parts.publisher,
      pushEdge: parts.pushEdge,
      registry: parts.redis.registry,
      sales: parts.redis.sales,
      recovery: parts.redis.recovery,
      ledger: parts.redis.ledger,
      replication: parts.redis.replication,
      saleRules: { db: parts.db, access: parts.redis.access },
      replicaLayout: { sales: parts.redis.sales, replication: parts.redis.replication, config },
      failover: parts.failover,
      shortBuckets: parts.shortBuckets,
      config,
    },
    config.ORIGIN_ROLE !== 'http',
  );
  failoverWatch.start();
  parts.log.info({ url, metricsUrl, role: config.ORIGIN_ROLE }, 'origin started');

  let stopped: Promise<void> | null = null;
  return {
    parts,
    url,
    metricsUrl,
    settlement,
    lifecycle,
    failoverWatch,
    stop() {
      stopped ??= (async () => {
        await Promise.all(
          servers.map(
            (s) =>
              new Promise<void>((resolve) => {
                s.close(() => resolve());
                s.closeIdleConnections?.();
              }),
          ),
        );
        await liveList?.stop();
        await denyPush?.stop();
        await series?.stop();
        await failoverWatch.stop();
        await settlement?.stop();
        if (lifecycle)
          await Promise.all([
            lifecycle.timeouts.stop(),
            lifecycle.outbox.stop(),
            lifecycle.reconciliation.stop(),
            lifecycle.orderEvents?.stop(),
            lifecycle.shadowOrderEvents?.stop(),
            lifecycle.draws.stop(),
            lifecycle.warmups.stop(),
            lifecycle.releases.stop(),
          ]);
        await parts.close();
      })();
      return stopped;
    },
  };
}
