/**
 * The stock store: the one way the origin touches Redis. It owns every key (keys.ts), runs each Lua
 * script as a typed method with a decoded result (no caller lays out KEYS or reads `reply[0]`), and
 * keeps the request path on its own fail-fast client behind the circuit breaker. Admin, jobs and
 * settlement use a patient client that queues while reconnecting.
 */
import { newReservationId } from '../../contract/ids.js';
import type { ActivitySwitch } from '../../contract/activity.js';
import type { Logger } from '../logger.js';
import { CircuitBreaker, createRedis, redisReady, type BreakerOptions, type RedisClient } from './client.js';
import { SaleEventReader } from './event-reader.js';
import { ACTIVITY_REGISTRY_KEY, CONSUMER_GROUP, SOLD_OUT_CHANNEL, activityKeys, type ActivityKeys } from './keys.js';
import type { ReservationEvent } from './reservation-event.js';
import {
  RecoverCode,
  RefillCode,
  ReleaseCode,
  RequeueCode,
  ReserveCode,
  WarmupCode,
  defineScripts,
  readScripts,
  type ScriptCommands,
} from './scripts.js';
import { SaleLedgerReader, type GroupInfo, type LedgerSnapshot, type StreamReservation } from './sale-ledger.js';

/** One activity's SKU: what every key is built from. */
export interface Sale {
  activityId: string;
  skuId: string;
}

export interface ReserveInput extends Sale {
  userId: string;
  quantity: number;
  requestId: string;
  traceId: string;
}

export type ReserveResult =
  | { kind: 'reserved'; reservationId: string; remaining: number }
  | { kind: 'repeat'; reservationId: string }
  | { kind: 'sold_out' }
  | { kind: 'insufficient_stock' }
  | { kind: 'limit_exceeded' }
  | { kind: 'paused' }
  | { kind: 'ended' }
  | { kind: 'not_warmed' };

export type WarmupResult =
  | { kind: 'loaded'; stock: number; holders: number }
  | { kind: 'already'; stock: number; holders: number }
  | { kind: 'has_history' };

export type ReleaseResult =
  | { kind: 'released'; restocked: number }
  | { kind: 'already'; restocked: number }
  | { kind: 'not_warmed' };
export type RefillResult =
  | { kind: 'refilled'; stock: number }
  | { kind: 'already'; stock: number }
  | { kind: 'not_warmed' };
export type RequeueResult =
  | { kind: 'requeued'; stock: number }
  | { kind: 'already' }
  | { kind: 'not_warmed' }
  | { kind: 'not_released' }
  | { kind: 'holds_other' }
  | { kind: 'sold_out' };
export type RecoverResult =
  | { kind: 'recovered'; stock: number; holders: number }
  | { kind: 'warm' }
  | { kind: 'no_stream' };

export interface RecoverInput {
  stock: number;
  state: ActivitySwitch;
  maxPerUser: number;
  holders: Map<string, string>;
  released: Map<string, number>;
  refilled: Map<string, number>;
}

export interface StockStoreOptions {
  redisUrl: string;
  /** Request path command timeout (REDIS_COMMAND_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Admin, jobs, settlement side work (REDIS_OPS_TIMEOUT_MS). */
  opsTimeoutMs: number;
  breaker: BreakerOptions;
  log: Logger;
}

type Reply = (string | number)[];
const num = (v: string | number | undefined) => Number(v ?? 0);

export class StockStore {
  private readonly breaker: CircuitBreaker;
  private readonly ledger: SaleLedgerReader;
  private readonly readers = new Set<SaleEventReader>();
  private subscriber: RedisClient | null = null;

  private constructor(
    private readonly opts: StockStoreOptions,
    private readonly requestRedis: RedisClient,
    private readonly requestScripts: ScriptCommands,
    private readonly redis: RedisClient,
    private readonly scripts: ScriptCommands,
  ) {
    this.breaker = new CircuitBreaker(opts.breaker);
    this.ledger = new SaleLedgerReader(redis);
  }

  static async connect(opts: StockStoreOptions): Promise<StockStore> {
    const requestRedis = createRedis(opts.redisUrl, {
      commandTimeoutMs: opts.requestTimeoutMs,
      queueWhileOffline: false,
      name: 'origin-request',
    });
    const redis = createRedis(opts.redisUrl, {
      commandTimeoutMs: opts.opsTimeoutMs,
      queueWhileOffline: true,
      name: 'origin-ops',
    });
    requestRedis.on('error', (err) => opts.log.debug({ err: err.message }, 'redis error'));
    redis.on('error', (err) => opts.log.debug({ err: err.message }, 'redis ops error'));
    const lua = readScripts();
    const store = new StockStore(opts, requestRedis, defineScripts(requestRedis, lua), redis, defineScripts(redis, lua));
    try {
      await Promise.all([redisReady(requestRedis), redisReady(redis)]);
    } catch (err) {
      requestRedis.disconnect();
      redis.disconnect();
      throw err;
    }
    return store;
  }

  keys(sale: Sale): ActivityKeys {
    return activityKeys(sale.activityId, sale.skuId);
  }

  // ── Request path: short timeout, no offline queue, behind the breaker ──────────────────────────

  /** lua/reserve-4.lua: the one atomic decision. */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const k = this.keys(input);
    const reservationId = newReservationId(input.activityId);
    const reply = await this.breaker.run(() =>
      this.requestScripts.reserve(
        [k.stock, k.holders, k.events, k.config],
        [input.userId, input.quantity, reservationId, input.requestId, input.traceId, Date.now()],
      ),
    );
    return decodeReserve(reply);
  }

  /** The user's reservation in this sale, if Redis holds one (request path). */
  holderOf(sale: Sale, userId: string): Promise<string | null> {
    return this.breaker.run(() => this.requestRedis.hget(this.keys(sale).holders, userId));
  }

  /** Health: one PING on the request client (no breaker: health must see Redis itself). */
  async ping(): Promise<void> {
    await this.requestRedis.ping();
  }

  // ── Operator and job work: patient client ──────────────────────────────────────────────────────

  /** lua/warmup-4.lua: loads stock and switches; never resets a sale in progress. */
  async warmup(sale: Sale, load: { stock: number; state: ActivitySwitch; maxPerUser: number }): Promise<WarmupResult> {
    const k = this.keys(sale);
    const reply = await this.scripts.warmup(
      [k.stock, k.holders, k.events, k.config],
      [load.stock, load.state, load.maxPerUser, CONSUMER_GROUP],
    );
    const code = num(reply[0]);
    if (code === WarmupCode.HAS_HISTORY) return { kind: 'has_history' };
    if (code !== WarmupCode.LOADED && code !== WarmupCode.ALREADY) throw unknownCode('warmup', code);
    await this.redis.hset(ACTIVITY_REGISTRY_KEY, sale.activityId, sale.skuId);
    const figures = { stock: num(reply[1]), holders: num(reply[2]) };
    return code === WarmupCode.LOADED ? { kind: 'loaded', ...figures } : { kind: 'already', ...figures };
  }

  /** True when the sale's stock key exists (warmed and not lost). */
  async isWarm(sale: Sale): Promise<boolean> {
    return (await this.redis.exists(this.keys(sale).stock)) === 1;
  }

  /** Units left in Redis, or null when the sale is not warm. */
  async stock(sale: Sale): Promise<number | null> {
    const v = await this.redis.get(this.keys(sale).stock);
    return v === null ? null : Number(v);
  }

  /** Writes the switch the reserve script reads — only for a warmed sale (no half-activities). */
  async setState(sale: Sale, state: ActivitySwitch): Promise<void> {
    if (await this.isWarm(sale)) await this.redis.hset(this.keys(sale).config, 'state', state);
  }

  /** lua/release-3.lua: compensation; `cap` = MySQL available (-1: give nothing back). */
  async release(
    sale: Sale,
    r: { reservationId: string; userId: string; quantity: number; cap: number },
  ): Promise<ReleaseResult> {
    const k = this.keys(sale);
    const reply = await this.scripts.release(
      [k.stock, k.holders, k.released],
      [r.reservationId, r.userId, r.quantity, r.cap],
    );
    const code = num(reply[0]);
    if (code === ReleaseCode.NOT_WARMED) return { kind: 'not_warmed' };
    if (code === ReleaseCode.RELEASED) return { kind: 'released', restocked: num(reply[1]) };
    if (code === ReleaseCode.ALREADY) return { kind: 'already', restocked: num(reply[1]) };
    throw unknownCode('release', code);
  }

  /** lua/refill-2.lua: a timed-out order's units back on sale, once per reservation. */
  async refill(sale: Sale, r: { reservationId: string; quantity: number }): Promise<RefillResult> {
    const k = this.keys(sale);
    const reply = await this.scripts.refill([k.stock, k.refilled], [r.reservationId, r.quantity]);
    const code = num(reply[0]);
    if (code === RefillCode.NOT_WARMED) return { kind: 'not_warmed' };
    if (code === RefillCode.REFILLED) return { kind: 'refilled', stock: num(reply[1]) };
    if (code === RefillCode.ALREADY) return { kind: 'already', stock: num(reply[1]) };
    throw unknownCode('refill', code);
  }

  /** lua/requeue-4.lua: an admin's retry of a dead-lettered reservation. */
  async requeue(sale: Sale, e: ReservationEvent): Promise<RequeueResult> {
    const k = this.keys(sale);
    const reply = await this.scripts.requeue(
      [k.stock, k.holders, k.events, k.released],
      [e.reservationId, e.userId, e.quantity, e.requestId, e.traceId, Date.now()],
    );
    const code = num(reply[0]);
    switch (code) {
      case RequeueCode.REQUEUED:
        return { kind: 'requeued', stock: num(reply[1]) };
      case RequeueCode.ALREADY:
        return { kind: 'already' };
      case RequeueCode.NOT_WARMED:
        return { kind: 'not_warmed' };
      case RequeueCode.NOT_RELEASED:
        return { kind: 'not_released' };
      case RequeueCode.HOLDS_OTHER:
        return { kind: 'holds_other' };
      case RequeueCode.SOLD_OUT:
        return { kind: 'sold_out' };
      default:
        throw unknownCode('requeue', code);
    }
  }

  /** lua/recover-6.lua: rewrites the sale's Redis state from proven figures, all or nothing. */
  async recover(sale: Sale, input: RecoverInput): Promise<RecoverResult> {
    const k = this.keys(sale);
    const pairs = (m: Map<string, string | number>) => [m.size, ...[...m].flat()];
    const reply = await this.scripts.recover(
      [k.stock, k.holders, k.events, k.config, k.released, k.refilled],
      [
        input.stock,
        input.state,
        input.maxPerUser,
        CONSUMER_GROUP,
        ...pairs(input.holders),
        ...pairs(input.released),
        ...pairs(input.refilled),
      ],
    );
    const code = num(reply[0]);
    if (code === RecoverCode.WARM) return { kind: 'warm' };
    if (code === RecoverCode.NO_STREAM) return { kind: 'no_stream' };
    if (code !== RecoverCode.RECOVERED) throw unknownCode('recover', code);
    await this.redis.hset(ACTIVITY_REGISTRY_KEY, sale.activityId, sale.skuId);
    return { kind: 'recovered', stock: num(reply[1]), holders: num(reply[2]) };
  }

  /** After a sale: every key expires after `seconds`, and settlement forgets the sale. */
  async expire(sale: Sale, seconds: number): Promise<void> {
    const k = this.keys(sale);
    const all = [k.stock, k.holders, k.events, k.config, k.released, k.refilled];
    await Promise.all(all.map((key) => this.redis.expire(key, seconds)));
    await this.redis.hdel(ACTIVITY_REGISTRY_KEY, sale.activityId);
  }

  /** Warmed sales (the registry written by warm-up and recover): what consumers and jobs look after. */
  async warmedSales(): Promise<Sale[]> {
    const registry = await this.redis.hgetall(ACTIVITY_REGISTRY_KEY);
    return Object.entries(registry).map(([activityId, skuId]) => ({ activityId, skuId }));
  }

  // ── The Stream: ledger reads (reconcile, recover, gauges) and consumers (settlement) ───────────

  groupInfo(sale: Sale): Promise<GroupInfo | null> {
    return this.ledger.groupInfo(this.keys(sale).events);
  }

  /** Reconciliation's Redis snapshot: stock, the Stream up to its last id, released, refilled. */
  ledgerSnapshot(sale: Sale): Promise<LedgerSnapshot | null> {
    return this.ledger.snapshot(this.keys(sale));
  }

  /** Reservation ids appended after `bound` (granted after a ledger snapshot). */
  reservationsAfter(sale: Sale, bound: string): Promise<Set<string>> {
    return this.ledger.reservationsAfter(this.keys(sale).events, bound);
  }

  /** Every reservation of the Stream and whether it is still open (pending or undelivered); null without Stream or group. */
  streamReservations(sale: Sale): Promise<Map<string, StreamReservation> | null> {
    return this.ledger.reservations(this.keys(sale).events);
  }

  /** A consumer of the sale's Stream on a connection of its own (XREADGROUP BLOCK holds it). */
  openEventReader(sale: Sale, consumer: string, blockMs: number): SaleEventReader {
    const redis = createRedis(this.opts.redisUrl, {
      commandTimeoutMs: blockMs + 5_000,
      queueWhileOffline: true,
      name: 'origin-settle',
    });
    redis.on('error', (err) => this.opts.log.debug({ err: err.message }, 'settlement redis error'));
    const reader = new SaleEventReader(redis, this.keys(sale).events, consumer, () => this.readers.delete(reader));
    this.readers.add(reader);
    return reader;
  }

  // ── Sold-out transitions between origin processes (pub/sub) ────────────────────────────────────

  async publishSoldOut(activityId: string, soldOut: boolean): Promise<void> {
    await this.redis.publish(SOLD_OUT_CHANNEL, `${activityId}:${soldOut ? 1 : 0}`);
  }

  async onSoldOut(listener: (activityId: string, soldOut: boolean) => void): Promise<void> {
    this.subscriber ??= createRedis(this.opts.redisUrl, {
      commandTimeoutMs: 5_000,
      queueWhileOffline: true,
      name: 'origin-soldout-sub',
    });
    this.subscriber.on('error', (err) => this.opts.log.debug({ err: err.message }, 'redis subscriber error'));
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== SOLD_OUT_CHANNEL) return;
      const [activityId, on] = message.split(':');
      if (activityId) listener(activityId, on === '1');
    });
    await this.subscriber.subscribe(SOLD_OUT_CHANNEL);
  }

  async close(): Promise<void> {
    await Promise.allSettled([
      this.requestRedis.quit(),
      this.redis.quit(),
      this.subscriber?.quit(),
      ...[...this.readers].map((r) => r.close()),
    ]);
  }
}

function decodeReserve(reply: Reply): ReserveResult {
  const code = num(reply[0]);
  switch (code) {
    case ReserveCode.OK:
      return { kind: 'reserved', reservationId: String(reply[1]), remaining: num(reply[2]) };
    case ReserveCode.EXISTS:
      return { kind: 'repeat', reservationId: String(reply[1]) };
    case ReserveCode.SOLD_OUT:
      return { kind: 'sold_out' };
    case ReserveCode.INSUFFICIENT_STOCK:
      return { kind: 'insufficient_stock' };
    case ReserveCode.LIMIT_EXCEEDED:
      return { kind: 'limit_exceeded' };
    case ReserveCode.PAUSED:
      return { kind: 'paused' };
    case ReserveCode.ENDED:
      return { kind: 'ended' };
    case ReserveCode.NOT_WARMED:
      return { kind: 'not_warmed' };
    default:
      throw unknownCode('reserve', code);
  }
}

const unknownCode = (script: string, code: number) => new Error(`${script} script returned unknown code ${code}`);
