/**
 * One consumer of one activity's Stream: reads new entries, reclaims idle ones (XAUTOCLAIM), settles
 * a batch per transaction (settle.ts) and XACKs only after COMMIT. Entries delivered more than
 * `maxDeliveries` times become dead letters. `stop()` lets the entry in hand finish.
 */
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { Db } from '../platform/db/pool.js';
import type { SaleEventReader, StreamEntry } from '../redis/event-reader.js';
import type { SaleStock } from '../redis/sale-stock.js';
import type { Sale } from '../redis/redis-store.js';
import { compensate, deadLetter } from './dead-lettering.js';
import type { ReservationEvent } from './event.js';
import { settleBatch, type SettleOutcome, type SettleTarget } from './settle.js';

export interface SettlerSettings {
  batchSize: number;
  blockMs: number;
  /** Pause after a part batch, so the next read finds more (SETTLE_LINGER_MS). */
  lingerMs: number;
  claimIdleMs: number;
  maxDeliveries: number;
  retryBackoffMs: number;
}

export interface SettlerDeps {
  db: Db;
  /** This consumer's view of the Stream, on a connection of its own (XREADGROUP BLOCK holds it). */
  reader: SaleEventReader;
  /** Compensation (release) of surplus and dead-lettered reservations. */
  store: Pick<SaleStock, 'release'>;
  log: Logger;
  metrics: Metrics;
  /** Why an entry failed last (shared by the process's settlers), for the dead letter's reason. */
  lastFailure: Map<string, string>;
  /** Called when a read filled a whole batch: more were waiting (the process's settlement is behind). */
  onFullRead?: () => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Redis's answers to a group read on a Stream or group that does not exist, or whose key was removed
 * while the read was blocked on it.
 */
const isStreamGone = (message: string) =>
  message.startsWith('NOGROUP') || message.startsWith('UNBLOCKED the stream key no longer exists');

export class StreamSettler {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private nextClaimAt = 0;
  /** The last round found no Stream or group (NOGROUP): said once until a round succeeds. */
  private streamGone = false;

  constructor(
    private readonly deps: SettlerDeps,
    private readonly target: SettleTarget & Sale,
    private readonly settings: SettlerSettings,
  ) {}

  get consumer(): string {
    return this.deps.reader.consumer;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  /** Closes the reader's connection; after stop(). */
  close(): Promise<void> {
    return this.deps.reader.close();
  }

  private async run(): Promise<void> {
    const { log } = this.deps;
    while (!this.stopping) {
      try {
        if (Date.now() >= this.nextClaimAt) {
          this.nextClaimAt = Date.now() + Math.max(50, Math.min(this.settings.claimIdleMs / 2, 1_000));
          await this.reclaimIdle();
        }
        const entries = await this.deps.reader.read(this.settings.batchSize, this.settings.blockMs);
        if (entries.length > 0) {
          if (entries.length >= this.settings.batchSize) this.deps.onFullRead?.();
          await this.settleEntries(entries, new Map(), { firstDelivery: true });
          // The Stream had no more waiting: let the next few gather instead of settling them one
          // transaction each (under a backlog every batch is full and this never waits).
          if (entries.length < this.settings.batchSize && this.settings.lingerMs > 0 && !this.stopping)
            await sleep(this.settings.lingerMs);
        }
        this.streamGone = false;
      } catch (err) {
        if (this.stopping) break;
        const message = (err as Error).message;
        if (isStreamGone(message)) {
          // The sale's Stream or group is gone (expired after its cleanup, or lost with a Redis
          // failover until recovery): said once, then the settler waits quietly for the group to
          // come back or for discovery to retire it.
          if (!this.streamGone)
            log.warn({ activityId: this.target.activityId, err: message }, 'sale stream gone: settler idle');
          this.streamGone = true;
        } else {
          log.warn({ activityId: this.target.activityId, err: message }, 'settlement round failed');
        }
        await sleep(this.settings.retryBackoffMs);
      }
    }
  }

  /** XAUTOCLAIM entries idle past `claimIdleMs` (their consumer died or failed), with delivery counts. */
  async reclaimIdle(): Promise<number> {
    let cursor = '0-0';
    let handled = 0;
    do {
      const page = await this.deps.reader.reclaim(this.settings.claimIdleMs, cursor, this.settings.batchSize);
      cursor = page.next;
      if (page.entries.length === 0) continue;
      await this.settleEntries(page.entries, page.deliveries, { firstDelivery: false });
      handled += page.entries.length;
    } while (cursor !== '0-0' && !this.stopping);
    return handled;
  }

  /** `firstDelivery`: new entries (`XREADGROUP >`), never delivered before — settle.ts's cheaper path. */
  private async settleEntries(
    entries: StreamEntry[],
    deliveries: Map<string, number>,
    { firstDelivery }: { firstDelivery: boolean },
  ): Promise<void> {
    const { log } = this.deps;
    const acks: string[] = [];
    const fresh: ReservationEvent[] = [];
    for (const { id, event } of entries) {
      if (!event) {
        log.error(
          { activityId: this.target.activityId, streamId: id },
          'malformed stream entry acknowledged without settling',
        );
        acks.push(id);
      } else if ((deliveries.get(id) ?? 1) > this.settings.maxDeliveries) {
        if (await this.giveUp(event, deliveries.get(id)!)) acks.push(id);
      } else {
        fresh.push(event);
      }
    }
    for (const event of await this.settle(fresh, firstDelivery)) acks.push(event);
    await this.deps.reader.ack(acks);
    if (this.deps.lastFailure.size > 10_000) this.deps.lastFailure.clear();
  }

  /** Settles in one batch transaction; if the batch fails, in halves. Returns the ids to XACK. */
  private async settle(events: ReservationEvent[], firstDelivery: boolean): Promise<string[]> {
    const { db, metrics, log } = this.deps;
    if (events.length === 0) return [];
    const started = performance.now();
    const outcomes = await this.settleSplitting(events, firstDelivery);
    metrics.settleLatency.observe((performance.now() - started) / 1000);

    const acks: string[] = [];
    // Counted per outcome once per batch; a log line's fields are built only when it is written
    // (no child logger per order: at 20k+ orders/s that was CPU the cores' MySQL needs).
    const counts = new Map<SettleOutcome, number>();
    const about = (e: ReservationEvent) => ({
      traceId: e.traceId,
      activityId: this.target.activityId,
      reservationId: e.reservationId,
    });
    // At info one line per batch carries the settled orders' trace ids (docs/design.md §4: the trace id is
    // in the settlement log); a line per order only at debug — at the rates settlement runs at, a
    // line per order was a per-order cost of the consumer process.
    const settledLine = log.isLevelEnabled('debug');
    const batchLine = log.isLevelEnabled('info');
    const settledTraces: string[] = [];
    try {
      for (const e of events) {
        const outcome = outcomes.get(e.reservationId);
        if (!outcome) continue;
        counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
        if (outcome === 'insufficient_stock') {
          this.deps.lastFailure.set(e.streamId, 'MySQL has less stock than Redis granted');
          log.warn(about(e), 'settlement found no stock in MySQL; will retry');
          continue;
        }
        if (outcome === 'surplus') {
          const restocked = await compensate(db, this.deps.store, this.target, e);
          if (restocked === null) continue;
          log.warn({ ...about(e), restocked }, 'surplus reservation released: the user already has an order');
        }
        if (outcome === 'settled') {
          if (batchLine) settledTraces.push(e.traceId);
          if (settledLine) log.debug({ ...about(e), userId: e.userId, quantity: e.quantity }, 'settled');
        }
        this.deps.lastFailure.delete(e.streamId);
        acks.push(e.streamId);
      }
    } finally {
      for (const [outcome, n] of counts) metrics.settleOutcomes.inc({ outcome }, n);
      const settled = counts.get('settled') ?? 0;
      if (settled > 0) (this.target.shadow ? metrics.shadowOrdersSettled : metrics.ordersSettled).inc(settled);
      if (settledTraces.length > 0)
        log.info(
          { activityId: this.target.activityId, orders: settledTraces.length, traceIds: settledTraces },
          'settled batch',
        );
    }
    return acks;
  }

  /**
   * A failed batch (a duplicate key the reads did not foresee, a deadlock, MySQL trouble) is split
   * in two and each half tried again, down to single reservations, where a duplicate key is
   * classified and a real failure stays pending with its reason. One bad entry among n costs about
   * 2·log2(n) transactions instead of n.
   */
  private async settleSplitting(
    events: ReservationEvent[],
    firstDelivery: boolean,
  ): Promise<Map<string, SettleOutcome>> {
    const { db, log } = this.deps;
    try {
      return await settleBatch(db, this.target, events, { firstDelivery });
    } catch (err) {
      const message = (err as Error).message;
      if (events.length === 1) {
        const e = events[0]!;
        this.deps.lastFailure.set(e.streamId, message);
        log.warn({ traceId: e.traceId, reservationId: e.reservationId, err: message }, 'settlement failed; will retry');
        return new Map();
      }
      log.debug(
        { activityId: this.target.activityId, err: message, size: events.length },
        'batch settlement failed; splitting',
      );
      const outcomes = new Map<string, SettleOutcome>();
      const half = Math.ceil(events.length / 2);
      for (const part of [events.slice(0, half), events.slice(half)]) {
        if (this.stopping) break; // not started: stays pending, reclaimed by another consumer
        for (const [id, outcome] of await this.settleSplitting(part, firstDelivery)) outcomes.set(id, outcome);
      }
      return outcomes;
    }
  }

  /** Past maxDeliveries: dead letter + compensation. True when the entry may be acknowledged. */
  private async giveUp(event: ReservationEvent, deliveries: number): Promise<boolean> {
    const { db, store, metrics, log } = this.deps;
    const reason =
      this.deps.lastFailure.get(event.streamId) ?? `not settled after ${this.settings.maxDeliveries} deliveries`;
    try {
      const outcome = await deadLetter(db, store, this.target, event, deliveries, reason);
      metrics.settleOutcomes.inc({ outcome });
      if (outcome === 'redis_not_warm') return false;
      if (outcome === 'dead_lettered') metrics.deadLetters.inc();
      log.error(
        {
          traceId: event.traceId,
          activityId: this.target.activityId,
          reservationId: event.reservationId,
          deliveries,
          reason,
          outcome,
        },
        'reservation dead-lettered',
      );
      this.deps.lastFailure.delete(event.streamId);
      return true;
    } catch (err) {
      log.warn(
        { reservationId: event.reservationId, err: (err as Error).message },
        'dead-lettering failed; will retry',
      );
      return false;
    }
  }
}
