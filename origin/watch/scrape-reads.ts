/**
 * The reads /metrics makes when scraped: Redis clients and slow log per node, MySQL status and the
 * pool, open dead letters, Stream backlog per sale, the order-event outbox and the edge's figures.
 * Each read is bounded by METRICS_READ_TIMEOUT_MS (a slow source keeps its last values and counts
 * in seckill_metrics_read_failures_total, so a scrape never hangs on a struggling Redis or MySQL),
 * and one round of reads is reused for METRICS_CACHE_MS, so several scrapers cost one round.
 */
import { publicState, type PublicState } from '../../contract/activity.js';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import { poolState, readServerStatus } from '../platform/db/server-status.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { collectOrderEventGauges } from '../orders/order-event-routes.js';
import type { FailoverGate } from '../recovery/failover-gate.js';
import { openDeadLetterCounts } from '../orders/dead-letter-store.js';
import type { ReplicationWatch } from '../redis/replication-watch.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import { collectStreamGauges } from '../settlement/stream-stats.js';
import { edgeFiguresSink, fetchEdgeFigures } from './edge-figures.js';
import { CounterMirror } from './mirror.js';

/**
 * What the scrape-time reads use: MySQL, Redis's warmed sales, units and node figures, each sale's
 * snapshot, this process's failover gate, what the Stream and order-event gauges use
 * (settlement/stream-stats.ts, orders/order-event-routes.ts), and the edge's channel.
 */
export interface ScrapeReadDeps {
  db: Db;
  log: Logger;
  metrics: Metrics;
  registry: Pick<SaleRegistry, 'warmedSales'>;
  sales: Pick<SaleStock, 'bucketStocks'>;
  replication: Pick<ReplicationWatch, 'nodeStats'>;
  publisher: Pick<SnapshotPublisher, 'snapshot'>;
  failover: Pick<FailoverGate, 'isClosed'>;
  streamGauges: StreamGaugeInput;
  orderEventGauges: OrderEventGaugeInput;
  config: Pick<
    OriginConfig,
    'EDGE_ORIGIN_SECRET' | 'EDGE_URL' | 'METRICS_CACHE_MS' | 'METRICS_READ_TIMEOUT_MS' | 'ORIGIN_ROLE'
  >;
}

/** What collectStreamGauges (settlement/stream-stats.ts) is handed. */
export type StreamGaugeInput = Parameters<typeof collectStreamGauges>[0];
/** What collectOrderEventGauges (orders/order-event-routes.ts) is handed. */
export type OrderEventGaugeInput = Parameters<typeof collectOrderEventGauges>[0];

const PUBLIC_STATES: PublicState[] = ['upcoming', 'open', 'sold_out', 'paused', 'ended'];

/**
 * Per warmed sale: its phase, units left per bucket, whether a failover holds it closed here, and
 * whether it is a shadow sale (`seckill_shadow_sale`, which the per-sale alert rules leave out).
 */
async function collectSaleGauges(deps: ScrapeReadDeps): Promise<void> {
  const sales = await deps.registry.warmedSales();
  const read = await Promise.all(
    sales.map(async (sale) => ({
      sale,
      snapshot: await deps.publisher.snapshot(sale.activityId),
      stocks: await deps.sales.bucketStocks(sale),
    })),
  );
  const now = Date.now();
  deps.metrics.saleState.reset();
  deps.metrics.stockLeft.reset();
  deps.metrics.shadowSale.reset();
  for (const { sale, snapshot, stocks } of read) {
    const activity = sale.activityId;
    if (sale.shadow) deps.metrics.shadowSale.set({ activity }, 1);
    if (snapshot) {
      const phase = publicState(snapshot, now);
      for (const state of PUBLIC_STATES) deps.metrics.saleState.set({ activity, state }, state === phase ? 1 : 0);
    }
    stocks.forEach((units, bucket) => {
      if (units !== null) deps.metrics.stockLeft.set({ activity, bucket: String(bucket) }, units);
    });
    deps.metrics.failoverClosed.set({ activity }, deps.failover.isClosed(activity) ? 1 : 0);
  }
}

export class ScrapeReads {
  private round: Promise<void> | null = null;
  private roundAt = 0;
  private readonly sources: [string, () => Promise<void>][];

  constructor(private readonly deps: ScrapeReadDeps) {
    const { metrics: m, config } = deps;
    const slowlog = new CounterMirror(m.redisSlowlogEntries);
    const slowQueries = new CounterMirror(m.mysqlSlowQueries);
    this.sources = [
      [
        'redis_nodes',
        async () => {
          for (const n of await deps.replication.nodeStats()) {
            m.redisConnectedClients.set({ node: n.node }, n.connectedClients);
            m.redisMaxclients.set({ node: n.node }, n.maxclients);
            slowlog.set(n.slowlogEntries, { node: n.node });
          }
        },
      ],
      [
        'mysql_status',
        async () => {
          const s = await readServerStatus(deps.db);
          m.mysqlThreadsRunning.set(s.threadsRunning);
          m.mysqlThreadsConnected.set(s.threadsConnected);
          m.mysqlMaxConnections.set(s.maxConnections);
          slowQueries.set(s.slowQueries);
        },
      ],
      [
        'dead_letters',
        async () => {
          const [open, sales] = await Promise.all([openDeadLetterCounts(deps.db), deps.registry.warmedSales()]);
          m.deadLettersOpen.reset();
          // Every warmed sale shows, 0 included, so a screen tells "none" from "not read".
          for (const sale of sales) m.deadLettersOpen.set({ activity: sale.activityId }, 0);
          for (const [activity, n] of open) m.deadLettersOpen.set({ activity }, n);
        },
      ],
      ['sales', () => collectSaleGauges(deps)],
      ['streams', () => collectStreamGauges(deps.streamGauges)],
      ['order_events', () => collectOrderEventGauges(deps.orderEventGauges)],
    ];
    if (config.EDGE_URL && config.ORIGIN_ROLE !== 'consumers') {
      const edgeUrl = config.EDGE_URL;
      const sink = edgeFiguresSink(m);
      this.sources.push([
        'edge',
        async () => sink(await fetchEdgeFigures(edgeUrl, config.EDGE_ORIGIN_SECRET, config.METRICS_READ_TIMEOUT_MS)),
      ]);
    }
  }

  /** Brings the scrape-time series up to date (at most one round per METRICS_CACHE_MS). */
  collect(): Promise<void> {
    const now = Date.now();
    if (this.round && now - this.roundAt < this.deps.config.METRICS_CACHE_MS) return this.round;
    this.roundAt = now;
    this.round = Promise.all(this.sources.map(([name, read]) => this.bounded(name, read))).then(() => undefined);
    return this.round;
  }

  private async bounded(source: string, read: () => Promise<void>): Promise<void> {
    const limitMs = this.deps.config.METRICS_READ_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        read(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${limitMs} ms`)), limitMs);
        }),
      ]);
    } catch (err) {
      this.deps.metrics.scrapeReadFailures.inc({ source });
      this.deps.log.debug({ source, err: (err as Error).message }, 'metrics read failed');
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The pool's figures need no read: set them from the pool itself on every scrape. */
export function setPoolGauges(db: Db, metrics: Pick<Metrics, 'dbPoolConnections' | 'dbPoolLimit'>): void {
  const pool = poolState(db);
  metrics.dbPoolConnections.set({ state: 'in_use' }, pool.inUse);
  metrics.dbPoolConnections.set({ state: 'idle' }, pool.idle);
  metrics.dbPoolLimit.set(pool.limit);
}
