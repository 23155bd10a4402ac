/**
 * Redis connections and the circuit breaker in front of them. The request path fails fast: no
 * offline queue, a short command timeout, and an open breaker answers 503 without touching Redis.
 */
import { Cluster, Redis } from 'ioredis';
import { ContractError } from '../../contract/errors.js';

/** A connection to one Redis server or to a Redis Cluster (same commands; scripts stay on one slot). */
export type RedisClient = Redis | Cluster;

/** Where Redis is: REDIS_CLUSTER_NODES (host:port list) when set, else REDIS_URL. */
export interface RedisTarget {
  url: string;
  clusterNodes?: string[];
}

export interface RedisOptions {
  commandTimeoutMs: number;
  /** false for the request path (fail fast while disconnected); true for background loops. */
  queueWhileOffline: boolean;
  name: string;
}

export function createRedis(target: RedisTarget, opts: RedisOptions): RedisClient {
  const options = {
    connectionName: opts.name,
    commandTimeout: opts.commandTimeoutMs,
    enableOfflineQueue: opts.queueWhileOffline,
    maxRetriesPerRequest: opts.queueWhileOffline ? 20 : 0,
    // Reconnect quickly but not in a hot loop; capped at 1 s.
    retryStrategy: (times: number) => Math.min(50 * times, 1_000),
    lazyConnect: false,
  };
  if (target.clusterNodes?.length) {
    return new Cluster(
      target.clusterNodes.map((node) => {
        const [host, port] = node.split(':');
        return { host: host!, port: Number(port) };
      }),
      {
        redisOptions: options,
        enableOfflineQueue: opts.queueWhileOffline,
        maxRedirections: 16,
        clusterRetryStrategy: (times: number) => Math.min(50 * times, 1_000),
        // Commands issued in the same tick go out in one write per node: fewer syscalls under a burst.
        enableAutoPipelining: true,
      },
    );
  }
  // Commands issued in the same tick go out in one write: fewer syscalls under a burst.
  return new Redis(target.url, { ...options, enableAutoPipelining: true });
}

/** Resolves once the client is ready, or rejects after `timeoutMs`. */
export function redisReady(redis: RedisClient, timeoutMs = 5_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit answers 503 before letting one call probe Redis again. */
  openMs: number;
  /** Told of every call that reached Redis: its duration and whether it failed (for metrics). */
  observe?: (seconds: number, failed: boolean) => void;
}

/** Opens after consecutive Redis failures so a dead Redis costs microseconds, not timeouts. */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;

  constructor(private readonly opts: BreakerOptions) {}

  get isOpen(): boolean {
    return Date.now() < this.openUntil;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.isOpen)
      throw new ContractError('unavailable', 'stock service unavailable, try again shortly', { retryAfter: 1 });
    const started = performance.now();
    try {
      const result = await work();
      this.failures = 0;
      this.opts.observe?.((performance.now() - started) / 1000, false);
      return result;
    } catch (err) {
      if (err instanceof ContractError) throw err;
      this.opts.observe?.((performance.now() - started) / 1000, true);
      if (++this.failures >= this.opts.failureThreshold) {
        this.openUntil = Date.now() + this.opts.openMs;
        this.failures = 0;
      }
      throw new ContractError('unavailable', 'stock service unavailable, try again shortly', {
        retryAfter: 1,
        cause: err,
      });
    }
  }
}
