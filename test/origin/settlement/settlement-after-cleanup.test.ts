/**
 * A sale's settlers end with the sale: after its cleanup they stop (the registry no longer lists it),
 * so when its Streams expire after CLEANUP_RETENTION_SECONDS no origin logs a failing round in a
 * loop. A Stream lost while the sale is still listed (a Redis failover before recovery) is said once.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pay } from '../../helpers/lifecycle.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

interface LogLine {
  msg: string;
  activityId?: string;
  level: number;
}

const lines: LogLine[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as LogLine);
    done();
  },
});
const linesAbout = (activityId: string, msg?: string) =>
  lines.filter((l) => l.activityId === activityId && (msg === undefined || l.msg === msg));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ CLEANUP_RETENTION_SECONDS: '1', SETTLE_RETRY_BACKOFF_MS: '50' }, undefined, {
    log: pino({ level: 'info' }, sink),
  });
});
afterAll(async () => {
  await t?.stop();
});

const streamKeys = (activityId: string, skuId: string) => t.redis.keys(`sk:{${activityId}:${skuId}}:events*`);

describe('settlers after a cleanup', () => {
  it('stop when the sale leaves the registry; its expired Streams leave no repeating log line', async () => {
    const { activityId, skuId } = await t.sale({ stock: 2 });
    const reserved = await t.internal('POST', '/internal/reserve', {
      activityId,
      userId: '501',
      quantity: 1,
      requestId: `after-cleanup-${activityId}`,
    });
    expect(reserved.status).toBe(202);
    const { reservationId } = (await reserved.json()) as { reservationId: string };
    const orderNo = await waitFor(
      async () => {
        const [rows] = await t.db.pool.query('SELECT order_no FROM seckill_order WHERE reservation_id = ?', [
          reservationId,
        ]);
        return (rows as { order_no: string }[])[0]?.order_no;
      },
      (n) => n !== undefined,
    );
    expect((await pay(t, orderNo!)).status).toBe(200);
    expect((await t.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' })).status).toBe(200);
    expect((await t.admin('POST', `/admin/activities/${activityId}/cleanup`)).status).toBe(200);

    await waitFor(
      async () => linesAbout(activityId, 'sale left the registry: its settlers stopped').length,
      (n) => n === 1,
    );
    // The retention (1 s) runs out: the sale's Streams are gone.
    await waitFor(
      () => streamKeys(activityId, skuId),
      (keys) => keys.length === 0,
    );
    const before = linesAbout(activityId).length;
    // Twenty discovery periods and forty retry back-offs of a settler, had one been left running.
    await sleep(2_000);
    expect(linesAbout(activityId, 'settlement round failed')).toEqual([]);
    expect(linesAbout(activityId, 'sale stream gone: settler idle')).toEqual([]);
    expect(linesAbout(activityId).slice(before)).toEqual([]);
  });

  it('a Stream lost while the sale is still listed is said once, not once a round', async () => {
    const { activityId, skuId } = await t.sale({ stock: 2 });
    await waitFor(
      async () => linesAbout(activityId, 'settling activity').length,
      (n) => n === 1,
    );
    const keys = await streamKeys(activityId, skuId);
    expect(keys.length).toBeGreaterThan(0);
    await t.redis.del(...keys);
    await waitFor(
      async () => linesAbout(activityId, 'sale stream gone: settler idle').length,
      (n) => n >= 1,
    );
    await sleep(2_000); // forty back-offs of 50 ms
    // One line per consumer (SETTLE_WORKERS), however many rounds failed.
    expect(linesAbout(activityId, 'sale stream gone: settler idle').length).toBe(t.config.SETTLE_WORKERS);
    expect(linesAbout(activityId, 'settlement round failed')).toEqual([]);
  });
});
