/**
 * The order-event worker (DESIGN §10): delivers order_event_outbox rows to ORDER_EVENTS_URL.
 * A round claims due events with a lease (origin/db/order-events.ts: `FOR UPDATE SKIP LOCKED`,
 * committed before any POST), POSTs each signed event — at most ORDER_EVENTS_CONCURRENCY at once;
 * a claim holds at most one event per order, and an order's later event is not claimed while an
 * earlier one is undelivered, so each order's events arrive in order — then deletes the delivered
 * (2xx) ones in one statement. A failed try is due again after an exponential backoff with jitter; after
 * ORDER_EVENTS_MAX_ATTEMPTS tries it is parked for an operator (admin list + retry).
 *
 * At least once: a worker killed mid-delivery leaves its claimed rows in place, claimed again once
 * the lease (> the POST timeout) runs out; the receiver may then see an event twice, with the same
 * id. Safe with many origin instances (SKIP LOCKED + leases).
 */
import { signOrderEvent, type OrderEventBody } from '../../contract/order-events.js';
import type { OriginConfig } from '../config.js';
import { inTransaction, type Db } from '../db/pool.js';
import { claimOrderEvents, markDelivered, markFailed, type OrderEventRow } from '../db/order-events.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { PeriodicJob } from './periodic.js';

type Settings = Pick<
  OriginConfig,
  | 'ORDER_EVENTS_SECRET'
  | 'ORDER_EVENTS_MAX_ATTEMPTS'
  | 'ORDER_EVENTS_BACKOFF_MS'
  | 'ORDER_EVENTS_BACKOFF_MAX_MS'
  | 'ORDER_EVENTS_TIMEOUT_MS'
  | 'ORDER_EVENTS_LEASE_MS'
  | 'ORDER_EVENTS_POLL_MS'
  | 'ORDER_EVENTS_BATCH_SIZE'
  | 'ORDER_EVENTS_CONCURRENCY'
> & { ORDER_EVENTS_URL: string };

export function orderEventBody(row: OrderEventRow): string {
  const body: OrderEventBody = {
    id: row.eventId,
    type: row.type,
    orderNo: row.orderNo,
    activityId: row.activityId,
    userId: row.userId,
    quantity: row.quantity,
    at: row.occurredAt.toISOString(),
  };
  return JSON.stringify(body);
}

/** Delay before try n+1 after n failed tries: base·2^(n−1), capped, then "equal jitter" (½..1×). */
export function backoffMs(failedTries: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failedTries - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export class OrderEventWorker extends PeriodicJob {
  private readonly settings: Settings;

  constructor(
    private readonly deps: { db: Db; log: Logger; metrics: Metrics },
    settings: Settings,
  ) {
    super('order-events', settings.ORDER_EVENTS_POLL_MS, deps.log);
    this.settings = settings;
  }

  async round(): Promise<boolean> {
    const s = this.settings;
    // READ COMMITTED: the claim must not lock the gap that settlement's new event rows go into.
    const rows = await inTransaction(
      this.deps.db,
      (tx) => claimOrderEvents(tx, s.ORDER_EVENTS_BATCH_SIZE, s.ORDER_EVENTS_LEASE_MS),
      { readCommitted: true },
    );
    let next = 0;
    const delivered: OrderEventRow[] = [];
    await Promise.all(
      Array.from({ length: Math.min(s.ORDER_EVENTS_CONCURRENCY, rows.length) }, async () => {
        while (next < rows.length) {
          const row = rows[next++]!;
          if ((await this.deliver(row)) === 'delivered') delivered.push(row);
        }
      }),
    );
    // One DELETE per round, not one commit per event (a crash before it means redelivery: at least once).
    await markDelivered(
      this.deps.db,
      delivered.map((r) => r.seq),
    );
    for (const r of delivered) this.deps.metrics.orderEventsDelivered.inc({ type: r.type });
    return rows.length === s.ORDER_EVENTS_BATCH_SIZE;
  }

  /** One POST of one claimed event; a failed try is backed off or parked at once. */
  async deliver(row: OrderEventRow): Promise<'delivered' | 'retry' | 'parked'> {
    const s = this.settings;
    const body = orderEventBody(row);
    let error: string;
    try {
      const res = await fetch(s.ORDER_EVENTS_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(await signOrderEvent(s.ORDER_EVENTS_SECRET!, body)) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(s.ORDER_EVENTS_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return 'delivered';
      error = `HTTP ${res.status}`;
    } catch (err) {
      error =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${s.ORDER_EVENTS_TIMEOUT_MS} ms`
          : String((err as Error).message);
    }
    const park = row.attempts >= s.ORDER_EVENTS_MAX_ATTEMPTS;
    const retryInMs = backoffMs(row.attempts, s.ORDER_EVENTS_BACKOFF_MS, s.ORDER_EVENTS_BACKOFF_MAX_MS);
    await markFailed(this.deps.db, row, error, park ? { park: true } : { park: false, retryInMs });
    const fields = { eventId: row.eventId, attempts: row.attempts, err: error };
    if (park) {
      this.deps.metrics.orderEventsParked.inc({ type: row.type });
      this.log.error(fields, 'order event parked: delivery failed ORDER_EVENTS_MAX_ATTEMPTS times');
      return 'parked';
    }
    this.log.warn({ ...fields, retryInMs }, 'order event delivery failed; will retry');
    return 'retry';
  }
}

/** The process's worker, or null when ORDER_EVENTS_URL is unset (then no events are written either). */
export function orderEventWorkerFor(ctx: { config: OriginConfig; db: Db; log: Logger; metrics: Metrics }) {
  const { config } = ctx;
  if (!config.ORDER_EVENTS_URL) return null;
  return new OrderEventWorker(ctx, { ...config, ORDER_EVENTS_URL: config.ORDER_EVENTS_URL });
}
