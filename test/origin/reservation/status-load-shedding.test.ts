/**
 * The origin's status routes (the edge's polls and snapshot fetches) share one in-flight cap,
 * STATUS_MAX_IN_FLIGHT, like reserve's: beyond it they answer 503 `busy` + Retry-After at once,
 * before touching MySQL or Redis. Reads are held in flight by a table lock in the test's own
 * database; the processlist says when they are waiting, so nothing depends on timing.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueId } from '../../helpers/ids.js';
import { startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
let locker: mysql.Connection;
let watcher: mysql.Connection;

beforeAll(async () => {
  t = await startTestOrigin({ ORIGIN_ROLE: 'http', STATUS_MAX_IN_FLIGHT: '2' });
  locker = await mysql.createConnection({ uri: t.db.url });
  watcher = await mysql.createConnection({ uri: t.db.url });
});
afterAll(async () => {
  await locker?.end();
  await watcher?.end();
  await t?.stop();
});

/** The three status routes, each for an activity id the origin has not seen (so it reads MySQL). */
const statusRoutes = () => {
  const [a, b, c] = [uniqueId(), uniqueId(), uniqueId()];
  return [
    `/internal/activities/${a}`,
    `/internal/activities/${b}/reservation?userId=7`,
    `/internal/reservations/${c}-0123456789abcdef0123456789abcdef?userId=7`,
  ];
};

async function waitingOnLock(): Promise<number> {
  const [rows] = (await watcher.query(
    `SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = ? AND state LIKE 'Waiting for table%'`,
    [t.db.name],
  )) as any;
  return Number(rows[0].n);
}

it.each([0, 1, 2])(
  'with two status reads in flight, a third (route %i of 3) is shed with 503 busy + Retry-After',
  async (shedIndex) => {
    const routes = statusRoutes();
    const shedPath = routes[shedIndex]!;
    const held = routes.filter((_, i) => i !== shedIndex);

    await locker.query('LOCK TABLES seckill_activity WRITE');
    let unlocked = false;
    try {
      const inFlight = held.map((path) => t.internal('GET', path));
      await waitFor(waitingOnLock, (n) => n === 2, 20_000);

      const shed = await t.internal('GET', shedPath);
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(((await shed.json()) as any).error).toBe('busy');

      await locker.query('UNLOCK TABLES');
      unlocked = true;
      // The held reads complete normally (unknown activities → 404), and the cap admits again.
      for (const res of await Promise.all(inFlight)) expect(res.status).toBe(404);
      expect((await t.internal('GET', shedPath)).status).toBe(404);
    } finally {
      if (!unlocked) await locker.query('UNLOCK TABLES');
    }
  },
);
