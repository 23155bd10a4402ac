/**
 * Settlement benchmark: time to settle N queued reservations (one consumer process, SETTLE_WORKERS
 * consumers in it), orders/s, against two baselines measured in the same run with the same number
 * of MySQL connections:
 *   - the seeds' per-message transaction: one reservation per transaction (SELECT the order, INSERT
 *     order, conditional stock UPDATE, INSERT stock log, COMMIT) — what settlement replaces;
 *   - a bare autocommit hot-row `UPDATE ... WHERE available >= 1` (the one statement of the
 *     settle transaction that cannot run in parallel).
 * Settlement runs twice: order events off, then on (ORDER_EVENTS_URL pointing at a local receiver
 * answering 204, so the order-event worker delivers alongside), to show what events cost.
 *
 * Its floor, measured in the same rounds on the same database (bench/lib/settle-floor.ts): a bare
 * program writing the same rows — orders, stock log, the outbox rows when events are on, the
 * conditional stock UPDATE — with the stores' own statements, in batches of SETTLE_BATCH_SIZE on
 * `--workers` connections, and nothing else. The goal is settlement with events on at ≥ 0.8 of the
 * floor with events rows (`ratioToFloor`, the median of the rounds' ratios).
 *
 * With `--rounds R` the settle runs and the floor runs are repeated R times, alternating which goes
 * first, and the median of each is reported (this shared machine moves figures by ±50 % from one
 * run to the next).
 *
 *   npx tsx bench/settle.ts [--reservations 50000] [--workers 4] [--baseline-reservations 5000] [--rounds 1]
 */
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { newReservationId } from '../contract/ids.js';
import { affected, one, rows } from '../origin/platform/db/rows.js';
import { ACTIVITY_REGISTRY_KEY, activityKeys } from '../origin/redis/keys.js';
import { loadConfig } from '../origin/platform/config.js';
import { createPool } from '../origin/platform/db/pool.js';
import { createLogger } from '../origin/platform/logger.js';
import { RedisStore } from '../origin/redis/redis-store.js';
import { freePort, stopChild, waitForHttp } from '../support/processes.js';
import { benchOptions, runAsScript } from './lib/cli.js';
import { cpuMsOf, machineLoad, mysqldPid, redisServerPid } from './lib/proc.js';
import { floorReservations, runSettleFloor } from './lib/settle-floor.js';
import { adminCall, BENCH_SECRETS, benchDatabase, createOpenSale, spawnOrigin } from './lib/stack.js';

const options = benchOptions({
  numbers: { reservations: 50_000, workers: 4, 'baseline-reservations': 5000, rounds: 1 },
});
const N = options.reservations;
const workers = options.workers;
const baselineN = options['baseline-reservations'];
const rounds = options.rounds;

const newId = () => String(randomInt(1, 2 ** 40));

/** The goal: settlement with order events on at this share of its floor's orders/s, or more. */
const FLOOR_GOAL = 0.8;

/** `concurrency` connections each running `step` until `total` steps are done; steps/s. */
async function timed(total: number, concurrency: number, step: (i: number) => Promise<void>) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await step(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: total / seconds };
}

async function stockRow(pool: mysql.Pool, activityId: string, units: number) {
  await pool.query('INSERT INTO seckill_stock (activity_id, sku_id, initial_stock, available) VALUES (?, 1, ?, ?)', [
    activityId,
    units,
    units,
  ]);
}

async function bareUpdates(pool: mysql.Pool, total: number) {
  const activityId = newId();
  await stockRow(pool, activityId, total);
  return timed(total, workers, async () => {
    await pool.execute(
      'UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = 1 AND available >= 1',
      [activityId],
    );
  });
}

/** The seeds' settlement: one transaction per reservation, as docs/design.md §6 writes it per message. */
async function perMessageTransactions(pool: mysql.Pool, total: number) {
  const activityId = newId();
  await stockRow(pool, activityId, total);
  const userBase = randomInt(1, 2 ** 40);
  return timed(total, workers, async (i) => {
    const reservationId = newReservationId(activityId); // random, as settlement's runs get them
    const tx = await pool.getConnection();
    try {
      await tx.beginTransaction();
      const found = await rows<{ id: string }>(
        tx.execute('SELECT id FROM seckill_order WHERE reservation_id = ?', [reservationId]),
      );
      if (found.length === 0) {
        await tx.execute(
          `INSERT INTO seckill_order (order_no, reservation_id, request_id, activity_id, sku_id, user_id, quantity, status, expire_at)
           VALUES (?, ?, ?, ?, 1, ?, 1, 0, NOW(3) + INTERVAL 900 SECOND)`,
          [
            `P${activityId}${i}`.slice(0, 32),
            reservationId,
            `${activityId}:${userBase + i}:p${i}`,
            activityId,
            userBase + i,
          ],
        );
        const updated = await affected(
          tx.execute(
            'UPDATE seckill_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = 1 AND available >= 1',
            [activityId],
          ),
        );
        if (updated !== 1) throw new Error('per-message baseline ran out of stock');
        await tx.execute(
          "INSERT INTO seckill_stock_log (activity_id, sku_id, biz_id, change_type, quantity) VALUES (?, 1, ?, 'DEDUCT', 1)",
          [activityId, reservationId],
        );
      }
      await tx.commit();
    } catch (err) {
      await tx.rollback();
      throw err;
    } finally {
      tx.release();
    }
  });
}

/** A local receiver of order events: counts them and answers 204. */
async function eventReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/events`, received: () => received, close: () => server.close() };
}

export async function benchSettle() {
  const database = await benchDatabase();
  const mysqlUrl = database.url;
  const activities: [string, string][] = [];
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const pool = mysql.createPool({ uri: mysqlUrl, connectionLimit: workers + 2 });
  const redis = new Redis(redisUrl);
  const receiver = await eventReceiver();
  const redisPid = redisServerPid();
  const port = await freePort();
  const originUrl = `http://127.0.0.1:${port}`;
  const env = { ...BENCH_SECRETS, MYSQL_URL: mysqlUrl, REDIS_URL: redisUrl, LOG_LEVEL: 'warn' };
  // The consumer process's settings (this environment over the defaults): the floor writes batches
  // of its SETTLE_BATCH_SIZE, outbox rows of its ORDER_EVENTS_BATCH_SIZE, on a pool like its own.
  const settings = loadConfig({
    ...env,
    SETTLE_BATCH_SIZE: process.env.SETTLE_BATCH_SIZE,
    ORDER_EVENTS_BATCH_SIZE: process.env.ORDER_EVENTS_BATCH_SIZE,
    MYSQL_PREPARED_STATEMENTS: process.env.MYSQL_PREPARED_STATEMENTS,
  });
  const floorDb = createPool(mysqlUrl, workers, settings.MYSQL_PREPARED_STATEMENTS);
  const http = spawnOrigin({ ...env, PORT: String(port), ORIGIN_ROLE: 'http' });
  // Reservations are queued through the origin's own stock store, as a purchase queues them.
  const store = await RedisStore.connect({
    redis: { url: redisUrl },
    requestTimeoutMs: 10_000,
    opsTimeoutMs: 10_000,
    breaker: { failureThreshold: 1_000, openMs: 1_000 },
    log: createLogger('warn', 'bench-settle'),
  });

  /** A warmed sale with N reservations queued exactly as the reserve path does (the Lua script). */
  async function queuedSale() {
    const skuId = '1';
    const activityId = await createOpenSale(originUrl, { title: 'settle bench', stock: N, activityId: newId(), skuId });
    activities.push([activityId, skuId]);
    // As in a sale: random reservation ids (contract/ids.ts) and users arriving in no order, so the
    // unique keys' inserts land all over their indexes, not appended at one end.
    const users = new Set<number>();
    while (users.size < N) users.add(randomInt(1, 2 ** 47));
    const userIds = [...users];
    for (let i = 0; i < N; i += 1000) {
      await Promise.all(
        Array.from({ length: Math.min(1000, N - i) }, (_, j) =>
          // One bucket (no borrowing), no claims: the bench's sale has no eligibility rule.
          store.requests.reserve({
            activityId,
            skuId,
            buckets: 1,
            userId: String(userIds[i + j]),
            quantity: 1,
            requestId: `b${i + j}`,
            traceId: '',
          }),
        ),
      );
    }
    return activityId;
  }

  /** Takes every sale but `keep` out of the settlement registry and MySQL (their Redis keys too). */
  async function retireEarlierSales(keep: string) {
    for (const [activityId, skuId] of activities) {
      if (activityId === keep) continue;
      await redis.del(...Object.values(activityKeys(activityId, skuId)));
      await redis.hdel(ACTIVITY_REGISTRY_KEY, activityId);
      await pool.query('DELETE FROM seckill_stock WHERE activity_id = ?', [activityId]);
      await pool.query('DELETE FROM seckill_activity WHERE id = ?', [activityId]);
    }
  }

  /**
   * Starts a consumer process and waits until all N orders of the sale are in MySQL (then for
   * `drained`, before the process is stopped).
   */
  async function settle(activityId: string, extraEnv: Record<string, string>, drained = async () => {}) {
    // Every run starts from empty tables (its own sale has no rows yet: its reservations are queued
    // in Redis only). The rows earlier runs left (20k orders each, four unique keys) made a later run
    // up to 40 % slower by themselves; deleting them instead of truncating left the purge of 20k+
    // delete-marked index entries to run during the measured run (about a third slower here). The
    // earlier sales are retired first, so the consumers' reconciliation does not check sales whose
    // orders are gone.
    await retireEarlierSales(activityId);
    for (const table of ['seckill_order', 'seckill_stock_log', 'order_event_outbox'])
      await pool.query(`TRUNCATE TABLE ${table}`);
    const serverCpuBefore = cpuMsOf(mysqldPid());
    const started = performance.now();
    const consumers = spawnOrigin({
      ...env,
      ...extraEnv,
      ORIGIN_ROLE: 'consumers',
      SETTLE_WORKERS: String(workers),
      SETTLE_DISCOVERY_MS: '50',
    });
    try {
      // Progress from the stock row: settlement deducts it in the transaction that inserts the
      // orders, so `initial - available` is the orders committed. A primary-key read every 20 ms;
      // a COUNT(*) of the orders instead scanned up to N index entries each time, MySQL CPU that
      // the measured run then did not have (it is checked once, after the clock stops).
      let firstOrderAt = 0;
      // CPU of the consumer, MySQL and Redis at the first order seen: the steady state's CPU per
      // order, without the consumer's start-up (module loading, the first reconciliation).
      let atFirst = { settled: 0, consumer: 0, mysql: 0, redis: 0 };
      const cpuNow = () => ({
        consumer: cpuMsOf(consumers.pid),
        mysql: cpuMsOf(mysqldPid()),
        redis: cpuMsOf(redisPid),
      });
      for (;;) {
        const row = await one<{ available: number }>(
          pool.query('SELECT available FROM seckill_stock WHERE activity_id = ? AND sku_id = 1', [activityId]),
        );
        const settled = N - Number(row?.available ?? N);
        if (!firstOrderAt && settled > 0) {
          firstOrderAt = performance.now();
          atFirst = { settled, ...cpuNow() };
        }
        if (settled >= N) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const end = performance.now();
      const atEnd = cpuNow();
      const perKFromFirst = (figure: 'consumer' | 'mysql' | 'redis') =>
        ((atEnd[figure] - atFirst[figure]) / (N - atFirst.settled)) * 1000;
      // The consumer process's CPU until the last order is in: settlement (and start-up), without
      // the delivery of the order events that follows (with events on, the total below has both).
      const settledCpuMs = cpuMsOf(consumers.pid);
      const orders = await one<{ n: number }>(
        pool.query('SELECT COUNT(*) AS n FROM seckill_order WHERE activity_id = ?', [activityId]),
      );
      if (Number(orders?.n) !== N) throw new Error(`stock says ${N} settled, MySQL holds ${orders?.n} orders`);
      // MySQL's CPU until the last order is in (the receiver and delivery come after, with events on).
      const serverCpuMsPerKOrders = ((cpuMsOf(mysqldPid()) - serverCpuBefore) / N) * 1000;
      await drained();
      // What the consumer process (settlement, and the order-event worker when on) spent, per order:
      // a figure the other load on a shared machine moves far less than orders/s.
      const cpuMsPerKOrders = (cpuMsOf(consumers.pid) / N) * 1000;
      return {
        cpuMsPerKOrders,
        cpuUntilSettledMsPerKOrders: (settledCpuMs / N) * 1000,
        fromFirst: {
          consumer: perKFromFirst('consumer'),
          mysql: perKFromFirst('mysql'),
          redis: perKFromFirst('redis'),
        },
        serverCpuMsPerKOrders,
        drainedAfter: (performance.now() - started) / 1000,
        fromStart: (end - started) / 1000,
        seconds: (end - firstOrderAt) / 1000,
        perSecond: N / ((end - firstOrderAt) / 1000),
      };
    } finally {
      await stopChild(consumers);
    }
  }

  /**
   * The floor (bench/lib/settle-floor.ts): N reservations of a sale of its own written in
   * settlement's batches, from empty tables as every settle run starts; orders/s from the first
   * BEGIN to the last COMMIT, and the CPU of this process (the floor's client) and of MySQL per
   * 1,000 orders.
   */
  async function settleFloor(orderEvents: boolean) {
    const activityId = newId();
    for (const table of ['seckill_order', 'seckill_stock_log', 'order_event_outbox'])
      await pool.query(`TRUNCATE TABLE ${table}`);
    await stockRow(pool, activityId, N);
    const reservations = floorReservations(activityId, N);
    const target = {
      activityId,
      skuId: '1',
      paymentTimeoutSeconds: 900,
      orderEvents,
      orderEventsPerRow: settings.ORDER_EVENTS_BATCH_SIZE,
    };
    const clientCpu = process.cpuUsage();
    const mysqlCpu = cpuMsOf(mysqldPid());
    const run = await runSettleFloor(floorDb, target, reservations, {
      batchSize: settings.SETTLE_BATCH_SIZE,
      connections: workers,
    });
    const client = process.cpuUsage(clientCpu);
    const mysqlMsPerKOrders = ((cpuMsOf(mysqldPid()) - mysqlCpu) / N) * 1000;
    const orders = await one<{ n: number }>(
      pool.query('SELECT COUNT(*) AS n FROM seckill_order WHERE activity_id = ?', [activityId]),
    );
    if (Number(orders?.n) !== N) throw new Error(`the floor wrote ${orders?.n} orders, not ${N}`);
    await pool.query('DELETE FROM seckill_stock WHERE activity_id = ?', [activityId]);
    return { ...run, clientCpuMsPerKOrders: ((client.user + client.system) / 1000 / N) * 1000, mysqlMsPerKOrders };
  }

  try {
    await waitForHttp(`${originUrl}/healthz`);
    const bare = await bareUpdates(pool, baselineN);
    const perMessage = await perMessageTransactions(pool, baselineN);
    type Run = Awaited<ReturnType<typeof settle>>;
    const offRuns: Run[] = [];
    const onRuns: Run[] = [];
    const eventsOff = async () => offRuns.push(await settle(await queuedSale(), {}));
    // Events on: the worker delivers while settlement runs; the process stays until all are out.
    const eventsOn = async () =>
      onRuns.push(
        await settle(
          await queuedSale(),
          { ORDER_EVENTS_URL: receiver.url, ORDER_EVENTS_SECRET: 'bench-order-events-secret-0123' },
          async () => {
            for (;;) {
              const outbox = await one<{ n: number }>(pool.query('SELECT COUNT(*) AS n FROM order_event_outbox'));
              if (Number(outbox?.n) === 0) break;
              await new Promise((res) => setTimeout(res, 50));
            }
          },
        ),
      );
    type FloorRun = Awaited<ReturnType<typeof settleFloor>>;
    const floorOnRuns: FloorRun[] = [];
    const floorOffRuns: FloorRun[] = [];
    const floorOn = async () => floorOnRuns.push(await settleFloor(true));
    const floorOff = async () => floorOffRuns.push(await settleFloor(false));
    // Alternate which goes first as well (the earlier rows are deleted before each run, but the
    // server's buffer pool and purge still carry some of a previous run).
    for (let r = 0; r < rounds; r++) {
      const order = [eventsOff, eventsOn, floorOn, floorOff];
      for (const step of r % 2 === 0 ? order : order.reverse()) await step();
    }
    const median = <R extends { perSecond: number }>(runs: R[]) =>
      [...runs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(runs.length / 2)]!;
    const off = median(offRuns);
    const on = median(onRuns);
    const floorWithEvents = median(floorOnRuns);
    const floorNoEvents = median(floorOffRuns);
    // Each round's settle run against the same round's floor run, then the median of those ratios.
    const ratiosToFloor = (runs: Run[], floors: FloorRun[]) => runs.map((r, i) => r.perSecond / floors[i]!.perSecond);
    const medianRatio = (ratios: number[]) => [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
    const onRatios = ratiosToFloor(onRuns, floorOnRuns);
    const offRatios = ratiosToFloor(offRuns, floorOffRuns);
    const ratioToFloor = medianRatio(onRatios);
    const ratioToFloorEventsOff = medianRatio(offRatios);
    if (rounds > 1) {
      const each = <R>(runs: R[], figure: (r: R) => number) => runs.map((r) => Math.round(figure(r))).join(', ');
      console.log(
        `orders/s per round — events off: ${each(offRuns, (r) => r.perSecond)}; events on: ${each(onRuns, (r) => r.perSecond)}; ` +
          `floor events off: ${each(floorOffRuns, (r) => r.perSecond)}; floor events on: ${each(floorOnRuns, (r) => r.perSecond)}`,
      );
      console.log(
        `CPU ms per 1,000 orders per round, consumer until the last order / MySQL — events off: ${each(offRuns, (r) => r.cpuUntilSettledMsPerKOrders)} / ${each(offRuns, (r) => r.serverCpuMsPerKOrders)}; ` +
          `events on: ${each(onRuns, (r) => r.cpuUntilSettledMsPerKOrders)} / ${each(onRuns, (r) => r.serverCpuMsPerKOrders)}`,
      );
    }
    const fromFirst = (runs: Run[], figure: 'consumer' | 'mysql' | 'redis') =>
      runs.map((r) => Math.round(r.fromFirst[figure])).join(', ');
    console.log(
      `CPU ms per 1,000 orders from the first order to the last (no start-up), consumer / MySQL / Redis per round — ` +
        `events off: ${fromFirst(offRuns, 'consumer')} / ${fromFirst(offRuns, 'mysql')} / ${fromFirst(offRuns, 'redis')}; ` +
        `events on: ${fromFirst(onRuns, 'consumer')} / ${fromFirst(onRuns, 'mysql')} / ${fromFirst(onRuns, 'redis')} ` +
        `(load average ${machineLoad().loadAverage}; MySQL and Redis: NaN unless one server process each, BENCH_MYSQLD_PID / BENCH_REDIS_PID)`,
    );
    if (receiver.received() < N * rounds)
      throw new Error(`expected ${N * rounds} order.created events, received ${receiver.received()}`);

    console.log(
      `\nsettlement benchmark (${N} queued reservations, one consumer process with ${workers} consumers; baselines: ${baselineN} reservations on ${workers} connections)`,
    );
    const row = (r: { seconds: number; perSecond: number }) => ({
      seconds: +r.seconds.toFixed(2),
      perSecond: Math.round(r.perSecond),
    });
    console.table({
      'bare hot-row UPDATE autocommit': row(bare),
      "seeds' per-message transaction": row(perMessage),
      [`floor: the same rows, events off${rounds > 1 ? ' (median)' : ''}`]: row(floorNoEvents),
      [`floor: the same rows, events on${rounds > 1 ? ' (median)' : ''}`]: row(floorWithEvents),
      [`settle, events off (from the first order${rounds > 1 ? ', median' : ''})`]: row(off),
      [`settle, events on (from the first order${rounds > 1 ? ', median' : ''})`]: row(on),
    });
    console.log(
      `from process start: settled in ${off.fromStart.toFixed(2)} s (events off), ${on.fromStart.toFixed(2)} s (events on); ` +
        `all ${N} order.created events delivered ${on.drainedAfter.toFixed(2)} s after the start`,
    );
    const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const cpu = (runs: Run[]) => medianOf(runs.map((r) => r.cpuMsPerKOrders));
    const cpuUntilSettled = (runs: Run[]) => medianOf(runs.map((r) => r.cpuUntilSettledMsPerKOrders));
    console.log(
      `consumer process CPU per 1,000 orders (median): ${cpu(offRuns).toFixed(0)} ms with events off, ${cpu(onRuns).toFixed(0)} ms with events on ` +
        `(start-up included); until the last order was in: ${cpuUntilSettled(offRuns).toFixed(0)} ms off, ${cpuUntilSettled(onRuns).toFixed(0)} ms on ` +
        `(the rest is the events' delivery); the bench's receiver answered the POSTs in this process`,
    );
    const medianFigures = (runs: Run[]) => ({
      consumerCpuMsPerKOrders: medianOf(runs.map((r) => r.fromFirst.consumer)),
      mysqlCpuMsPerKOrders: medianOf(runs.map((r) => r.fromFirst.mysql)),
      redisCpuMsPerKOrders: medianOf(runs.map((r) => r.fromFirst.redis)),
    });
    const serverCpu = (runs: Run[]) =>
      runs.map((r) => r.serverCpuMsPerKOrders).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
    console.log(
      `MySQL server CPU per 1,000 orders (median, until the last order): ${serverCpu(offRuns).toFixed(0)} ms with events off, ` +
        `${serverCpu(onRuns).toFixed(0)} ms with events on (NaN: no single mariadbd/mysqld here; set BENCH_MYSQLD_PID)`,
    );
    console.log(
      `ratio settle/per-message = ${(off.perSecond / perMessage.perSecond).toFixed(1)}×, settle/bare-update = ${(off.perSecond / bare.perSecond).toFixed(1)}×, ` +
        `events cost ${((1 - on.perSecond / off.perSecond) * 100).toFixed(0)} % `,
    );
    // The same cost in CPU per order (consumer + MySQL, from the first order to the last, medians):
    // on a shared machine it moves far less than orders/s do.
    const cpuPerOrder = (runs: Run[]) => medianOf(runs.map((r) => r.fromFirst.consumer + r.fromFirst.mysql));
    console.log(
      `events cost in CPU per order (consumer + MySQL, from the first order, medians): ` +
        `${cpuPerOrder(offRuns).toFixed(0)} → ${cpuPerOrder(onRuns).toFixed(0)} ms per 1,000 orders, ` +
        `${((cpuPerOrder(onRuns) / cpuPerOrder(offRuns) - 1) * 100).toFixed(0)} % more`,
    );
    const fixed = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    console.log(
      `settle / floor with events on = ${ratioToFloor.toFixed(2)} (goal ≥ ${FLOOR_GOAL}) — ${ratioToFloor >= FLOOR_GOAL ? 'met' : 'NOT met'}` +
        `${rounds > 1 ? ` (median; rounds ${fixed(onRatios)})` : ''}; events off: ${ratioToFloorEventsOff.toFixed(2)}` +
        `${rounds > 1 ? ` (rounds ${fixed(offRatios)})` : ''}`,
    );
    const floorCpu = (runs: FloorRun[], figure: 'clientCpuMsPerKOrders' | 'mysqlMsPerKOrders') =>
      medianOf(runs.map((r) => r[figure])).toFixed(0);
    console.log(
      `floor CPU per 1,000 orders (median), its client process / MySQL: events on ${floorCpu(floorOnRuns, 'clientCpuMsPerKOrders')} / ${floorCpu(floorOnRuns, 'mysqlMsPerKOrders')} ms, ` +
        `events off ${floorCpu(floorOffRuns, 'clientCpuMsPerKOrders')} / ${floorCpu(floorOffRuns, 'mysqlMsPerKOrders')} ms ` +
        `(settlement, from the first order: consumer / MySQL above)`,
    );
    await adminCall(originUrl, 'PATCH', `/admin/activities/${activities.at(-1)![0]}`, { state: 'stopped' });
    return {
      floor: floorWithEvents.perSecond,
      ratioToFloor,
      ratiosToFloor: onRatios,
      floorEventsOff: floorNoEvents.perSecond,
      ratioToFloorEventsOff,
      floorCpuMsPerKOrders: {
        eventsOn: {
          client: medianOf(floorOnRuns.map((r) => r.clientCpuMsPerKOrders)),
          mysql: medianOf(floorOnRuns.map((r) => r.mysqlMsPerKOrders)),
        },
        eventsOff: {
          client: medianOf(floorOffRuns.map((r) => r.clientCpuMsPerKOrders)),
          mysql: medianOf(floorOffRuns.map((r) => r.mysqlMsPerKOrders)),
        },
      },
      ordersPerSec: off.perSecond,
      eventsOnPerSec: on.perSecond,
      eventsCostPct: (1 - on.perSecond / off.perSecond) * 100,
      consumerCpuMsPerKOrders: cpu(offRuns),
      consumerCpuMsPerKOrdersEventsOn: cpu(onRuns),
      serverCpuMsPerKOrders: serverCpu(offRuns),
      serverCpuMsPerKOrdersEventsOn: serverCpu(onRuns),
      fromFirstOrder: {
        eventsOff: medianFigures(offRuns),
        eventsOn: medianFigures(onRuns),
        eventsCpuCostPct: (cpuPerOrder(onRuns) / cpuPerOrder(offRuns) - 1) * 100,
      },
      perMessagePerSec: perMessage.perSecond,
      bareUpdatePerSec: bare.perSecond,
    };
  } finally {
    await stopChild(http);
    receiver.close();
    await floorDb.end();
    await pool.end();
    await redis.quit();
    await store.close();
    await database.drop(activities);
  }
}

runAsScript(import.meta.url, benchSettle);
