/**
 * The shared parts one origin process holds: config, logger, metrics, MySQL pool, the Redis store
 * (all of Redis, one object per job), catalog, sold-out flags, edge push, publisher, failover gate.
 * Built once at start and closed on stop. Only the composition root sees this object (server.ts,
 * app.ts, report-cli.ts): it hands each service exactly the parts that service names in its own deps
 * type; no feature module imports it (test/repo/code-shape.test.ts).
 */
import { ActivityCatalog } from './sale/catalog.js';
import { SnapshotPublisher } from './sale/snapshot-publisher.js';
import { findActivity } from './sale/sale-store.js';
import type { OriginConfig } from './platform/config.js';
import { createPool, observeTransactions, type Db } from './platform/db/pool.js';
import { pingMysql } from './platform/db/server-status.js';
import { createEdgePush, type EdgePush } from './platform/edge-push.js';
import { createLogger, type Logger } from './platform/logger.js';
import { FailoverGate } from './recovery/failover-gate.js';
import { ShortBuckets } from './sale/replica-layout.js';
import { SaleSeriesStore } from './watch/sale-series.js';
import { AuthFailureLog } from './platform/http/auth-failures.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { RedisStore } from './redis/redis-store.js';
import { findDraw, publicDraw } from './lottery/draw-store.js';
import { SoldOutFlags } from './sale/sold-out.js';
import { LotteryAdmission } from './lottery/admission.js';
import { StockWatch } from './reservation/stock-watch.js';
import { createReserveGate } from './reservation/reserve-gate.js';
import type { InFlightGate } from './platform/http/middleware.js';

/** At most one 'slow MySQL transactions' log line this often (the metric counts every one). */
const SLOW_TX_LOG_EVERY_MS = 5_000;

export interface OriginParts {
  config: OriginConfig;
  log: Logger;
  metrics: Metrics;
  db: Db;
  /** All of Redis, one object per job (redis/redis-store.ts): `redis.requests.reserve(…)`, `redis.sales.warmup(…)`, … */
  redis: RedisStore;
  catalog: ActivityCatalog;
  /** The sold-out flags, read-only here: set or clear them with `publisher.setSoldOut`, which pushes the edge. */
  soldOut: Pick<SoldOutFlags, 'has'>;
  pushEdge: EdgePush;
  /** Builds an activity's snapshot and pushes it to the edge: the one place that does. */
  publisher: SnapshotPublisher;
  /** Sales closed after a Redis failover until recovery proves their state (recovery/failover-watch.ts). */
  failover: FailoverGate;
  /** Units in buckets whose primary is short of replicas (sale/replica-layout.ts; set by the failover watch). */
  shortBuckets: ShortBuckets;
  /** The console's per-second series of each sale in its window, bounded (watch/sale-series.ts; fed by console/series-job.ts). */
  series: SaleSeriesStore;
  /** Lottery activities: entry window, then drawing, then FCFS (docs/design.md §10). */
  lotteryAdmission: LotteryAdmission;
  /** Pushes the edge when reservations cross the stock hint / early sold-out lines (docs/design.md §10). */
  stockWatch: StockWatch;
  /** RESERVE_MAX_IN_FLIGHT: one count per origin for every reserve chain it runs. */
  reserveGate: InFlightGate;
  /** Refused credentials, counted and logged sampled (platform/http/auth-failures.ts). */
  authFailures: AuthFailureLog;
  close(): Promise<void>;
}

export async function buildOriginParts(
  config: OriginConfig,
  log = createLogger(config.LOG_LEVEL),
): Promise<OriginParts> {
  const metrics = createMetrics();
  const db = createPool(config.MYSQL_URL, config.MYSQL_POOL_SIZE, config.MYSQL_PREPARED_STATEMENTS);
  const redis = await RedisStore.connect({
    redis: { url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES?.split(',') },
    requestTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    opsTimeoutMs: config.REDIS_OPS_TIMEOUT_MS,
    breaker: {
      failureThreshold: config.REDIS_BREAKER_FAILURES,
      openMs: config.REDIS_BREAKER_OPEN_MS,
      observe(seconds, failed) {
        metrics.redisLatency.observe(seconds);
        if (failed) metrics.redisErrors.inc();
      },
    },
    log,
    borrowWaitMs: config.BORROW_WAIT_MS,
    keyPrefix: config.REDIS_KEY_PREFIX,
    wait: { replicas: config.REDIS_WAIT_REPLICAS, timeoutMs: config.REDIS_WAIT_TIMEOUT_MS },
  });
  await pingMysql(db);

  const pushEdge = createEdgePush({
    edgeUrl: config.EDGE_URL,
    secret: config.EDGE_ORIGIN_SECRET,
    timeoutMs: config.EDGE_PUSH_TIMEOUT_MS,
    log,
  });
  const catalog = new ActivityCatalog(db);
  // Every slow transaction counts; the log gets one line per SLOW_TX_LOG_EVERY_MS with how many and
  // the slowest, so a struggling database during a sale does not also flood the logs.
  let slow = { count: 0, maxMs: 0, loggedAt: 0 };
  observeTransactions(db, (seconds, committed) => {
    metrics.dbTransactions.observe({ outcome: committed ? 'commit' : 'rollback' }, seconds);
    const ms = Math.round(seconds * 1000);
    if (ms < config.DB_SLOW_TX_MS) return;
    metrics.dbSlowTransactions.inc();
    slow.count++;
    slow.maxMs = Math.max(slow.maxMs, ms);
    const now = Date.now();
    if (now - slow.loggedAt >= SLOW_TX_LOG_EVERY_MS) {
      log.warn(
        { slowTransactions: slow.count, slowestMs: slow.maxMs, thresholdMs: config.DB_SLOW_TX_MS },
        'slow MySQL transactions',
      );
      slow = { count: 0, maxMs: 0, loggedAt: now };
    }
  });

  const flags = new SoldOutFlags(redis.soldOut, log);
  const failover = new FailoverGate();
  const shortBuckets = new ShortBuckets();
  metrics.redisWaitReplicas.set(config.REDIS_WAIT_REPLICAS);
  const publisher = new SnapshotPublisher({
    db,
    stock: redis.sales,
    soldOut: flags,
    pushEdge,
    failover,
    shortBuckets,
    log,
    publicDraw: async (activityId) => {
      const draw = await findDraw(db, activityId);
      return draw ? publicDraw(draw) : null;
    },
  });
  // Stock lines crossed change what the edge shows: publish it.
  const publish = (activityId: string) => void publisher.publish(activityId).catch(() => undefined);
  const stockWatch = new StockWatch(
    async (activityId) => {
      const record = await findActivity(db, activityId);
      return (
        record && { onSale: record.initialStock - record.heldBack, threshold: record.config.soldOutThreshold ?? 0 }
      );
    },
    publish,
    (sale) => redis.sales.stock(sale),
  );

  const parts: OriginParts = {
    config,
    log,
    metrics,
    db,
    redis,
    catalog,
    soldOut: flags,
    pushEdge,
    publisher,
    lotteryAdmission: new LotteryAdmission(db, redis.lotteryEntries),
    stockWatch,
    reserveGate: createReserveGate({ config, metrics }),
    authFailures: new AuthFailureLog({ metrics, intervalMs: config.AUTH_FAILURE_LOG_INTERVAL_MS }),
    failover,
    shortBuckets,
    series: new SaleSeriesStore(config.CONSOLE_SERIES_POINTS, config.CONSOLE_SERIES_SALES),
    async close() {
      await Promise.allSettled([redis.close(), db.end()]);
    },
  };
  await flags.start();
  return parts;
}

/**
 * What the operator's sale work uses (create, change, switch, warm up, tranches, reconcile): the
 * admin routes, the lifecycle routes and the warm-up job are each handed this, plus their own.
 */
export function saleOperationParts(parts: OriginParts) {
  return {
    db: parts.db,
    log: parts.log,
    metrics: parts.metrics,
    config: parts.config,
    catalog: parts.catalog,
    publisher: parts.publisher,
    stockWatch: parts.stockWatch,
    sales: parts.redis.sales,
    access: parts.redis.access,
    registry: parts.redis.registry,
    replication: parts.redis.replication,
    ledger: parts.redis.ledger,
  };
}
