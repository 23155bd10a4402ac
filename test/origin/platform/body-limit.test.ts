/**
 * Body limits (docs/design.md §10): every origin endpoint with a body answers 413 `payload_too_large` from
 * the declared Content-Length, or by counting a chunked body while reading it, before any
 * signature, token or HMAC check — and an oversized body is never held in memory.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

let t: TestOrigin;
const LIMIT = 16 * 1024;

beforeAll(async () => {
  t = await startTestOrigin({ ORIGIN_ROLE: 'http', MAX_BODY_BYTES: String(LIMIT) });
});
afterAll(() => t?.stop());

/** Every origin route that takes a body (no signature, no token: the size check must come first). */
const BODY_ROUTES: [string, string][] = [
  ['POST', '/payments/callback'],
  ['POST', '/internal/reserve'],
  ['POST', '/admin/activities'],
  ['PATCH', '/admin/activities/1'],
  ['POST', '/admin/activities/1/warmup'],
  ['POST', '/admin/activities/1/recover'],
  ['POST', '/admin/activities/1/cleanup'],
  ['POST', '/admin/dead-letters/1-0123456789abcdef0123456789abcdef/retry'],
  ['POST', '/admin/dead-letters/1-0123456789abcdef0123456789abcdef/give-up'],
];

interface Answer {
  status: number;
  body: any;
  /** Body bytes the client had written when the answer came. */
  sent: number;
}

/**
 * Sends `total` bytes as a chunked body (no Content-Length), streamed from one reused 64 KiB buffer
 * so the client allocates nothing; stops writing as soon as the answer arrives.
 */
function sendChunked(method: string, path: string, total: number): Promise<Answer> {
  const url = new URL(t.url + path);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request({ method, host: url.hostname, port: url.port, path: url.pathname }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString() || 'null'), sent });
      });
    });
    // The server may close the socket after answering while we still write: that is expected.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const pump = () => {
      while (!answered && sent < total) {
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** Declares `declared` bytes in Content-Length but sends none of them: the header alone must decide. */
function sendDeclared(method: string, path: string, declared: number): Promise<Answer> {
  const url = new URL(t.url + path);
  return new Promise((resolve, reject) => {
    const req = request(
      { method, host: url.hostname, port: url.port, path: url.pathname, headers: { 'content-length': declared } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString()), sent: 0 });
        });
      },
    );
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('413 payload_too_large before any signature or token check', () => {
  it.each(BODY_ROUTES)('%s %s: a declared Content-Length over the limit, with no body sent', async (method, path) => {
    const res = await sendDeclared(method, path, 100 * 1024 * 1024);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
    expect(res.body.message).toBe(`body larger than ${LIMIT} bytes`);
  });

  it.each(BODY_ROUTES)('%s %s: a chunked body one byte over the limit', async (method, path) => {
    const res = await sendChunked(method, path, LIMIT + 1);
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  it('a chunked body of exactly the limit is read and goes on to the signature check', async () => {
    const res = await sendChunked('POST', '/payments/callback', LIMIT);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthenticated');
  });
});

it('a 64 MiB chunked stream to the payment webhook is refused while reading, without growing memory', async () => {
  const total = 64 * 1024 * 1024;
  const before = process.memoryUsage();
  const res = await sendChunked('POST', '/payments/callback', total);
  const after = process.memoryUsage();
  const grewMiB = (after.rss - before.rss) / 2 ** 20;
  const buffersMiB = (after.arrayBuffers - before.arrayBuffers) / 2 ** 20;
  console.log(
    `64 MiB chunked to /payments/callback: ${res.status}, client had written ${(res.sent / 2 ** 20).toFixed(1)} MiB, ` +
      `rss ${(before.rss / 2 ** 20).toFixed(0)} → ${(after.rss / 2 ** 20).toFixed(0)} MiB (${grewMiB.toFixed(1)}), ` +
      `arrayBuffers +${buffersMiB.toFixed(1)} MiB`,
  );
  expect(res.status).toBe(413);
  expect(res.body.error).toBe('payload_too_large');
  // Reading the whole body (the old behaviour) costs ≥ 64 MiB plus its string; counting costs ~nothing.
  expect(grewMiB).toBeLessThan(24);
  expect(buffersMiB).toBeLessThan(8);
});
