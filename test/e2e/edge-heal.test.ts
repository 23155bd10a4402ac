/**
 * Edge healing end to end: the origin's pushes are best effort, so the edge must heal a missed one by
 * itself. The real origin reaches the real edge (Miniflare) through a switchable proxy; with the
 * proxy down, an admin pause (or reopen) is never pushed; once it is back up, the edge shows the
 * change within 5 s — no new push needed, because each ActivityDO refetches from the origin.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningEdge } from '../helpers/edge.js';
import { createAsyncServer } from '../helpers/async-server.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import type { TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

let origin: TestOrigin;
let edge: RunningEdge;
let proxy: Server;
/** Where the proxy forwards the origin's pushes; null = the edge is "away" (connection refused-like 502). */
let target: string | null = null;
let pushesRefused = 0;

beforeAll(async () => {
  proxy = createAsyncServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (!target) {
      pushesRefused++;
      req.socket.destroy(); // the edge is unreachable
      return;
    }
    const answer = await fetch(target + req.url, {
      method: req.method,
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k.startsWith('x-edge-') || k === 'content-type'),
      ) as Record<string, string>,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  ({ edge, origin } = await startTestStack({ originEnv: { EDGE_URL: proxyUrl } }));
  target = edge.url;
});

afterAll(async () => {
  await edge?.stop();
  await origin?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
});

const bearer = async (userId: string) =>
  `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;

let user = 8_900_000;
async function ticketStatus(activityId: string): Promise<number> {
  const res = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: await bearer(String(++user)) },
  });
  await res.arrayBuffer();
  return res.status;
}

/** Polls tickets until `want`; how long it took, or Infinity after `ms`. */
async function msUntil(activityId: string, want: number, ms = 8_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if ((await ticketStatus(activityId)) === want) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 200));
  }
  return Number.POSITIVE_INFINITY;
}

it('a pause pushed while the edge was away is in force within 5 s of its return, and so is the reopening', async () => {
  const { activityId } = await origin.sale({ stock: 5 });
  expect(await ticketStatus(activityId)).toBe(200);

  target = null; // the edge goes away
  const refusedBefore = pushesRefused;
  expect((await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' })).status).toBe(200);
  expect(pushesRefused).toBeGreaterThan(refusedBefore); // the push was tried and lost
  target = edge.url; // back, with no new push coming
  expect(await msUntil(activityId, 503)).toBeLessThanOrEqual(5_000);

  target = null;
  expect((await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'open' })).status).toBe(200);
  target = edge.url;
  expect(await msUntil(activityId, 200)).toBeLessThanOrEqual(5_000);
});
