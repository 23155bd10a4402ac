/**
 * Drill (b), docs/design.md §10 durability: one Redis with AOF `appendfsync always`, SIGKILLed mid-sale and
 * started again on its file. The origin sees a new run id under the sale, closes it (503 not_ready),
 * rebuilds it from MySQL + the Stream, and reopens by itself; afterwards every acknowledged
 * reservation is exactly one order, no user has two, orders ≤ stock, and reconciliation is ok.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterValue, expectGuarantees, storm } from '../../helpers/drill.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';
import { startPersistentRedis, type PersistentRedis } from '../../helpers/redis-server.js';

let redis: PersistentRedis;
let t: TestOrigin;

beforeAll(async () => {
  redis = await startPersistentRedis('always');
  t = await startTestOrigin({
    REDIS_URL: redis.url,
    FAILOVER_POLL_MS: '100',
    // A busy shared machine: a slow answer is not a dead Redis here.
    REDIS_COMMAND_TIMEOUT_MS: '2000',
    REDIS_BREAKER_OPEN_MS: '100',
    RESERVE_MAX_IN_FLIGHT: '256',
  });
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await redis?.stop();
});

describe('drill: a single Redis with AOF appendfsync always, SIGKILLed and restarted mid-sale', () => {
  it('loses no acknowledged reservation, closes the sale, recovers it and reopens it by itself', async () => {
    const stock = 500;
    const { activityId } = await t.sale({ stock });
    let killedAt: number | null = null;
    let reopenedAt: number | null = null;
    t.origin.failoverWatch.onReopened = (id) => {
      if (id === activityId) reopenedAt = Date.now();
    };
    const base = 7_000_000_000 + randomInt(0, 1_000_000) * 10_000;
    const users = Array.from({ length: 1500 }, (_, i) => String(base + i));
    const running = storm({
      users,
      width: 48,
      deadlineMs: 180_000,
      since: () => reopenedAt,
      reserve: async (userId, requestId) => {
        const res = await t
          .internal('POST', '/internal/reserve', { activityId, userId, quantity: 1, requestId })
          .catch(() => null);
        return res ? { status: res.status, body: await res.json() } : { status: 0, body: {} };
      },
    });

    // Mid-sale: some units sold, most not.
    await waitFor(
      async () =>
        Number(
          (await t.origin.parts.metrics.reserveOutcomes.get()).values.find((v) => v.labels.code === 'ok')?.value ?? 0,
        ),
      (n) => n >= 100,
      60_000,
      10,
    );
    killedAt = Date.now();
    await redis.kill();
    await new Promise((r) => setTimeout(r, 300));
    await redis.restart();
    const result = await running;

    // It closed, recovered and reopened by itself, and sold after the restart.
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'detected' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'recovered' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'reopened' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(t, 'seckill_failover_steps_total', { step: 'refused' })).toBe(0);
    expect(reopenedAt).not.toBeNull();
    expect(t.origin.parts.failover.isClosed(activityId)).toBe(false);
    expect(result.firstAckAfter).not.toBeNull();
    // Every unit sold in the end (appendfsync always lost nothing): the buyers kept trying.
    expect(result.acknowledged.size).toBe(stock);
    expect(result.refused.size).toBe(users.length - stock);

    console.log(
      `drill (b) AOF always: kill → reopen ${reopenedAt! - killedAt} ms (restart after 300 ms); answers ${JSON.stringify(result.tally)}`,
    );
    await expectGuarantees(t, t.db, activityId, stock, result.acknowledged);
  }, 300_000);
});
