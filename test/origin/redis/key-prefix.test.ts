/**
 * REDIS_KEY_PREFIX: two stacks on one Redis with the same activity id stay apart — stock, holders,
 * Stream, registry and the sold-out channel all carry the prefix.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../../origin/platform/config.js';
import { createLogger } from '../../../origin/platform/logger.js';
import { keyspace } from '../../../origin/redis/keys.js';
import { RedisStore, type Sale } from '../../../origin/redis/redis-store.js';
import { REDIS_URL } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';

const run = uniqueId();
const prefixA = `t${run}a:`;
const prefixB = `t${run}b:`;
const connect = (keyPrefix?: string) =>
  RedisStore.connect({
    redis: { url: REDIS_URL },
    requestTimeoutMs: 1_000,
    opsTimeoutMs: 5_000,
    breaker: { failureThreshold: 5, openMs: 1_000 },
    log: createLogger('silent'),
    keyPrefix,
  });

let a: RedisStore;
let b: RedisStore;
let plain: RedisStore;
let redis: Redis;
const sale: Sale = { activityId: uniqueId(), skuId: uniqueId(), buckets: 1 };

beforeAll(async () => {
  [a, b, plain] = await Promise.all([connect(prefixA), connect(prefixB), connect()]);
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  for (const s of [a, b, plain]) await s.registry.expire(sale, 1);
  await Promise.all([a.close(), b.close(), plain.close()]);
  redis.disconnect();
});

const reserve = (store: RedisStore, userId: string) =>
  store.requests.reserve({ ...sale, userId, quantity: 1, requestId: `r-${userId}`, traceId: 'b'.repeat(32) });

it('the same activity id in two keyspaces: separate stock, holders, Stream and registry', async () => {
  await a.sales.warmup(sale, { stock: 2, state: 'open', maxPerUser: 1 });
  await b.sales.warmup(sale, { stock: 5, state: 'open', maxPerUser: 1 });

  const first = await reserve(a, '7');
  expect(first).toMatchObject({ kind: 'reserved', remaining: 1 });
  // The same user in the other keyspace is a new buyer there, not a repeat.
  expect(await reserve(b, '7')).toMatchObject({ kind: 'reserved', remaining: 4 });
  expect(await a.sales.stock(sale)).toBe(1);
  expect(await b.sales.stock(sale)).toBe(4);
  expect(await plain.sales.isWarm(sale)).toBe(false);

  expect((await a.registry.warmedSales()).some((s) => s.activityId === sale.activityId)).toBe(true);
  expect((await b.registry.warmedSales()).some((s) => s.activityId === sale.activityId)).toBe(true);
  expect((await plain.registry.warmedSales()).some((s) => s.activityId === sale.activityId)).toBe(false);

  // Every key of the sale, whichever store made it, starts with its store's prefix.
  const tag = `{${sale.activityId}:${sale.skuId}}`;
  const keys = await redis.keys(`*${tag}*`);
  const expected = [prefixA, prefixB].flatMap((p) =>
    ['stock', 'holders', 'events', 'cfg'].map((k) => `${p}sk:${tag}:${k}`),
  );
  expect(keys.sort()).toEqual(expected.sort());
  expect(await redis.hexists(`${prefixA}sk:activities`, sale.activityId)).toBe(1);
  expect(await redis.hexists('sk:activities', sale.activityId)).toBe(0);
});

it('sold-out transitions published in one keyspace are not heard in another', async () => {
  const heardA: string[] = [];
  const heardB: string[] = [];
  await a.soldOut.onSoldOut((id, on) => heardA.push(`${id}:${on}`));
  await b.soldOut.onSoldOut((id, on) => heardB.push(`${id}:${on}`));
  expect(await redis.pubsub('NUMSUB', `${prefixA}sk:soldout`)).toEqual([`${prefixA}sk:soldout`, 1]);
  await a.soldOut.publishSoldOut(sale.activityId, true);
  await b.soldOut.publishSoldOut('1', false);
  await expect.poll(() => heardA.length).toBe(1);
  await expect.poll(() => heardB.length).toBe(1);
  expect(heardA).toEqual([`${sale.activityId}:true`]);
  expect(heardB).toEqual(['1:false']);
});

it('REDIS_KEY_PREFIX is validated: braces would move the hash tag', () => {
  expect(loadConfig({ REDIS_KEY_PREFIX: 'staging:' }).REDIS_KEY_PREFIX).toBe('staging:');
  expect(loadConfig({}).REDIS_KEY_PREFIX).toBe('');
  expect(() => loadConfig({ REDIS_KEY_PREFIX: '{x}:' })).toThrow(/REDIS_KEY_PREFIX/);
});

it('bucket keys carry the prefix too, before the bucket hash tag', () => {
  const keys = keyspace('staging:').activity('5', '7', 1, 4);
  expect(Object.values(keys).every((k) => k.startsWith('staging:sk:{5:7:1}:'))).toBe(true);
});
