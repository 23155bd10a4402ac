/**
 * The edge under a directly started Miniflare (test/helpers/edge.ts) against the Node stand-in
 * origin: a real socket end to end, including the origin going away mid-run.
 */
import { connect } from 'node:net';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivitySnapshot } from '../../contract/index.js';
import { openSnapshot, pushSnapshot, signedPut, type SnapshotOverrides } from '../../support/edge-calls.js';
import { startEdge, TEST_ORIGIN_TIMEOUT_MS, type RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { startStandInOrigin, type StandInOrigin } from '../../support/stand-in-origin.js';

let origin: StandInOrigin;
let edge: RunningEdge;
const activityId = String(900_000_000 + Math.floor(Math.random() * 1_000_000));

const snapshot = (over: SnapshotOverrides = {}): ActivitySnapshot =>
  openSnapshot(activityId, {
    skuId: '5',
    title: 'Miniflare sale',
    admissionRatePerSec: 1000,
    admissionShards: 2,
    ...over,
  });

const bearer = async (userId: string) =>
  `Bearer ${await sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256')}`;

async function buy(userId: string): Promise<Response> {
  const t = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: await bearer(userId) },
  });
  expect(t.status).toBe(200);
  const { purchaseUrl } = (await t.json()) as { purchaseUrl: string };
  return fetch(`${edge.url}${purchaseUrl}`, {
    method: 'POST',
    headers: {
      authorization: await bearer(userId),
      'idempotency-key': `buy-${userId}`,
      'content-type': 'application/json',
    },
    body: '{"quantity":1}',
  });
}

beforeAll(async () => {
  origin = await startStandInOrigin({ secret: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET });
  origin.setActivity(activityId, { snapshot: snapshot() });
  edge = await startEdge({ originUrl: origin.url });
  // The origin's list of live activities (docs/design.md §10): ids not on it are 404 without an origin call.
  const body = JSON.stringify({ activityIds: [activityId] });
  const listed = await signedPut(edge.url, TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, '/internal/activities', body);
  expect(listed.status).toBe(200);
});

afterAll(async () => {
  await edge?.stop();
  await origin?.stop();
});

describe('edge under Miniflare (startEdge)', () => {
  it('serves the sale page and the activity fetched from the origin', async () => {
    const page = await fetch(`${edge.url}/a/${activityId}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="buy"');
    const res = await fetch(`${edge.url}/api/activities/${activityId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ activityId, state: 'open' });
    expect(origin.calls(activityId).activity).toBe(1);
  });

  it('a purchase is queued through the origin; the origin sees a valid signature', async () => {
    const res = await buy('4242');
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: 'queued' });
    expect(origin.calls(activityId).reserve).toBe(1);
    expect(origin.badSignatures()).toBe(0);
  });

  it('a signed push from the origin switches the activity (sold out → 409 without an origin call)', async () => {
    const push = (s: ActivitySnapshot) => pushSnapshot(edge.url, TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, s);
    expect((await push(snapshot({ soldOut: true }))).status).toBe(200);
    const t = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
      method: 'POST',
      headers: { authorization: await bearer('4343') },
    });
    expect(t.status).toBe(409);
    expect(origin.calls(activityId).reserve).toBe(1);
    // Reopen for the next test.
    expect((await push(snapshot())).status).toBe(200);
  });

  it('a Content-Length larger than what is sent is 400 after BODY_READ_TIMEOUT_MS, never a hang', async () => {
    const { hostname, port } = new URL(edge.url);
    const before = origin.calls(activityId);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      let text = '';
      socket.setTimeout(15_000, () => {
        socket.destroy();
        reject(new Error('the edge held the request open'));
      });
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('"traceId"')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      // Declares 500 bytes, sends 10, then waits without closing.
      socket.write(
        `POST /api/activities/${activityId}/purchase?t=x HTTP/1.1\r\nHost: ${hostname}\r\n` +
          `Content-Type: application/json\r\nIdempotency-Key: k\r\nContent-Length: 500\r\n\r\n{"quantity`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"error":"bad_request"');
    expect(origin.calls(activityId).reserve).toBe(before.reserve);
  });

  it('a Content-Length beside Transfer-Encoding: chunked is not trusted: the chunked body is counted, 413', async () => {
    // workerd hands the Worker both headers and the whole chunked body; trusting the small declared
    // length would read all of it. The edge counts instead: 413 after the first KiB, while the rest
    // (never finished here) is still to come.
    const { hostname, port } = new URL(edge.url);
    const before = origin.calls(activityId);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      let text = '';
      socket.setTimeout(15_000, () => {
        socket.destroy();
        reject(new Error('the edge held the request open'));
      });
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('"traceId"')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      const chunk = `${(1000).toString(16)}\r\n${'x'.repeat(1000)}\r\n`;
      socket.write(
        `POST /api/activities/${activityId}/purchase?t=x HTTP/1.1\r\nHost: ${hostname}\r\n` +
          `Content-Type: application/json\r\nIdempotency-Key: k\r\nContent-Length: 14\r\n` +
          `Transfer-Encoding: chunked\r\n\r\n${chunk.repeat(3)}`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"error":"payload_too_large"');
    expect(origin.calls(activityId).reserve).toBe(before.reserve);
  });

  it('a declared Content-Length over the limit is 413 at once, the body never read', async () => {
    const res = await fetch(`${edge.url}/api/activities/${activityId}/purchase?t=x`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
      body: JSON.stringify({ quantity: 1, pad: 'x'.repeat(10_000) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe('payload_too_large');
  });

  it('with the origin stopped, a purchase is 503 unavailable without waiting for the origin timeout', async () => {
    await origin.stop();
    const started = Date.now();
    const res = await buy('4444');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(TEST_ORIGIN_TIMEOUT_MS); // a refused connect does not wait for the timeout
  });
});
