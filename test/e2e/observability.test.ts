/**
 * One trace id follows a purchase through the edge log, the origin log, the Stream event and the
 * settlement log; /metrics carries the five signals (success rate, Redis latency and errors, Stream
 * backlog, DB activity and slow transactions, event-loop and GC pauses).
 */
import { Writable } from 'node:stream';
import { sign } from 'hono/jwt';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { activityKeys } from '../../origin/redis/keys.js';
import type { RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { waitFor, type TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

const edgeLines: any[] = [];
const originLines: any[] = [];
let origin: TestOrigin;
let edge: RunningEdge;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) originLines.push(safeJson(line));
      done();
    },
  });
  ({ edge, origin } = await startTestStack({
    edge: { onLog: (line) => edgeLines.push(safeJson(line)) },
    // debug: the per-reserve line is a debug line (a JSON line per request cost the hot path at info).
    originLog: pino({ level: 'debug' }, sink),
  }));
});
afterAll(async () => {
  await edge?.stop();
  await origin?.stop();
});

function safeJson(line: string): any {
  try {
    return JSON.parse(line);
  } catch {
    return { raw: line };
  }
}

it('a purchase carries one trace id through edge log, origin log, Stream event and settlement log', async () => {
  const { activityId, skuId } = await origin.sale({ stock: 5 });
  const userId = '8800001';
  const auth = `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;
  const ticket = (await (
    await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization: auth },
    })
  ).json()) as any;
  // The client's traceparent is logged beside the edge's own trace id, never used as it.
  const clientTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const clientTraceparent = `00-${clientTraceId}-00f067aa0ba902b7-01`;
  const res = await fetch(`${edge.url}${ticket.purchaseUrl}`, {
    method: 'POST',
    headers: {
      authorization: auth,
      'idempotency-key': 'trace-1',
      'content-type': 'application/json',
      traceparent: clientTraceparent,
    },
    body: '{"quantity":1}',
  });
  expect(res.status).toBe(202);
  const traceId = res.headers.get('x-trace-id')!;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(traceId).not.toBe(clientTraceId);
  const { reservationId } = (await res.json()) as any;

  await waitFor(
    async () => originLines.filter((l) => l.traceId === traceId && l.msg === 'settled').length,
    (n) => n === 1,
  );
  await waitFor(
    async () => edgeLines.filter((l) => l.traceId === traceId).length,
    (n) => n >= 1,
  );

  const edgeLine = edgeLines.find((l) => l.traceId === traceId);
  expect(edgeLine).toMatchObject({ userId, activityId, status: 202, outcome: 'queued', clientTraceparent });
  expect(originLines.some((l) => l.traceId === clientTraceId)).toBe(false);
  const reserveLine = originLines.find((l) => l.traceId === traceId && l.msg === 'reserve');
  expect(reserveLine).toMatchObject({ activityId, userId, reservationId });
  const [event] = (await origin.redis.xrange(activityKeys(activityId, skuId).events, '-', '+')) as [string, string[]][];
  const fields = event![1];
  expect(fields[fields.indexOf('traceId') + 1]).toBe(traceId);
  const settledLine = originLines.find((l) => l.traceId === traceId && l.msg === 'settled');
  expect(settledLine).toMatchObject({ activityId, reservationId, userId });
  // At info (the default) the settlement log is one line per batch, with its orders' trace ids.
  const batchLine = originLines.find((l) => l.msg === 'settled batch' && l.traceIds?.includes(traceId));
  expect(batchLine).toMatchObject({ level: 30, activityId, orders: 1 });
  const [[order]] = (await origin.db.pool.query('SELECT trace_id FROM seckill_order WHERE reservation_id = ?', [
    reservationId,
  ])) as any;
  expect(order.trace_id).toBe(traceId);
});

it('/metrics exposes the five signals', async () => {
  const text = await (await fetch(`${origin.url}/metrics`)).text();
  // 1. success rate: reserve outcomes by code
  expect(text).toMatch(/seckill_reserve_total\{code="ok"\} [1-9]/);
  // 2. Redis latency and errors
  expect(text).toMatch(/seckill_redis_call_duration_seconds_count [1-9]/);
  expect(text).toMatch(/seckill_redis_errors_total \d/);
  // 3. Stream backlog
  expect(text).toMatch(/seckill_stream_pending\{activity="\d+"\} \d/);
  expect(text).toMatch(/seckill_stream_lag\{activity="\d+"\} \d/);
  // 4. DB activity and slow transactions
  expect(text).toMatch(/seckill_db_transaction_duration_seconds_count\{outcome="commit"\} [1-9]/);
  expect(text).toMatch(/seckill_db_slow_transactions_total \d/);
  expect(text).toMatch(/seckill_orders_settled_total [1-9]/);
  // 5. event-loop and GC pauses
  expect(text).toMatch(/nodejs_eventloop_lag_p99_seconds \d/);
  expect(text).toContain('nodejs_gc_duration_seconds');
});
