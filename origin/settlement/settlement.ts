/**
 * Settlement consumers of one process: finds warmed activities (the registry hash written by
 * warm-up) and runs `SETTLE_WORKERS` StreamSettlers on each. `start()` / `stop()`; stop drains the
 * entry in hand and returns.
 */
import { hostname } from 'node:os';
import { randomHex } from '../../contract/ids.js';
import { findActivity } from '../sale/sale-store.js';
import type { OriginContext } from '../context.js';
import { StreamSettler } from './stream-settler.js';

/** What settlement uses of the origin's context. */
export type SettlementDeps = Pick<OriginContext, 'config' | 'db' | 'log' | 'metrics' | 'stock'>;

export class Settlement {
  private readonly settlers = new Map<string, StreamSettler[]>();
  private discovery: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly lastFailure = new Map<string, string>();
  private readonly instance = `${hostname()}:${process.pid}:${randomHex(3)}`;
  private lastEntriesAt = 0;

  constructor(private readonly ctx: SettlementDeps) {}

  async start(): Promise<void> {
    await this.discover();
    const tick = () => {
      this.discovery = setTimeout(() => {
        this.discover()
          .catch((err) => this.ctx.log.warn({ err: err.message }, 'settlement discovery failed'))
          .finally(() => !this.stopping && tick());
      }, this.ctx.config.SETTLE_DISCOVERY_MS);
    };
    tick();
  }

  /** True when one of this process's consumers read entries to settle within the last `windowMs`. */
  busyWithin(windowMs: number): boolean {
    return Date.now() - this.lastEntriesAt < windowMs;
  }

  /** Activities being settled by this process. */
  get activities(): string[] {
    return [...this.settlers.keys()];
  }

  async discover(): Promise<void> {
    for (const sale of await this.ctx.stock.registry.warmedSales()) {
      const { activityId } = sale;
      if (this.stopping || this.settlers.has(activityId)) continue;
      const record = await findActivity(this.ctx.db, activityId);
      if (!record) continue;
      const c = this.ctx.config;
      const target = {
        ...sale,
        paymentTimeoutSeconds: record.config.paymentTimeoutSeconds,
        orderEvents: c.ORDER_EVENTS_URL !== undefined,
      };
      const workers: StreamSettler[] = [];
      // SETTLE_WORKERS consumers on each bucket's Stream.
      for (let i = 0; i < c.SETTLE_WORKERS; i++) {
        for (const reader of this.ctx.stock.streams.openEventReaders(
          sale,
          `${this.instance}:${i}`,
          c.SETTLE_BLOCK_MS,
        )) {
          const settler = new StreamSettler(
            {
              db: this.ctx.db,
              reader,
              store: this.ctx.stock.sales,
              log: this.ctx.log,
              metrics: this.ctx.metrics,
              lastFailure: this.lastFailure,
              onEntries: () => {
                this.lastEntriesAt = Date.now();
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
      this.ctx.log.info({ activityId, workers: workers.length, buckets: sale.buckets }, 'settling activity');
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.discovery) clearTimeout(this.discovery);
    await Promise.all([...this.settlers.values()].flat().map((s) => s.stop()));
    await Promise.allSettled([...this.settlers.values()].flat().map((s) => s.close()));
  }
}
