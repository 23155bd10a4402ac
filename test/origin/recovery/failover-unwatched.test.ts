/**
 * A failover nobody watched (docs/design.md §10, durability): the origin is down while its Redis is
 * SIGKILLed and started again on its AOF (a new run id under the sale, the last writes possibly
 * lost). The origin that starts afterwards has never seen the old primary, yet it must not take the
 * new one as the sale's own: the warm-up recorded the primary that took the load
 * (lua/warmup-4.lua), so the watch sees the change, closes the sale, recovers it and reopens it.
 * The same holds when a process's first question to a bucket went unanswered and a failover came
 * before its second.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { activityKeys } from '../../../origin/redis/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { counterValue } from '../../helpers/drill.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startPersistentRedis, type PersistentRedis } from '../../helpers/redis-server.js';

let redis: PersistentRedis;
let db: TestDatabase;
let first: TestOrigin | undefined;
let second: TestOrigin | undefined;
const env = () => ({
  REDIS_URL: redis.url,
  FAILOVER_POLL_MS: '100',
  REDIS_COMMAND_TIMEOUT_MS: '2000',
  REDIS_BREAKER_OPEN_MS: '100',
});

beforeAll(async () => {
  redis = await startPersistentRedis('always');
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await redis?.stop();
  await db?.drop();
});

it('an origin started after a Redis restart it did not see closes the sale, recovers it and reopens it', async () => {
  first = await startTestOrigin(env(), db);
  const { activityId, skuId } = await first.sale({ stock: 20 });
  for (let u = 0; u < 5; u++) {
    const res = await first.internal('POST', '/internal/reserve', {
      activityId,
      userId: String(9_100_000 + u),
      quantity: 1,
      requestId: `unwatched-${u}`,
    });
    expect(res.status).toBe(202);
  }
  const runIdOf = async (t: TestOrigin) => {
    const sale = await t.origin.parts.catalog.resolve(activityId);
    return (await t.origin.parts.redis.replication.primaries([sale])).get(activityId)![0];
  };
  const warmedOn = await runIdOf(first);
  expect(warmedOn).toMatch(/^[0-9a-f]{40}$/);
  await first.stop();
  first = undefined;

  // Nobody watches: Redis dies and comes back on its file, with a new run id.
  await redis.kill();
  await redis.restart();

  second = await startTestOrigin(env(), db);
  const t = second;
  expect(await runIdOf(t)).not.toBe(warmedOn);
  await waitFor(
    () => counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' }),
    (n) => n >= 1,
    30_000,
  );
  expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'detected' })).toBe(1);
  expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'recovered' })).toBe(1);
  expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'refused' })).toBe(0);
  // Proven on the new primary: another process starting now has nothing to detect.
  const config = await t.origin.parts.redis.connection.ops.redis.hget(
    activityKeys(activityId, skuId).config,
    'provenPrimary',
  );
  expect(config).toBe(await runIdOf(t));
  // The five reservations are still held, and the sale sells again.
  expect(Number(await t.origin.parts.redis.connection.ops.redis.get(activityKeys(activityId, skuId).stock))).toBe(15);
  const res = await t.internal('POST', '/internal/reserve', {
    activityId,
    userId: '9100099',
    quantity: 1,
    requestId: 'unwatched-after',
  });
  expect(res.status).toBe(202);
}, 120_000);
