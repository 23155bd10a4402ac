/**
 * The origin bounded like the edge: with real sockets against a started origin, a
 * body that does not arrive is answered 408 `request_timeout` within BODY_TIMEOUT_MS, headers that do
 * not arrive get Node's 408 within HEADERS_TIMEOUT_MS, connections beyond MAX_CONNECTIONS are closed
 * unanswered, and requests that arrive in time are answered as before.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../../helpers/origin.js';

const BODY_TIMEOUT_MS = 300;
const HEADERS_TIMEOUT_MS = 500;
const TIMEOUT_CHECK_MS = 100;
/**
 * The whole-request timeout, far beyond the two above (and far below Node's defaults, 60 s / 300 s):
 * a connection closed before it was closed by the body or headers timeout, however busy the machine.
 */
const REQUEST_TIMEOUT_MS = 30_000;

let t: TestOrigin;

beforeAll(async () => {
  t = await startTestOrigin({
    ORIGIN_ROLE: 'http',
    BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    TIMEOUT_CHECK_MS: String(TIMEOUT_CHECK_MS),
  });
});
afterAll(() => t?.stop());

interface Conversation {
  socket: Socket;
  /** Everything the server sent until it closed the connection. */
  closed: Promise<{ text: string; closedAfterMs: number; firstByteAfterMs: number | null }>;
}

function open(url: string): Promise<Conversation> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('error', reject);
    socket.once('connect', () => {
      const started = Date.now();
      let text = '';
      let firstByteAfterMs: number | null = null;
      const closed = new Promise<{ text: string; closedAfterMs: number; firstByteAfterMs: number | null }>((done) => {
        socket.on('data', (d: Buffer) => {
          firstByteAfterMs ??= Date.now() - started;
          text += d.toString();
        });
        socket.on('error', () => undefined); // a reset after the answer is the server closing
        socket.on('close', () => done({ text, closedAfterMs: Date.now() - started, firstByteAfterMs }));
      });
      resolve({ socket, closed });
    });
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const jsonOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

/** Reads one complete answer (headers and a Content-Length body) from a kept-alive socket. */
function nextAnswer(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString();
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end >= 0 && text.length - end - 4 >= length) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
}

const host = () => new URL(t.url).host;

describe('request deadlines', () => {
  it('a body declared as 1,000 bytes with 1 sent: 408 request_timeout within BODY_TIMEOUT_MS, connection closed', async () => {
    const c = await open(t.url);
    c.socket.write(
      `POST /payments/callback HTTP/1.1\r\nHost: ${host()}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{`,
    );
    const answer = await c.closed;
    expect(statusOf(answer.text)).toBe(408);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    const body = jsonOf(answer.text);
    expect(body).toEqual({
      error: 'request_timeout',
      message: `the request body did not arrive within ${BODY_TIMEOUT_MS} ms`,
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(answer.firstByteAfterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 5);
    expect(answer.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('a chunked body that stops after its first chunk: the same 408', async () => {
    const c = await open(t.url);
    c.socket.write(
      `POST /payments/callback HTTP/1.1\r\nHost: ${host()}\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n`,
    );
    const answer = await c.closed;
    expect(statusOf(answer.text)).toBe(408);
    expect(jsonOf(answer.text).error).toBe('request_timeout');
    expect(answer.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('headers that never end: 408 and closed within HEADERS_TIMEOUT_MS', async () => {
    const c = await open(t.url);
    c.socket.write(`POST /payments/callback HTTP/1.1\r\nHost: ${host()}\r\nx-slow: 1\r\n`);
    const answer = await c.closed;
    expect(statusOf(answer.text)).toBe(408);
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 5);
    expect(answer.closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('a body sent in two parts within the deadline is read whole (401 from the signature check, not 408)', async () => {
    const c = await open(t.url);
    const body = '{"orderNo":"1","paymentId":"p1","amountCents":1}';
    c.socket.write(
      `POST /payments/callback HTTP/1.1\r\nHost: ${host()}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, BODY_TIMEOUT_MS / 3));
    c.socket.write(body.slice(10));
    const answer = await nextAnswer(c.socket);
    expect(statusOf(answer)).toBe(401);
    expect(jsonOf(answer).error).toBe('unauthenticated');
    c.socket.destroy();
  });

  it('a kept-alive connection idle longer than HEADERS_TIMEOUT_MS still serves its next request', async () => {
    const c = await open(t.url);
    const get = `GET /healthz HTTP/1.1\r\nHost: ${host()}\r\n\r\n`;
    c.socket.write(get);
    expect(statusOf(await nextAnswer(c.socket))).toBe(200);
    await new Promise((r) => setTimeout(r, HEADERS_TIMEOUT_MS + 3 * TIMEOUT_CHECK_MS));
    c.socket.write(get);
    expect(statusOf(await nextAnswer(c.socket))).toBe(200);
    c.socket.destroy();
  });
});

describe('connection cap', () => {
  const CAP = 3;
  let capped: TestOrigin;
  beforeAll(async () => {
    capped = await startTestOrigin({ ORIGIN_ROLE: 'http', MAX_CONNECTIONS: String(CAP) }, t.db);
  });
  afterAll(() => capped?.stop());

  it('connections beyond MAX_CONNECTIONS are closed unanswered; one freed, the next is served', async () => {
    const held = await Promise.all(Array.from({ length: CAP }, () => open(capped.url)));
    const get = `GET /healthz HTTP/1.1\r\nHost: ${new URL(capped.url).host}\r\n\r\n`;
    // Each held connection is being served (the server accepted it).
    for (const c of held) {
      c.socket.write(get);
      expect(statusOf(await nextAnswer(c.socket))).toBe(200);
    }
    const refused = await open(capped.url);
    refused.socket.write(get);
    const answer = await refused.closed;
    expect(answer.text).toBe('');

    held[0]!.socket.destroy();
    await held[0]!.closed;
    // The server notices the close on its next turn; ask until it has.
    let served = '';
    for (let i = 0; i < 20 && served === ''; i++) {
      const next = await open(capped.url);
      next.socket.write(get);
      served = await Promise.race([nextAnswer(next.socket), next.closed.then((a) => a.text)]);
      next.socket.destroy();
    }
    expect(statusOf(served)).toBe(200);
    for (const c of held.slice(1)) c.socket.destroy();
  });
});
