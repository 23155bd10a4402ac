/**
 * `POST /internal/reserve` has two ways in — the fast path (origin/reservation/reserve-fast-path.ts)
 * for the edge's usual call, and the Hono route for the rest (a chunked body, a query string) — and
 * both run the one reserve chain (origin/reservation/reserve-chain.ts): the same answers, and one
 * RESERVE_MAX_IN_FLIGHT gate counts both.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEdgeRequest } from '../../../contract/signing.js';
import { startTestOrigin, TEST_SECRETS, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
let activityId: string;

beforeAll(async () => {
  t = await startTestOrigin();
  ({ activityId } = await t.sale({ stock: 10, maxPerUser: 1 }));
});
afterAll(() => t?.stop());

const TRACE = '0af7651916cd43dd8448eb211c80319c';

/** A signed reserve call; `chunked` sends the body without Content-Length (the Hono route's case). */
async function call(path: string, body: string, opts: { chunked?: boolean; sign?: boolean } = {}) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    traceparent: `00-${TRACE}-b7ad6b7169203331-01`,
    ...(opts.sign === false
      ? {}
      : await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, { method: 'POST', pathWithQuery: path, body })),
  };
  if (!opts.chunked) headers['content-length'] = String(Buffer.byteLength(body));
  const url = new URL(t.url + path);
  return new Promise<{ status: number; headers: Record<string, unknown>; body: any }>((resolve, reject) => {
    const req = request({ method: 'POST', host: url.hostname, port: url.port, path, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(parts).toString()) }),
      );
    });
    req.on('error', reject);
    if (opts.chunked) req.write(body.slice(0, 5));
    req.end(opts.chunked ? body.slice(5) : body);
  });
}

const reserveBody = (userId: string) => JSON.stringify({ activityId, userId, quantity: 1, requestId: `r-${userId}` });

describe('the fast path and the Hono route answer alike', () => {
  it.each([
    ['fast path (Content-Length)', '/internal/reserve', false],
    ['Hono route (chunked)', '/internal/reserve', true],
    ['Hono route (query string)', '/internal/reserve?via=test', false],
  ] as const)('%s: 202 queued, then 200 for the repeat, as JSON', async (_, path, chunked) => {
    const userId = String(1000 + Math.floor(Math.random() * 1e9));
    const first = await call(path, reserveBody(userId), { chunked });
    expect(first.status).toBe(202);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.body).toEqual({
      status: 'queued',
      reservationId: expect.stringMatching(new RegExp(`^${activityId}-`)),
    });
    const again = await call(path, reserveBody(userId), { chunked });
    expect(again.status).toBe(200);
    expect(again.body.reservationId).toBe(first.body.reservationId);
  });

  it.each([
    ['fast path (Content-Length)', false],
    ['Hono route (chunked)', true],
  ] as const)('%s: unsigned → 401 with a fresh trace id; bad JSON → 400 under the caller trace', async (_, chunked) => {
    const unsigned = await call('/internal/reserve', reserveBody('77'), { chunked, sign: false });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body).toEqual({
      error: 'unauthenticated',
      message: 'missing edge signature',
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(unsigned.body.traceId).not.toBe(TRACE);
    const bad = await call('/internal/reserve', '{"activityId":', { chunked });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'bad_request', message: 'body must be JSON', traceId: TRACE });
  });
});
