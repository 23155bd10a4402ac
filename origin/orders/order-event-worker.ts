/**
 * The order-event worker (docs/design.md §10): delivers order_event_outbox rows to ORDER_EVENTS_URL.
 * A round claims due rows with a lease (origin/orders/order-event-delivery-store.ts: `FOR UPDATE SKIP
 * LOCKED`, committed before any POST), POSTs each signed event — at most ORDER_EVENTS_CONCURRENCY at once;
 * a claim never holds two events of one order, as an order's later event is not claimed while an
 * earlier one is undelivered, so each order's events arrive in order — then deletes the rows
 * whose events were all delivered (2xx) in one statement. A failed try is due again after an
 * exponential backoff with jitter; after ORDER_EVENTS_MAX_ATTEMPTS tries it is parked for an
 * operator (admin list + retry). The failed events of a settlement batch row become rows of their
 * own, so one bad event never holds back or redelivers its batch.
 *
 * Delivery is undici's connection pool (keep-alive, ORDER_EVENTS_CONCURRENCY connections), signed
 * with node:crypto and a key object made once: fetch plus Web Crypto cost about three times the CPU
 * per event of node:http, and node:http about 1.3–1.5× the pool's, on the cores settlement and
 * MySQL share (docs/performance.md). Credentials in ORDER_EVENTS_URL are sent as HTTP Basic auth.
 *
 * At least once: a worker killed mid-delivery leaves its claimed rows in place, claimed again once
 * the lease (> the POST timeout) runs out; the receiver may then see an event twice, with the same
 * id. Safe with many origin instances (SKIP LOCKED + leases).
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Pool } from 'undici';
import {
  EVENT_SIGNATURE_HEADER,
  EVENT_TIMESTAMP_HEADER,
  orderEventSignedString,
  type OrderEventBody,
} from '../../contract/order-events.js';
import type { OriginConfig } from '../platform/config.js';
import { inTransaction, type Db } from '../platform/db/pool.js';
import {
  claimOrderEvents,
  markDelivered,
  markFailed,
  splitBatch,
  type FailedTry,
} from './order-event-delivery-store.js';
import type { OrderEvent } from './order-event-store.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { PeriodicJob } from '../platform/periodic.js';
import { REAL_LEDGER, SHADOW_LEDGER, type Ledger } from './ledger.js';

/** The worker's settings: ORDER_EVENTS_*, the URL set. */
export type OrderEventSettings = Pick<
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
  | 'ORDER_EVENTS_YIELD_MS'
> & { ORDER_EVENTS_URL: string };

/** What the worker uses: the outbox rows, log, metrics, and whether settlement here is busy. */
export interface OrderEventWorkerDeps {
  db: Db;
  log: Logger;
  metrics: Metrics;
  /** True while settlement in this process is behind (reads fill whole batches): delivery then waits (ORDER_EVENTS_YIELD_MS). */
  settling?: () => boolean;
  /** Whose outbox it delivers (origin/orders/ledger.ts): the real one unless named. */
  ledger?: Ledger;
}

export function orderEventBody(e: OrderEvent): string {
  const body: OrderEventBody = {
    id: e.eventId,
    type: e.type,
    orderNo: e.orderNo,
    activityId: e.activityId,
    userId: e.userId,
    quantity: e.quantity,
    at: e.occurredAt.toISOString(),
  };
  return JSON.stringify(body);
}

/** Delay before try n+1 after n failed tries: base·2^(n−1), capped, then "equal jitter" (½..1×). */
export function backoffMs(failedTries: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(failedTries - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Idle keep-alive connections close after this long (at most: a shorter keep-alive the receiver announces wins). */
const IDLE_SOCKET_MS = 4_000;

export class OrderEventWorker extends PeriodicJob {
  private readonly settings: OrderEventSettings;
  private readonly url: URL;
  private readonly key: KeyObject;
  private readonly pool: Pool;
  private readonly path: string;
  /** `Basic …` from the URL's user and password, or null. */
  private readonly authorization: string | null;

  /** Since when rounds have been deferred to settlement without a break; null when not waiting. */
  private waitingSince: number | null = null;
  private readonly ledger: Ledger;

  constructor(
    private readonly deps: OrderEventWorkerDeps,
    settings: OrderEventSettings,
  ) {
    super(deps.ledger?.shadow ? 'shadow-order-events' : 'order-events', settings.ORDER_EVENTS_POLL_MS, deps.log);
    this.settings = settings;
    this.ledger = deps.ledger ?? REAL_LEDGER;
    this.url = new URL(settings.ORDER_EVENTS_URL);
    this.key = createSecretKey(Buffer.from(settings.ORDER_EVENTS_SECRET!, 'utf8'));
    this.path = this.url.pathname + this.url.search;
    // As node:http does with a URL's credentials: decoded, then Basic auth.
    this.authorization =
      this.url.username || this.url.password
        ? `Basic ${Buffer.from(`${decodeURIComponent(this.url.username)}:${decodeURIComponent(this.url.password)}`).toString('base64')}`
        : null;
    this.pool = new Pool(this.url.origin, {
      connections: settings.ORDER_EVENTS_CONCURRENCY,
      keepAliveTimeout: IDLE_SOCKET_MS,
    });
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.pool.destroy();
  }

  /**
   * Settlement first (the orders are what the buyers wait for; events may follow a little later):
   * while this process's consumers are behind (a storm: their reads fill whole batches), skip rounds,
   * for ORDER_EVENTS_YIELD_MS in a row at most; then one round delivers (about ORDER_EVENTS_BATCH_SIZE
   * events: settlement writes rows of at most that many) and the next waits again. So in a long storm
   * events still trickle out, and a steady stream of orders (read a few at a time) never holds them.
   */
  private deferToSettlement(): boolean {
    const yieldMs = this.settings.ORDER_EVENTS_YIELD_MS;
    if (yieldMs === 0 || !(this.deps.settling?.() ?? false)) {
      this.waitingSince = null;
      return false;
    }
    const now = Date.now();
    this.waitingSince ??= now;
    if (now - this.waitingSince < yieldMs) return true;
    this.waitingSince = null; // waited long enough: this round delivers, the next one waits again
    return false;
  }

  async round(): Promise<boolean> {
    const s = this.settings;
    if (this.deferToSettlement()) return false;
    // READ COMMITTED: the claim must not lock the gap that settlement's new event rows go into.
    const rows = await inTransaction(
      this.deps.db,
      (tx) => claimOrderEvents(tx, this.ledger, s.ORDER_EVENTS_BATCH_SIZE, s.ORDER_EVENTS_LEASE_MS),
      { readCommitted: true },
    );
    const sends = rows.flatMap((row) => row.events.map((event) => ({ row, event, error: null as string | null })));
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(s.ORDER_EVENTS_CONCURRENCY, sends.length) }, async () => {
        while (next < sends.length) {
          const send = sends[next++]!;
          send.error = await this.post(send.event);
        }
      }),
    );
    const done: string[] = [];
    // Counted once per type and round, not once per event.
    const delivered = new Map<string, number>();
    for (const x of sends) if (x.error === null) delivered.set(x.event.type, (delivered.get(x.event.type) ?? 0) + 1);
    for (const [type, n] of delivered) this.deps.metrics.orderEventsDelivered.inc({ type }, n);
    for (const row of rows) {
      const mine = sends.filter((x) => x.row === row);
      const failed = mine.filter((x) => x.error !== null);
      if (failed.length === 0) done.push(row.seq);
      else if (row.eventId.startsWith('batch:')) {
        // Each failed event of the batch has had its first try.
        const next1 = this.afterFailure(1);
        await splitBatch(
          this.deps.db,
          this.ledger,
          row,
          failed.map((x) => ({ event: x.event, error: x.error!, next: next1 })),
        );
        for (const x of failed) this.reportFailure(x.event, 1, x.error!, next1);
      } else {
        const retry = this.afterFailure(row.attempts);
        await markFailed(this.deps.db, this.ledger, row, failed[0]!.error!, retry);
        this.reportFailure(failed[0]!.event, row.attempts, failed[0]!.error!, retry);
      }
    }
    // One DELETE per round, not one commit per event (a crash before it means redelivery: at least once).
    await markDelivered(this.deps.db, this.ledger, done);
    // A claim stops once it holds ORDER_EVENTS_BATCH_SIZE events: fewer means nothing else was due.
    return sends.length >= s.ORDER_EVENTS_BATCH_SIZE;
  }

  /** One signed POST; null when delivered (2xx), else why not. No redirect is followed. */
  async post(event: OrderEvent): Promise<string | null> {
    const s = this.settings;
    const body = orderEventBody(event);
    const ts = String(Date.now());
    const signature = createHmac('sha256', this.key).update(orderEventSignedString(ts, body)).digest('hex');
    // The whole try (connect, send, answer) within ORDER_EVENTS_TIMEOUT_MS. The abort signal is an
    // EventEmitter (undici takes one, as documented for `signal`): an AbortController per try (an
    // EventTarget undici listens on) is far costlier to make and to listen on than an emitter, once per
    // delivered event.
    const abort = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.emit('abort');
    }, s.ORDER_EVENTS_TIMEOUT_MS);
    try {
      const res = await this.pool.request({
        path: this.path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [EVENT_TIMESTAMP_HEADER]: ts,
          [EVENT_SIGNATURE_HEADER]: `v1=${signature}`,
          ...(this.authorization ? { authorization: this.authorization } : {}),
        },
        body,
        signal: abort,
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (err) {
      return timedOut ? `no answer within ${s.ORDER_EVENTS_TIMEOUT_MS} ms` : (err as Error).message;
    } finally {
      clearTimeout(timer);
    }
  }

  private afterFailure(tries: number): FailedTry {
    const s = this.settings;
    if (tries >= s.ORDER_EVENTS_MAX_ATTEMPTS) return { park: true };
    return { park: false, retryInMs: backoffMs(tries, s.ORDER_EVENTS_BACKOFF_MS, s.ORDER_EVENTS_BACKOFF_MAX_MS) };
  }

  private reportFailure(event: OrderEvent, tries: number, error: string, next: FailedTry): void {
    const fields = { eventId: event.eventId, attempts: tries, err: error };
    if (next.park) {
      this.deps.metrics.orderEventsParked.inc({ type: event.type });
      this.log.error(fields, 'order event parked: delivery failed ORDER_EVENTS_MAX_ATTEMPTS times');
    } else this.log.warn({ ...fields, retryInMs: next.retryInMs }, 'order event delivery failed; will retry');
  }
}

/** What the process's worker is built from: its deps and the settings, ORDER_EVENTS_URL maybe unset. */
export interface OrderEventWorkerFromConfig extends Omit<OrderEventWorkerDeps, 'settling'> {
  config: Omit<OrderEventSettings, 'ORDER_EVENTS_URL'> & Pick<OriginConfig, 'ORDER_EVENTS_URL'>;
}

/** The process's worker, or null when ORDER_EVENTS_URL is unset (then no events are written either). */
export function orderEventWorkerFor(deps: OrderEventWorkerFromConfig, settling?: () => boolean) {
  const { config } = deps;
  if (!config.ORDER_EVENTS_URL) return null;
  return new OrderEventWorker(
    { ...deps, ...(settling ? { settling } : {}) },
    { ...config, ORDER_EVENTS_URL: config.ORDER_EVENTS_URL },
  );
}

/**
 * The worker of shadow sales' events (the shadow outbox, to SHADOW_ORDER_EVENTS_URL), or null when
 * it is unset (then a shadow sale writes no events either). It never posts to ORDER_EVENTS_URL.
 */
export function shadowOrderEventWorkerFor(
  deps: Omit<OrderEventWorkerFromConfig, 'config'> & {
    config: OrderEventWorkerFromConfig['config'] & Pick<OriginConfig, 'SHADOW_ORDER_EVENTS_URL'>;
  },
) {
  const { config } = deps;
  if (!config.SHADOW_ORDER_EVENTS_URL) return null;
  return new OrderEventWorker(
    { ...deps, ledger: SHADOW_LEDGER },
    { ...config, ORDER_EVENTS_URL: config.SHADOW_ORDER_EVENTS_URL },
  );
}
