/**
 * Settlement consumers of one process: finds warmed activities (the registry hash written by
 * warm-up) and runs `SETTLE_WORKERS` StreamSettlers on each; a sale that leaves the registry (its
 * cleanup) has its settlers stopped at the next discovery, before its Streams expire.
 * `start()` / `stop()`; stop drains the entry in hand and returns.
 */
import { hostname } from 'node:os';
import { randomHex } from '../../contract/ids.js';
import { findActivity } from '../sale/sale-store.js';
import { ledgerOf, orderEventsOn } from '../orders/ledger.js';
import type { OriginConfig } from '../platform/config.js';
import type { Db } from '../platform/db/pool.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { SaleRegistry } from '../redis/sale-registry.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { SaleStreams } from '../redis/sale-streams.js';
import { StreamSettler } from './stream-settler.js';

/** What settlement uses: the warmed sales, their Streams' readers, MySQL, and the settlers' own deps. */
export interface SettlementDeps {
  db: Db;
  /** The warmed sales to settle (the registry hash written by warm-up). */
  registry: Pick<SaleRegistry, 'warmedSales'>;
  streams: Pick<SaleStreams, 'openEventReaders'>;
  /** The settlers' compensation (release) of surplus and dead-lettered reservations. */
  sales: Pick<SaleStock, 'release'>;
  log: Logger;
  metrics: Metrics;
  config: Pick<
    OriginConfig,
    | 'ORDER_EVENTS_URL'
    | 'SHADOW_ORDER_EVENTS_URL'
    | 'ORDER_EVENTS_BATCH_SIZE'
    | 'SETTLE_DISCOVERY_MS'
    | 'SETTLE_WORKERS'
    | 'SETTLE_BATCH_SIZE'
    | 'SETTLE_BLOCK_MS'
    | 'SETTLE_LINGER_MS'
    | 'SETTLE_CLAIM_IDLE_MS'
    | 'SETTLE_MAX_DELIVERIES'
    | 'SETTLE_RETRY_BACKOFF_MS'
  >;
}

export class Settlement {
  private readonly settlers = new Map<string, StreamSettler[]>();
  private discovery: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly lastFailure = new Map<string, string>();
  private readonly instance = `${hostname()}:${process.pid}:${randomHex(3)}`;
  /** When a consumer's read last filled a whole batch (more were waiting): settlement is behind. */
  private lastFullReadAt = 0;

  constructor(private readonly deps: SettlementDeps) {}

  async start(): Promise<void> {
    await this.discover();
    const tick = () => {
      this.discovery = setTimeout(() => {
        this.discover()
          .catch((err: Error) => this.deps.log.warn({ err: err.message }, 'settlement discovery failed'))
          .finally(() => !this.stopping && tick());
      }, this.deps.config.SETTLE_DISCOVERY_MS);
    };
    tick();
  }

  /**
   * True when one of this process's consumers read a whole batch (SETTLE_BATCH_SIZE: more were
   * waiting) within the last `windowMs`: a backlog, as in a sale's storm. A steady trickle, read a
   * few at a time, is not one.
   */
  behindWithin(windowMs: number): boolean {
    return Date.now() - this.lastFullReadAt < windowMs;
  }

  /** Activities being settled by this process. */
  get activities(): string[] {
    return [...this.settlers.keys()];
  }

  async discover(): Promise<void> {
    const sales = await this.deps.registry.warmedSales();
    await this.retire(new Set(sales.map((s) => s.activityId)));
    for (const sale of sales) {
      const { activityId } = sale;
      if (this.stopping || this.settlers.has(activityId)) continue;
      const record = await findActivity(this.deps.db, activityId);
      if (!record) continue;
      const c = this.deps.config;
      const target = {
        ...sale,
        paymentTimeoutSeconds: record.config.paymentTimeoutSeconds,
        // A shadow sale (docs/rehearsal.md): the shadow tables, its events only to SHADOW_ORDER_EVENTS_URL.
        shadow: record.shadow,
        orderEvents: orderEventsOn(c, ledgerOf(record)),
        orderEventsPerRow: c.ORDER_EVENTS_BATCH_SIZE,
      };
      const workers: StreamSettler[] = [];
      // SETTLE_WORKERS consumers on each bucket's Stream.
      for (let i = 0; i < c.SETTLE_WORKERS; i++) {
        for (const reader of this.deps.streams.openEventReaders(sale, `${this.instance}:${i}`, c.SETTLE_BLOCK_MS)) {
          const settler = new StreamSettler(
            {
              db: this.deps.db,
              reader,
              store: this.deps.sales,
              log: this.deps.log,
              metrics: this.deps.metrics,
              lastFailure: this.lastFailure,
              onFullRead: () => {
                this.lastFullReadAt = Date.now();
              },
            },
            target,
            {
              batchSize: c.SETTLE_BATCH_SIZE,
              blockMs: c.SETTLE_BLOCK_MS,
              lingerMs: c.SETTLE_LINGER_MS,
              claimIdleMs: c.SETTLE_CLAIM_IDLE_MS,
              maxDeliveries: c.SETTLE_MAX_DELIVERIES,
              retryBackoffMs: c.SETTLE_RETRY_BACKOFF_MS,
            },
          );
          settler.start();
          workers.push(settler);
        }
      }
      this.settlers.set(activityId, workers);
      this.deps.log.info({ activityId, workers: workers.length, buckets: sale.buckets }, 'settling activity');
    }
  }

  /**
   * Stops the settlers of sales no longer listed: a cleaned-up sale's Streams expire after its
   * retention, and a settler left on them would fail every round. Said once per sale.
   */
  private async retire(listed: Set<string>): Promise<void> {
    for (const [activityId, workers] of this.settlers) {
      if (listed.has(activityId)) continue;
      this.settlers.delete(activityId);
      await Promise.all(workers.map((s) => s.stop()));
      await Promise.allSettled(workers.map((s) => s.close()));
      this.deps.log.info({ activityId, workers: workers.length }, 'sale left the registry: its settlers stopped');
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.discovery) clearTimeout(this.discovery);
    await Promise.all([...this.settlers.values()].flat().map((s) => s.stop()));
    await Promise.allSettled([...this.settlers.values()].flat().map((s) => s.close()));
  }
}
