/**
 * Feeds the console's series store (sale-series.ts) once a second for every sale in its window:
 * from CONSOLE_SERIES_LEAD_SECONDS before its start to a minute after its end, unless stopped.
 * While a sale is in its window the origin makes the scrape-time reads (scrape-reads.ts, shared with
 * /metrics and bounded the same way) every second, so the edge's funnel, Redis's and MySQL's figures
 * are current without a Prometheus; with no sale in a window it reads nothing.
 *
 * Counts come from this process's registry (as the console's live view): with several origin
 * processes each keeps the series of its own share.
 */
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import { poolState } from '../platform/db/server-status.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { PeriodicJob } from '../platform/periodic.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SaleStreams } from '../redis/sale-streams.js';
import type { Sale } from '../redis/sale.js';
import { findActivity, latestSales, saleOf } from '../sale/sale-store.js';
import { SALES_LIST_LIMIT } from './sale-console.js';
import { readFunnel, total } from './sale-signals.js';
import type { SaleSeriesStore, SeriesColumn, SeriesSample } from '../watch/sale-series.js';
import type { ScrapeReads } from '../watch/scrape-reads.js';

/** One sample a second. */
export const SERIES_SAMPLE_MS = 1_000;
/**
 * A read of Redis a round waits for at most this long (one sample's time): past it the point keeps
 * what the origin knows itself (its answers, its funnel) and records the Redis figures as unknown,
 * so a Redis that hangs does not stall the series — the moment the operator most needs it.
 */
const within = <T>(read: Promise<T>, fallback: T): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), SERIES_SAMPLE_MS);
    timer.unref();
  });
  return Promise.race([read.catch(() => fallback), late]).finally(() => clearTimeout(timer));
};

/** The sales list is read again this often (a new sale enters its window within this). */
const LIST_REFRESH_MS = 5_000;
/** A sale is still sampled this long after its end (the last orders settle, the curves come down). */
const AFTER_END_MS = 60_000;

export interface SeriesJobDeps {
  db: Db;
  log: Logger;
  metrics: Pick<Metrics, 'registry'>;
  streams: Pick<SaleStreams, 'groupInfo'>;
  sales: Pick<SaleStock, 'bucketStocks'>;
  scrapeReads: Pick<ScrapeReads, 'collect'>;
  store: SaleSeriesStore;
  config: Pick<OriginConfig, 'CONSOLE_SERIES_LEAD_SECONDS'>;
}

/** The running totals a sample turns into counts over its interval. */
type TotalColumn = Extract<
  SeriesColumn,
  | 'clicks'
  | 'tickets'
  | 'admitted'
  | 'reserved'
  | 'settled'
  | 'paid'
  | 'answers'
  | 'decided'
  | 'slowlog'
  | 'slowQueries'
>;
type Totals = Record<TotalColumn, number | null>;

interface Tracked {
  sale: Sale;
  startsAt: number;
  endsAt: number;
  stopped: boolean;
}

export class SeriesJob extends PeriodicJob {
  private list: Tracked[] = [];
  private listAt = 0;
  private readonly salesById = new Map<string, Sale>();
  private readonly previous = new Map<string, { at: number; totals: Totals }>();

  constructor(private readonly deps: SeriesJobDeps) {
    super('console-series', SERIES_SAMPLE_MS, deps.log);
  }

  /** The sales in their window now. */
  private async inWindow(now: number): Promise<Tracked[]> {
    if (now - this.listAt >= LIST_REFRESH_MS) {
      this.listAt = now;
      const rows = await latestSales(this.deps.db, SALES_LIST_LIMIT);
      const list: Tracked[] = [];
      for (const r of rows) {
        const id = String(r.id);
        let sale = this.salesById.get(id);
        if (!sale) {
          const record = await findActivity(this.deps.db, id);
          if (!record) continue;
          sale = saleOf(record);
          this.salesById.set(id, sale);
        }
        list.push({
          sale,
          startsAt: r.starts_at.getTime(),
          endsAt: r.ends_at.getTime(),
          stopped: r.state === 'stopped',
        });
      }
      this.list = list;
    }
    const leadMs = this.deps.config.CONSOLE_SERIES_LEAD_SECONDS * 1000;
    return this.list.filter((s) => !s.stopped && now >= s.startsAt - leadMs && now <= s.endsAt + AFTER_END_MS);
  }

  async round(): Promise<boolean> {
    const now = Date.now();
    const active = await this.inWindow(now);
    for (const id of this.previous.keys()) if (!active.some((s) => s.sale.activityId === id)) this.previous.delete(id);
    if (active.length === 0) return false;
    const { registry } = this.deps.metrics;
    await within(this.deps.scrapeReads.collect(), undefined);
    const pool = poolState(this.deps.db);
    const [answers, decided, slowlog, slowQueries, clients, running, connected] = await Promise.all([
      total(registry, 'seckill_order_answers_total'),
      total(registry, 'seckill_order_answers_total', { where: (l) => String(l.decided) === 'true' }),
      total(registry, 'seckill_redis_slowlog_entries_total'),
      total(registry, 'seckill_mysql_slow_queries_total'),
      total(registry, 'seckill_redis_connected_clients'),
      total(registry, 'seckill_mysql_threads_running'),
      total(registry, 'seckill_mysql_threads_connected'),
    ]);
    await Promise.all(
      active.map(async ({ sale, endsAt }) => {
        const id = sale.activityId;
        const [funnel, stream, stocks] = await Promise.all([
          readFunnel(registry, id),
          within(this.deps.streams.groupInfo(sale), null),
          within(this.deps.sales.bucketStocks(sale), [] as (number | null)[]),
        ]);
        const totals: Totals = { ...funnel, answers, decided, slowlog, slowQueries };
        const before = this.previous.get(id);
        this.previous.set(id, { at: now, totals });
        const counted = (name: keyof Totals) => {
          const a = totals[name];
          const b = before?.totals[name];
          return a === null || b === null || b === undefined ? null : Math.max(0, a - b);
        };
        const known = stocks.filter((u): u is number => u !== null);
        const sample: SeriesSample = {
          clicks: counted('clicks'),
          tickets: counted('tickets'),
          admitted: counted('admitted'),
          reserved: counted('reserved'),
          settled: counted('settled'),
          paid: counted('paid'),
          answers: counted('answers'),
          decided: counted('decided'),
          slowlog: counted('slowlog'),
          slowQueries: counted('slowQueries'),
          backlog: stream ? stream.pending + stream.lag : null,
          redisClients: clients,
          mysqlRunning: running,
          mysqlConnected: connected,
          poolInUse: pool.inUse,
          poolLimit: pool.limit,
          unitsLeft: known.length > 0 ? known.reduce((s, u) => s + u, 0) : null,
          buckets: stocks,
        };
        const from = before ? before.at : now - SERIES_SAMPLE_MS;
        this.deps.store.tableOf(id, sale.buckets, endsAt).push(from / 1000, (now - from) / 1000, sample);
      }),
    );
    return false;
  }
}
