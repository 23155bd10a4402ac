/**
 * The connections every job object of the Redis store shares, and their lifetime. The request path
 * has its own fail-fast client (no offline queue, REDIS_COMMAND_TIMEOUT_MS) behind the circuit
 * breaker; admin, jobs and settlement use a patient client that queues while reconnecting. Each
 * client has the Lua scripts registered (a ScriptRunner). Clients opened later (Stream consumers,
 * the failover watch, the sold-out subscriber) are opened here too, so `close` ends them all.
 */
import type { Logger } from '../platform/logger.js';
import {
  CircuitBreaker,
  createRedis,
  redisReady,
  type BreakerOptions,
  type RedisClient,
  type RedisTarget,
} from './client.js';
import { keyspace, type ActivityKeys, type Keyspace } from './keys.js';
import type { Sale } from './sale.js';
import { readScripts, type LuaScript } from './scripts/load.js';
import { ScriptRunner } from './scripts/runner.js';

/** Sales whose keys `keys()` keeps built; past this many the cache starts over (a sale's keys are cheap to rebuild). */
const MAX_CACHED_SALES = 10_000;

export interface RedisConnectionOptions {
  redis: RedisTarget;
  /** Request path command timeout (REDIS_COMMAND_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** Admin, jobs, settlement side work (REDIS_OPS_TIMEOUT_MS). */
  opsTimeoutMs: number;
  breaker: BreakerOptions;
  log: Logger;
  /** REDIS_KEY_PREFIX: put in front of every key, the registry and the pub/sub channel (default none). */
  keyPrefix?: string;
}

/** How a further client of the process behaves (RedisConnection.open). */
export interface ExtraClientOptions {
  commandTimeoutMs: number;
  /** Queue commands while reconnecting (patient work) instead of failing them at once. */
  queueWhileOffline: boolean;
  /** The debug log message its connection errors are logged under. */
  logAs: string;
  /** Closed with the connections (default); false when its owner closes it and is tracked itself. */
  tracked?: boolean;
}

/** Something closed with the connections (a Stream reader, a node-stats reader). */
export interface Closable {
  close(): unknown;
}

export class RedisConnection {
  readonly breaker: CircuitBreaker;
  readonly space: Keyspace;
  private readonly closables = new Set<Closable>();
  /** Each sale's keys by bucket, for `keys()`. */
  private readonly keyCache = new Map<string, { skuId: string; buckets: number; byBucket: ActivityKeys[] }>();

  private constructor(
    readonly opts: RedisConnectionOptions,
    /** The request path's client: fail fast, used behind `breaker`. */
    readonly request: ScriptRunner,
    /** The patient client of operator work, jobs and settlement. */
    readonly ops: ScriptRunner,
    private readonly lua: Map<string, LuaScript>,
  ) {
    this.breaker = new CircuitBreaker(opts.breaker);
    this.space = keyspace(opts.keyPrefix);
    this.track(request.redis);
    this.track(ops.redis);
  }

  static async connect(opts: RedisConnectionOptions): Promise<RedisConnection> {
    const request = createRedis(opts.redis, {
      commandTimeoutMs: opts.requestTimeoutMs,
      queueWhileOffline: false,
      name: 'origin-request',
    });
    const ops = createRedis(opts.redis, {
      commandTimeoutMs: opts.opsTimeoutMs,
      queueWhileOffline: true,
      name: 'origin-ops',
    });
    request.on('error', (err: Error) => opts.log.debug({ err: err.message }, 'redis error'));
    ops.on('error', (err: Error) => opts.log.debug({ err: err.message }, 'redis ops error'));
    const lua = readScripts();
    const connection = new RedisConnection(opts, new ScriptRunner(request, lua), new ScriptRunner(ops, lua), lua);
    try {
      await Promise.all([redisReady(request), redisReady(ops)]);
    } catch (err) {
      request.disconnect();
      ops.disconnect();
      throw err;
    }
    return connection;
  }

  get log(): Logger {
    return this.opts.log;
  }

  /**
   * The keys of one bucket of the sale, built once and shared (frozen): the reserve path asks for
   * them on every request, and building sixteen key strings per call is work the hot path need not do.
   */
  keys(sale: Sale, bucket = 0): ActivityKeys {
    let known = this.keyCache.get(sale.activityId);
    if (!known || known.skuId !== sale.skuId || known.buckets !== sale.buckets) {
      if (this.keyCache.size >= MAX_CACHED_SALES) this.keyCache.clear();
      known = { skuId: sale.skuId, buckets: sale.buckets, byBucket: [] };
      this.keyCache.set(sale.activityId, known);
    }
    return (known.byBucket[bucket] ??= Object.freeze(
      this.space.activity(sale.activityId, sale.skuId, bucket, sale.buckets),
    ));
  }

  /** The keys of every bucket, bucket 0 first. */
  allKeys(sale: Sale): ActivityKeys[] {
    return Array.from({ length: sale.buckets }, (_, b) => this.keys(sale, b));
  }

  /**
   * A further client of this process (`name` is its CLIENT SETNAME), its errors logged at debug as
   * `logAs`; closed with the rest unless `tracked` is false (its owner closes it and is tracked itself).
   */
  open(name: string, opts: ExtraClientOptions): RedisClient {
    const { commandTimeoutMs, queueWhileOffline, logAs, tracked = true } = opts;
    const redis = createRedis(this.opts.redis, { commandTimeoutMs, queueWhileOffline, name });
    redis.on('error', (err: Error) => this.opts.log.debug({ err: err.message }, logAs));
    if (tracked) this.track(redis);
    return redis;
  }

  /** A further client with the scripts registered on it (always closed with the rest). */
  openRunner(name: string, opts: Omit<ExtraClientOptions, 'tracked'>): ScriptRunner {
    return new ScriptRunner(this.open(name, opts), this.lua);
  }

  /** Closed with the connections unless `untrack`ed before. */
  track(closable: Closable | RedisClient): void {
    this.closables.add('quit' in closable ? { close: () => closable.quit() } : closable);
  }

  untrack(closable: Closable): void {
    this.closables.delete(closable);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.closables].map(async (c) => c.close()));
  }
}
