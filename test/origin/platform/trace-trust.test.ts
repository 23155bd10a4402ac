/**
 * A caller's `traceparent` names the trace only once the caller is authenticated:
 * an unsigned payment webhook (or edge call, or admin call) gets a fresh trace id and its
 * traceparent is only a log field (`callerTraceparent`); a signed one keeps its trace.
 */
import { Writable } from 'node:stream';
import { Hono } from 'hono';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signEdgeRequest } from '../../../contract/signing.js';
import { AuthFailureLog } from '../../../origin/platform/http/auth-failures.js';
import { onError } from '../../../origin/platform/http/errors.js';
import { createMetrics } from '../../../origin/platform/metrics.js';
import { adoptCallerTrace, traceContext } from '../../../origin/platform/http/middleware.js';
import type { OriginEnv } from '../../../origin/platform/http/types.js';
import { paymentHeaders } from '../../helpers/lifecycle.js';
import { startTestOrigin, TEST_SECRETS, type TestOrigin } from '../../helpers/origin.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${CALLER_TRACE}-00f067aa0ba902b7-01`;

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ORIGIN_ROLE: 'http' });
});
afterAll(() => t?.stop());

const traceIdOf = async (res: Response) => ((await res.json()) as { traceId: string }).traceId;

describe('payment webhook', () => {
  it("an unauthenticated caller's traceparent is not the trace id: a fresh one is", async () => {
    const body = JSON.stringify({ orderNo: 'NOSUCHORDER1', paymentId: 'p1', status: 'paid' });
    for (const headers of [
      { traceparent: TRACEPARENT }, // no signature at all
      { ...paymentHeaders(body), 'x-payment-signature': `v1=${'0'.repeat(64)}`, traceparent: TRACEPARENT },
    ]) {
      const res = await fetch(`${t.url}/payments/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      expect(res.status).toBe(401);
      const traceId = await traceIdOf(res);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(traceId).not.toBe(CALLER_TRACE);
    }
  });

  it('a signed callback keeps its trace', async () => {
    const body = JSON.stringify({ orderNo: 'NOSUCHORDER1', paymentId: 'p1', status: 'paid' });
    const res = await fetch(`${t.url}/payments/callback`, {
      method: 'POST',
      headers: { ...paymentHeaders(body), traceparent: TRACEPARENT },
      body,
    });
    expect(res.status).toBe(404); // signature accepted; no such order
    expect(await traceIdOf(res)).toBe(CALLER_TRACE);
  });
});

describe('edge and admin calls', () => {
  it('an edge call keeps its trace only when its signature is valid; an admin call only with a valid token', async () => {
    const path = '/internal/activities/1';
    const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, { method: 'GET', pathWithQuery: path });
    const good = await fetch(t.url + path, { headers: { ...signed, traceparent: TRACEPARENT } });
    expect(good.status).toBe(404);
    expect(await traceIdOf(good)).toBe(CALLER_TRACE);
    const forged = await fetch(t.url + path, {
      headers: { ...signed, 'x-edge-signature': `v1=${'0'.repeat(64)}`, traceparent: TRACEPARENT },
    });
    expect(forged.status).toBe(401);
    expect(await traceIdOf(forged)).not.toBe(CALLER_TRACE);

    const admin = (token: string) =>
      fetch(`${t.url}/admin/activities/1`, { headers: { authorization: `Bearer ${token}`, traceparent: TRACEPARENT } });
    const known = await admin(TEST_SECRETS.ADMIN_TOKEN);
    expect(known.status).toBe(404);
    expect(await traceIdOf(known)).toBe(CALLER_TRACE);
    const unknown = await admin('not-the-admin-token');
    expect(unknown.status).toBe(401);
    expect(await traceIdOf(unknown)).not.toBe(CALLER_TRACE);
  });
});

describe('the log before and after authentication', () => {
  it("before: a fresh traceId with the caller's traceparent as callerTraceparent; after: the caller's trace", async () => {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = new Hono<OriginEnv>();
    const log = pino({ level: 'info' }, sink);
    app.use('*', traceContext({ log, authFailures: new AuthFailureLog({ metrics: createMetrics(), intervalMs: 0 }) }));
    app.onError(onError);
    app.get('/', (c) => {
      c.get('log').info('before');
      adoptCallerTrace(c); // what a passed signature or token check does
      c.get('log').info('after');
      return c.json({ traceId: c.get('traceId') });
    });
    const res = await app.request('/', { headers: { traceparent: TRACEPARENT } });
    expect(await traceIdOf(res)).toBe(CALLER_TRACE);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ msg: 'before', callerTraceparent: TRACEPARENT });
    expect(lines[0].traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(lines[0].traceId).not.toBe(CALLER_TRACE);
    expect(lines[1]).toMatchObject({ msg: 'after', traceId: CALLER_TRACE });
    expect(lines[1].callerTraceparent).toBeUndefined();

    // A malformed traceparent is never adopted, and is logged cut to 128 characters.
    lines.length = 0;
    const junk = `00-${'z'.repeat(300)}`;
    const other = await app.request('/', { headers: { traceparent: junk } });
    expect(await traceIdOf(other)).toBe(lines[0].traceId);
    expect(lines[0].callerTraceparent).toBe(junk.slice(0, 128));
  });
});
