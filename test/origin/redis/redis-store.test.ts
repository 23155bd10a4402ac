/** The RedisStore's typed methods against the real Redis: each script outcome decoded to its kind. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../../origin/platform/logger.js';
import { activityKeys } from '../../../origin/redis/keys.js';
import { RedisStore, type Sale } from '../../../origin/redis/redis-store.js';
import { REDIS_URL } from '../../helpers/db.js';
import { uniqueId } from '../../helpers/ids.js';

let store: RedisStore;
const sales: Sale[] = [];
const newSale = (): Sale => {
  const sale = { activityId: uniqueId(), skuId: uniqueId(), buckets: 1 };
  sales.push(sale);
  return sale;
};
const options = (url: string) => ({
  redis: { url },
  requestTimeoutMs: 1_000,
  opsTimeoutMs: 5_000,
  breaker: { failureThreshold: 2, openMs: 60_000 },
  log: createLogger('silent'),
});

beforeAll(async () => {
  store = await RedisStore.connect(options(REDIS_URL));
});
afterAll(async () => {
  for (const sale of sales) await store.registry.expire(sale, 1);
  await store.close();
});

const reserve = (sale: Sale, userId: string, quantity = 1) =>
  store.requests.reserve({ ...sale, userId, quantity, requestId: `req-${userId}`, traceId: 'a'.repeat(32) });

it('reserve: every outcome as its kind, with the reservation and what is left', async () => {
  const sale = newSale();
  expect(await reserve(sale, '1')).toEqual({ kind: 'not_warmed' });
  expect(await store.sales.warmup(sale, { stock: 3, state: 'open', maxPerUser: 2 })).toEqual({
    kind: 'loaded',
    stock: 3,
    holders: 0,
  });
  const first = await reserve(sale, '1', 2);
  expect(first).toMatchObject({ kind: 'reserved', remaining: 1 });
  const { reservationId } = first as { reservationId: string };
  expect(reservationId.startsWith(`${sale.activityId}-`)).toBe(true);
  expect(await reserve(sale, '1')).toEqual({ kind: 'repeat', reservationId });
  expect(await store.requests.holderOf(sale, '1')).toBe(reservationId);
  expect(await reserve(sale, '2', 3)).toEqual({ kind: 'limit_exceeded' });
  expect(await reserve(sale, '2', 2)).toEqual({ kind: 'insufficient_stock' });
  expect(await reserve(sale, '2', 1)).toMatchObject({ kind: 'reserved', remaining: 0 });
  expect(await reserve(sale, '3', 1)).toEqual({ kind: 'sold_out' });
  await store.sales.setState(sale, 'paused');
  expect(await reserve(sale, '4')).toEqual({ kind: 'paused' });
  await store.sales.setState(sale, 'stopped');
  expect(await reserve(sale, '4')).toEqual({ kind: 'ended' });
  expect(await store.sales.warmup(sale, { stock: 99, state: 'open', maxPerUser: 2 })).toEqual({
    kind: 'already',
    stock: 0,
    holders: 2,
  });
  expect(await store.registry.warmedSales()).toContainEqual(sale);
});

it('release, refill and requeue decode their outcomes; the Stream reads see the events', async () => {
  const sale = newSale();
  expect(await store.sales.refill(sale, { reservationId: 'x', quantity: 1 })).toEqual({ kind: 'not_warmed' });
  await store.sales.warmup(sale, { stock: 2, state: 'open', maxPerUser: 1 });
  const granted = (await reserve(sale, '7')) as { reservationId: string };
  const release = { reservationId: granted.reservationId, userId: '7', quantity: 1, cap: 2 };
  expect(await store.sales.release(sale, release)).toEqual({ kind: 'released', restocked: 1 });
  expect(await store.sales.release(sale, release)).toEqual({ kind: 'already', restocked: 1 });
  const reservations = await store.ledger.streamReservations(sale);
  const { event } = reservations!.get(granted.reservationId)!;
  expect(event).toMatchObject({ userId: '7', quantity: 1, requestId: 'req-7', traceId: 'a'.repeat(32) });
  expect(await store.streams.requeue(sale, event)).toEqual({ kind: 'requeued', stock: 1 });
  expect(await store.streams.requeue(sale, event)).toEqual({ kind: 'already' });
  expect(await store.sales.refill(sale, { reservationId: 'r-t', quantity: 1 })).toEqual({ kind: 'refilled', stock: 2 });
  expect(await store.sales.refill(sale, { reservationId: 'r-t', quantity: 1 })).toEqual({ kind: 'already', stock: 2 });
  expect(await store.streams.groupInfo(sale)).toEqual({ pending: 0, lag: 2 });
});

it('group info: null for a sale without a Stream; a read that fails throws instead of reading as "no group"', async () => {
  const sale = newSale();
  expect(await store.streams.groupInfo(sale)).toBeNull();
  // A key that cannot be read as a Stream: XINFO fails, as a read that timed out would.
  const events = activityKeys(sale.activityId, sale.skuId).events;
  await store.connection.ops.redis.set(events, 'not a stream');
  await expect(store.streams.groupInfo(sale)).rejects.toThrow(/WRONGTYPE/);
  await store.connection.ops.redis.del(events);
});

it('a store does not start without Redis: the origin refuses to come up rather than sell blind', async () => {
  const dead = await RedisStore.connect(options('redis://127.0.0.1:1')).catch((err: Error) => err);
  expect(dead).toBeInstanceOf(Error);
});

it('group info: a lag Redis cannot tell (an entry deleted after the last delivered one) is counted, not read as 0', async () => {
  const sale = newSale();
  await store.sales.warmup(sale, { stock: 5, state: 'open', maxPerUser: 1 });
  const granted = [];
  for (const u of ['1', '2', '3']) granted.push(await reserve(sale, u));
  expect(await store.streams.groupInfo(sale)).toEqual({ pending: 0, lag: 3 });
  // XDEL leaves a tombstone past the group's last delivered entry: XINFO's lag is nil from then on.
  const events = activityKeys(sale.activityId, sale.skuId).events;
  const ids = ((await store.connection.ops.redis.xrange(events, '-', '+')) as [string, string[]][]).map(([id]) => id);
  await store.connection.ops.redis.xdel(events, ids[1]!);
  // Two entries are still undelivered: a cleanup must not take this for a settled sale.
  expect(await store.streams.groupInfo(sale)).toEqual({ pending: 0, lag: 2 });
});
