/**
 * The origin's pushes to the edge (docs/design.md §9, §10), received by a small recording "edge" that checks
 * the §9 signature: a created activity is pushed at once, and the list of live activities is pushed
 * at start and every EDGE_LIVE_LIST_PUSH_MS, without sales that ended long ago.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyEdgeRequest } from '../../../contract/signing.js';
import { createAsyncServer } from '../../helpers/async-server.js';
import { uniqueId } from '../../helpers/ids.js';
import { TEST_SECRETS, startTestOrigin, waitFor, type TestOrigin } from '../../helpers/origin.js';

interface Received {
  path: string;
  body: any;
  signed: boolean;
}

let edge: Server;
let origin: TestOrigin;
const received: Received[] = [];

beforeAll(async () => {
  edge = createAsyncServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const failure = await verifyEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, {
      method: req.method ?? '',
      pathWithQuery: req.url ?? '',
      body,
      timestamp: req.headers['x-edge-timestamp'] as string | undefined,
      signature: req.headers['x-edge-signature'] as string | undefined,
    });
    received.push({ path: req.url ?? '', body: JSON.parse(body), signed: failure === null });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
  origin = await startTestOrigin({
    ORIGIN_ROLE: 'http',
    EDGE_URL: `http://127.0.0.1:${(edge.address() as AddressInfo).port}`,
    EDGE_LIVE_LIST_PUSH_MS: '200',
    EDGE_LIVE_AFTER_END_SECONDS: '3600',
  });
});

afterAll(async () => {
  await origin?.stop();
  await new Promise((resolve) => edge?.close(resolve));
});

const lists = () => received.filter((r) => r.path === '/internal/activities');

it('pushes a created activity at once, and the live list (signed) at start and periodically', async () => {
  await waitFor(
    async () => lists().length,
    (n) => n >= 1,
  ); // at start, before any activity
  const live = uniqueId();
  const endedLongAgo = uniqueId();
  const create = (activityId: string, startsAt: number, endsAt: number) =>
    origin.admin('POST', '/admin/activities', {
      activityId,
      skuId: uniqueId(),
      title: `push ${activityId}`,
      stock: 1,
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
    });
  expect((await create(live, Date.now(), Date.now() + 3_600_000)).status).toBe(201);
  // Creating a sale that has already ended is refused: create it live, then age it in MySQL.
  expect((await create(endedLongAgo, Date.now(), Date.now() + 3_600_000)).status).toBe(201);
  await origin.db.pool.query('UPDATE seckill_activity SET starts_at = ?, ends_at = ? WHERE id = ?', [
    new Date(Date.now() - 3 * 86_400_000),
    new Date(Date.now() - 2 * 86_400_000),
    endedLongAgo,
  ]);
  expect(received.some((r) => r.path === `/internal/activities/${live}` && r.signed)).toBe(true);

  // A push already on its way when the sale was aged may still list it: the third push after the
  // update is built after it, however slow the machine.
  const seenAt = lists().length;
  const list = await waitFor(
    async () => lists().slice(seenAt)[2],
    (r) => r !== undefined,
  );
  expect(list!.body.activityIds).toContain(live);
  expect(list!.signed).toBe(true);
  expect(list!.body.activityIds).not.toContain(endedLongAgo);
  expect(lists().every((r) => r.signed)).toBe(true);
});
