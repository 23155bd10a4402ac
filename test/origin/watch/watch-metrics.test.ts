/**
 * The five signals' series an origin exports (docs/watching-a-sale.md): every reserve answer in
 * seckill_order_answers_total with its decided flag, Redis clients and slow-log growth per node, MySQL
 * status and the pool, open dead letters, and scrape-time reads bounded in time. The origin runs on a
 * Redis of its own, so slow-log counts are exact.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPersistentRedis, type PersistentRedis } from '../../helpers/redis-server.js';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let redisServer: PersistentRedis;
let redis: Redis;
let t: TestOrigin;

beforeAll(async () => {
  redisServer = await startPersistentRedis('everysec');
  redis = new Redis(redisServer.url);
  t = await startTestOrigin({
    REDIS_URL: redisServer.url,
    MYSQL_POOL_SIZE: '7',
    METRICS_CACHE_MS: '0',
    METRICS_READ_TIMEOUT_MS: '300',
    // The first Redis timeout opens the breaker: the next answer is an immediate 503 unavailable.
    REDIS_BREAKER_FAILURES: '1',
    REDIS_COMMAND_TIMEOUT_MS: '1000',
    RESERVE_ANSWER_DEADLINE_MS: '800',
  });
});
afterAll(async () => {
  await t?.stop();
  redis?.disconnect();
  await redisServer?.stop();
});

/** One scrape, as `name{labels} value` → value. */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const series = new Map<string, number>();
  for (const line of text.split('\n'))
    if (line && !line.startsWith('#')) {
      const at = line.lastIndexOf(' ');
      series.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
  return series;
}

const answers = (m: Map<string, number>, outcome: string, decided: boolean) =>
  m.get(`seckill_order_answers_total{outcome="${outcome}",decided="${decided}"}`) ?? 0;

const reserve = (activityId: string, userId: string, headers?: Record<string, string>) =>
  t.internal(
    'POST',
    '/internal/reserve',
    { activityId, userId, quantity: 1, requestId: `r-${userId}-${Math.random()}` },
    { headers },
  );

describe('seckill_order_answers_total', () => {
  it('counts every answer of POST /internal/reserve once, decided or not, by outcome', async () => {
    const { activityId } = await t.sale({ stock: 1 });
    const before = await scrape();
    expect((await reserve(activityId, '501')).status).toBe(202); // reserved
    expect((await reserve(activityId, '501')).status).toBe(200); // repeat
    expect((await reserve(activityId, '502')).status).toBe(409); // sold out
    expect((await reserve(activityId, '502')).status).toBe(409);
    expect((await reserve('999999999', '503')).status).toBe(404); // no such sale: decided
    // A request the origin cannot trust (the edge's secret does not match): not decided.
    expect((await reserve(activityId, '504', { 'x-edge-signature': 'v1=' + '0'.repeat(64) })).status).toBe(401);
    const after = await scrape();
    const grew = (outcome: string, decided: boolean) =>
      answers(after, outcome, decided) - answers(before, outcome, decided);
    expect(grew('reserved', true)).toBe(1);
    expect(grew('repeat', true)).toBe(1);
    expect(grew('sold_out', true)).toBe(2);
    expect(grew('not_found', true)).toBe(1);
    expect(grew('unauthenticated', false)).toBe(1);
  });

  it('paused is decided (the operator decided); a Redis timeout past the edge wait and unavailable are not', async () => {
    const { activityId } = await t.sale({ stock: 10 });
    const before = await scrape();
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' })).status).toBe(200);
    expect((await reserve(activityId, '601')).status).toBe(503);
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'open' })).status).toBe(200);
    // Writes held: the reserve script waits REDIS_COMMAND_TIMEOUT_MS (1 s), longer than the edge
    // waits (RESERVE_ANSWER_DEADLINE_MS, 800 ms): a timeout. It opens the breaker, so the next
    // answer is an immediate 503 unavailable.
    await redis.client('PAUSE', 3000, 'WRITE');
    try {
      const slow = await reserve(activityId, '602');
      expect(slow.status).toBe(503);
      const fast = await reserve(activityId, '603');
      expect(fast.status).toBe(503);
      expect(((await fast.json()) as { error: string }).error).toBe('unavailable');
    } finally {
      await redis.client('UNPAUSE');
    }
    const after = await scrape();
    const grew = (outcome: string, decided: boolean) =>
      answers(after, outcome, decided) - answers(before, outcome, decided);
    expect(grew('paused', true)).toBe(1);
    expect(grew('timeout', false)).toBe(1);
    expect(grew('unavailable', false)).toBe(1);
    // Leave the origin as found: the breaker opened above closes again once Redis answers (after
    // REDIS_BREAKER_OPEN_MS), so the next test's first reserve is not refused by it.
    let answer = await reserve(activityId, '604');
    for (let waited = 0; answer.status === 503 && waited < 5_000; waited += 100) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await reserve(activityId, '604');
    }
    expect(answer.status).toBe(202);
  });
});

describe('scrape-time reads', () => {
  it('Redis: connected clients and maxclients of the node, slow-log growth counted exactly', async () => {
    const node = `127.0.0.1:${redisServer.port}`;
    const [, maxclients] = (await redis.config('GET', 'maxclients')) as [string, string];
    const before = await scrape();
    expect(before.get(`seckill_redis_maxclients{node="${node}"}`)).toBe(Number(maxclients));
    // The origin's request, ops and subscriber connections, its consumers and this test's client.
    expect(before.get(`seckill_redis_connected_clients{node="${node}"}`)).toBeGreaterThanOrEqual(4);
    // Two commands over the slow-log threshold (10 ms by default): a busy Lua loop each.
    await redis.config('SET', 'slowlog-log-slower-than', '5000');
    for (let i = 0; i < 2; i++) await redis.eval('local i = 0 while i < 3000000 do i = i + 1 end return i', 0);
    const after = await scrape();
    const key = `seckill_redis_slowlog_entries_total{node="${node}"}`;
    expect(after.get(key)! - before.get(key)!).toBe(2);
  });

  it('MySQL: threads, max_connections, slow queries; the pool: in use and idle against its limit', async () => {
    const [[limits]] = (await t.db.pool.query('SELECT @@max_connections AS m')) as any;
    const before = await scrape();
    expect(before.get('seckill_mysql_max_connections')).toBe(Number(limits.m));
    expect(before.get('seckill_mysql_threads_connected')).toBeGreaterThanOrEqual(1);
    expect(before.get('seckill_mysql_threads_running')).toBeGreaterThanOrEqual(1); // the status read itself
    expect(before.get('seckill_db_pool_limit')).toBe(7);
    const inUse = before.get('seckill_db_pool_connections{state="in_use"}')!;
    const idle = before.get('seckill_db_pool_connections{state="idle"}')!;
    expect(inUse + idle).toBeGreaterThanOrEqual(1);
    expect(inUse + idle).toBeLessThanOrEqual(7);
    // Slow_queries is server-wide (other clients count too): at least this one.
    const conn = await t.db.pool.getConnection();
    try {
      await conn.query('SET SESSION long_query_time = 0.001');
      await conn.query('SELECT SLEEP(0.01)');
    } finally {
      conn.release();
    }
    const after = await scrape();
    expect(
      after.get('seckill_mysql_slow_queries_total')! - before.get('seckill_mysql_slow_queries_total')!,
    ).toBeGreaterThanOrEqual(1);
  });

  it('each warmed sale: its phase, units left per bucket, and failover closed 0', async () => {
    const { activityId } = await t.sale({ stock: 9, stockBuckets: 3 });
    const first = await reserve(activityId, '701');
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const m = await scrape();
    const left = [0, 1, 2].map((b) => m.get(`seckill_stock_left{activity="${activityId}",bucket="${b}"}`)!);
    expect(left.reduce((a, b) => a + b, 0)).toBe(8);
    expect(m.get(`seckill_sale_state{activity="${activityId}",state="open"}`)).toBe(1);
    expect(m.get(`seckill_sale_state{activity="${activityId}",state="sold_out"}`)).toBe(0);
    expect(m.get(`seckill_failover_closed{activity="${activityId}"}`)).toBe(0);
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' })).status).toBe(200);
    const paused = await scrape();
    expect(paused.get(`seckill_sale_state{activity="${activityId}",state="paused"}`)).toBe(1);
    expect(paused.get(`seckill_sale_state{activity="${activityId}",state="open"}`)).toBe(0);
  });

  it('open dead letters per sale, gone from the gauge once handled', async () => {
    const insert = (reservationId: string, status: string) =>
      t.db.pool.query(
        `INSERT INTO seckill_dead_letter (activity_id, sku_id, reservation_id, user_id, quantity, stream_id, deliveries, reason, status, payload)
         VALUES (4242, 1, ?, 7, 1, '1-0', 5, 'test', ?, '{}')`,
        [reservationId, status],
      );
    await insert('dl-open-1', 'open');
    await insert('dl-open-2', 'open');
    await insert('dl-given-up', 'given_up');
    expect((await scrape()).get('seckill_dead_letters_open{activity="4242"}')).toBe(2);
    await t.db.pool.query("UPDATE seckill_dead_letter SET status = 'given_up' WHERE activity_id = 4242");
    expect((await scrape()).has('seckill_dead_letters_open{activity="4242"}')).toBe(false);
  });

  it('a Redis that does not answer holds a scrape no longer than METRICS_READ_TIMEOUT_MS, and counts', async () => {
    const before = await scrape();
    // Redis frozen (SIGSTOP: its connections stay open, nothing answers) until the scrape is back, so a
    // scrape that waited for Redis would never come back: one that does gave up on its own.
    redisServer.freeze();
    let during: Awaited<ReturnType<typeof scrape>>;
    try {
      during = await scrape();
    } finally {
      redisServer.thaw();
    }
    const key = 'seckill_metrics_read_failures_total{source="redis_nodes"}';
    expect((during.get(key) ?? 0) - (before.get(key) ?? 0)).toBe(1);
    // The last values stay.
    expect(during.get(`seckill_redis_maxclients{node="127.0.0.1:${redisServer.port}"}`)).toBeGreaterThan(0);
  });
});
