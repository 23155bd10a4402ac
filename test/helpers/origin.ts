/**
 * A real origin for tests: its own database, the shared Redis, an ephemeral port, quiet logs. Gives
 * signed internal calls and admin calls, and cleans up its Redis keys at the end.
 */
import { Redis } from 'ioredis';
import { signEdgeRequest } from '../../contract/signing.js';
import { loadConfig, type OriginConfig } from '../../origin/platform/config.js';
import { createLogger, type Logger } from '../../origin/platform/logger.js';
import { ACTIVITY_REGISTRY_KEY } from '../../origin/redis/keys.js';
import { startOrigin, type RunningOrigin } from '../../origin/server.js';
import { createTestDatabase, REDIS_URL, type TestDatabase } from './db.js';
import { uniqueId } from './ids.js';

export const TEST_SECRETS = {
  ADMIN_TOKEN: 'test-admin-token-0123',
  EDGE_ORIGIN_SECRET: 'test-edge-origin-secret-0123456789',
  PAYMENT_WEBHOOK_SECRET: 'test-payment-secret-0123456789',
};

export interface TestOrigin {
  origin: RunningOrigin;
  url: string;
  db: TestDatabase;
  redis: Redis;
  config: OriginConfig;
  internal(
    method: string,
    path: string,
    body?: unknown,
    opts?: { headers?: Record<string, string> },
  ): Promise<Response>;
  admin(method: string, path: string, body?: unknown, token?: string): Promise<Response>;
  /** Creates and warms an activity that is open now; returns its ids. */
  sale(opts?: {
    stock?: number;
    maxPerUser?: number;
    paymentTimeoutSeconds?: number;
    stockBuckets?: number;
    overflow?: 'reject' | 'queue';
    /** Warm up with `?acceptReplicaRisk=true`: a layout one Redis failover would stall, accepted on purpose. */
    acceptReplicaRisk?: boolean;
  }): Promise<{ activityId: string; skuId: string }>;
  stop(): Promise<void>;
}

/**
 * At most this many test calls in flight per origin: a burst of hundreds queues here instead of
 * opening hundreds of sockets at once (which, with client and server in one process, stalls
 * connects for seconds). A call is signed when it leaves the queue, as the edge would.
 */
const MAX_IN_FLIGHT = 64;

function limiter(max: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await work();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

export function testConfig(dbUrl: string, env: Record<string, string> = {}): OriginConfig {
  return loadConfig({
    PORT: '0',
    REDIS_URL,
    MYSQL_URL: dbUrl,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SETTLE_CLAIM_IDLE_MS: '500',
    SETTLE_BLOCK_MS: '100',
    SETTLE_DISCOVERY_MS: '100',
    // The production default (100 ms) is about a Redis on a quiet network; on a busy 2-core test
    // machine a stalled event loop would turn a healthy Redis into 503s. Outage tests set their own.
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...TEST_SECRETS,
    ...env,
  });
}

export async function startTestOrigin(
  env: Record<string, string> = {},
  existingDb?: TestDatabase,
  opts: { log?: Logger } = {},
): Promise<TestOrigin> {
  const db = existingDb ?? (await createTestDatabase());
  const config = testConfig(db.url, env);
  const origin = await startOrigin(config, opts.log ?? createLogger(config.LOG_LEVEL));
  const redis = new Redis(REDIS_URL);
  const url = origin.url ?? '';
  const activities: { activityId: string; skuId: string }[] = [];

  const limit = limiter(MAX_IN_FLIGHT);
  const internal: TestOrigin['internal'] = (method, path, body, opts = {}) =>
    limit(async () => {
      const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, {
        method,
        pathWithQuery: path,
        body: text,
      });
      const res = await fetch(url + path, {
        method,
        headers: { 'content-type': 'application/json', ...signed, ...opts.headers },
        body: method === 'GET' ? undefined : text,
      });
      // Read the body inside the slot so the connection is free when the slot is.
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    });
  const admin: TestOrigin['admin'] = (method, path, body, token = TEST_SECRETS.ADMIN_TOKEN) =>
    fetch(url + path, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });

  return {
    origin,
    url,
    db,
    redis,
    config,
    internal,
    admin,
    async sale(opts = {}) {
      const activityId = uniqueId();
      const skuId = uniqueId();
      const now = Date.now();
      const created = await admin('POST', '/admin/activities', {
        activityId,
        skuId,
        title: `test sale ${activityId}`,
        stock: opts.stock ?? 10,
        startsAt: new Date(now - 1000).toISOString(),
        endsAt: new Date(now + 3_600_000).toISOString(),
        maxPerUser: opts.maxPerUser ?? 1,
        paymentTimeoutSeconds: opts.paymentTimeoutSeconds ?? 900,
        ...(opts.stockBuckets ? { stockBuckets: opts.stockBuckets } : {}),
        ...(opts.overflow ? { overflow: opts.overflow } : {}),
      });
      if (created.status !== 201) throw new Error(`create activity: ${created.status} ${await created.text()}`);
      const override = opts.acceptReplicaRisk ? '?acceptReplicaRisk=true' : '';
      const warmed = await admin('POST', `/admin/activities/${activityId}/warmup${override}`);
      if (warmed.status !== 200) throw new Error(`warmup: ${warmed.status} ${await warmed.text()}`);
      activities.push({ activityId, skuId });
      return { activityId, skuId };
    },
    async stop() {
      await origin.stop();
      for (const a of activities) {
        const keys = await redis.keys(`sk:{${a.activityId}:${a.skuId}[:}]*`); // every bucket too
        if (keys.length) await redis.del(...keys);
        await redis.hdel(ACTIVITY_REGISTRY_KEY, a.activityId);
      }
      await redis.quit();
      if (!existingDb) await db.drop();
    },
  };
}

export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
