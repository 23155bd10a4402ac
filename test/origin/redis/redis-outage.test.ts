/**
 * Redis trouble against a Redis of the test's own (`redis-server --port <free> --save ''
 * --appendonly no`): one that stops answering (SIGSTOP) → 503 `unavailable`, fast once the breaker
 * is open, nothing written; one that loses everything (FLUSHALL, the Stream included) → 503
 * `not_ready`, warm-up and recover both refuse, selling stays stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../support/processes.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { count, reserveAll, users } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let redisServer: ChildProcess;
let own: Redis;
let t: TestOrigin;
beforeAll(async () => {
  const port = await freePort();
  redisServer = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const answers = async () => {
    const probe = new Redis({ port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  };
  await waitFor(answers, (ok) => ok, 10_000, 100);
  own = new Redis({ port });
  t = await startTestOrigin({
    REDIS_URL: `redis://127.0.0.1:${port}`,
    REDIS_COMMAND_TIMEOUT_MS: '300',
    REDIS_BREAKER_FAILURES: '3',
    // Long enough that the calls after the third all meet the open breaker, however slow the machine.
    REDIS_BREAKER_OPEN_MS: '5000',
  });
});
afterAll(async () => {
  redisServer?.kill('SIGCONT');
  await t?.stop();
  own?.disconnect();
  redisServer?.kill('SIGKILL');
});

describe('a Redis that stops answering', () => {
  it('answers 503 unavailable within the timeout, then at once from the open breaker; no MySQL write', async () => {
    const { activityId } = await t.sale({ stock: 10 });
    expect((await reserveAll(t, activityId, ['1']))[0]!.status).toBe(202);
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 1,
    );

    const askedRedis = async () => {
      const { values } = await t.origin.parts.metrics.redisLatency.get();
      return values.find((v) => v.metricName === 'seckill_redis_call_duration_seconds_count')?.value ?? 0;
    };
    const redisErrors = async () => (await t.origin.parts.metrics.redisErrors.get()).values[0]?.value ?? 0;
    const askedBefore = await askedRedis();
    const errorsBefore = await redisErrors();
    redisServer.kill('SIGSTOP');
    try {
      const timings: number[] = [];
      for (const userId of users(100, 8)) {
        const started = performance.now();
        const [r] = await reserveAll(t, activityId, [userId]);
        timings.push(performance.now() - started);
        expect([r!.status, r!.body.error]).toEqual([503, 'unavailable']);
      }
      // The first calls wait for the command timeout (300 ms) and fail on it; once the breaker is
      // open (3 failures) the answer comes without asking Redis at all: Redis was asked 3 times.
      for (const ms of timings.slice(0, 3)) expect(ms).toBeGreaterThanOrEqual(250);
      expect((await askedRedis()) - askedBefore).toBe(3);
      expect((await redisErrors()) - errorsBefore).toBe(3);
      expect(await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(1);
    } finally {
      redisServer.kill('SIGCONT');
    }
    // Redis back: after the breaker's open period, selling resumes.
    await waitFor(
      async () => (await reserveAll(t, activityId, ['200']))[0]!.status,
      (s) => s === 202,
      10_000,
      200,
    );
  });
});

describe('a Redis that lost everything (FLUSHALL)', () => {
  it('stays stopped: 503 not_ready, warm-up and recover refuse, nothing written', async () => {
    const { activityId, skuId } = await t.sale({ stock: 10 });
    expect((await reserveAll(t, activityId, users(300, 3))).map((r) => r.status)).toEqual([202, 202, 202]);
    await waitFor(
      () => count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId]),
      (n) => n === 3,
    );
    await own.flushall();

    const refused = await reserveAll(t, activityId, [...users(300, 2), ...users(400, 5)]);
    for (const r of refused) expect([r.status, r.body.error]).toEqual([503, 'not_ready']);
    const warm = await t.admin('POST', `/admin/activities/${activityId}/warmup`);
    expect(warm.status).toBe(409);
    const rec = await t.admin('POST', `/admin/activities/${activityId}/recover`);
    expect(rec.status).toBe(409);
    expect(((await rec.json()) as any).message).toMatch(/Stream/);
    expect(await own.exists(activityKeys(activityId, skuId).stock)).toBe(0);
    expect(await count(t, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(3);
    expect(await count(t, 'SELECT available FROM seckill_stock WHERE activity_id = ?', [activityId])).toBe(7);
  });
});
