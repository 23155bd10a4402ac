/**
 * Signatures accept lowercase hex only (docs/design.md §9), at the shared verifier (contract/signing.ts)
 * and at the origin's two verifiers (edge signature, payment webhook); the public payment webhook
 * answers a failure inside the origin with a generic message, never with internals.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hmacHex, signEdgeRequest, verifyHmacHex } from '../../../contract/signing.js';
import { paymentHeaders } from '../../helpers/lifecycle.js';
import { startTestOrigin, TEST_SECRETS, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
beforeAll(async () => {
  t = await startTestOrigin({ ORIGIN_ROLE: 'http' });
});
afterAll(() => t?.stop());

const upperHex = (sig: string) => sig.replace(/[a-f]/g, (ch) => ch.toUpperCase());

it('the shared verifier accepts the lowercase hex HMAC and refuses the same bytes in uppercase hex', async () => {
  const sig = await hmacHex('k'.repeat(32), 'message');
  expect(/[a-f]/.test(sig)).toBe(true);
  expect(await verifyHmacHex('k'.repeat(32), 'message', sig)).toBe(true);
  expect(await verifyHmacHex('k'.repeat(32), 'message', upperHex(sig))).toBe(false);
});

it('the origin refuses an edge signature written in uppercase hex', async () => {
  const path = '/internal/activities/1';
  const signed = await signEdgeRequest(TEST_SECRETS.EDGE_ORIGIN_SECRET, { method: 'GET', pathWithQuery: path });
  const lower = await fetch(t.url + path, { headers: signed });
  expect(lower.status).toBe(404); // signature accepted; the activity does not exist
  await lower.arrayBuffer();
  const upper = await fetch(t.url + path, {
    headers: { ...signed, 'x-edge-signature': `v1=${upperHex(signed['x-edge-signature']!.slice(3))}` },
  });
  expect(upper.status).toBe(401);
  expect(((await upper.json()) as any).error).toBe('unauthenticated');
});

it('the payment webhook refuses a signature written in uppercase hex', async () => {
  const body = JSON.stringify({ orderNo: 'NOSUCHORDER1', paymentId: 'p1', status: 'paid' });
  const headers = paymentHeaders(body);
  const lower = await fetch(`${t.url}/payments/callback`, { method: 'POST', headers, body });
  expect(lower.status).toBe(404); // signature accepted; no such order
  await lower.arrayBuffer();
  const sig = headers['x-payment-signature'].slice(3);
  const upper = await fetch(`${t.url}/payments/callback`, {
    method: 'POST',
    headers: { ...headers, 'x-payment-signature': `v1=${upperHex(sig)}` },
    body,
  });
  expect(upper.status).toBe(401);
  expect(((await upper.json()) as any).error).toBe('unauthenticated');
});

it('a failure inside the origin reaches the payment provider as a generic 500, without SQL or table names', async () => {
  await t.db.pool.query('RENAME TABLE seckill_order TO seckill_order_away');
  try {
    const body = JSON.stringify({ orderNo: 'ANYORDER1', paymentId: 'p1', status: 'paid' });
    const ts = String(Date.now());
    const sig = createHmac('sha256', TEST_SECRETS.PAYMENT_WEBHOOK_SECRET).update(`${ts}\n${body}`).digest('hex');
    const res = await fetch(`${t.url}/payments/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payment-timestamp': ts, 'x-payment-signature': `v1=${sig}` },
      body,
    });
    const text = await res.text();
    expect(res.status).toBe(500);
    const answer = JSON.parse(text);
    expect(Object.keys(answer).sort()).toEqual(['error', 'message', 'traceId']);
    expect(answer).toMatchObject({ error: 'internal', message: 'internal error' });
    expect(text).not.toMatch(/seckill_|SELECT|UPDATE|ER_|doesn't exist/i);
  } finally {
    await t.db.pool.query('RENAME TABLE seckill_order_away TO seckill_order');
  }
});
