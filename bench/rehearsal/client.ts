/**
 * The rehearsal's HTTP/1.1 client: a pool of keep-alive connections to one origin (undici's `Pool`,
 * the engine under Node's own fetch without fetch's web streams and objects). The load is many tiny
 * JSON requests, and on the machine under test every µs the generator spends is taken from the
 * stack: undici costs about a third less CPU per request than node:http's Agent did
 * (docs/rehearsal.md). Never throws: a network failure or timeout is status 0 with code `network_error`.
 */
import { Pool } from 'undici';

export interface Answer {
  status: number;
  /** The contract's error code, or `status` of a success body (queued, ordered, ...), or `ok`. */
  code: string;
  body: any;
  /** Retry-After in ms (0 when absent). */
  retryAfterMs: number;
  ms: number;
}

/** A request not answered (headers and body) within this long counts as a network failure. */
const REQUEST_TIMEOUT_MS = 15_000;

export class HttpClient {
  private readonly pool: Pool;

  constructor(baseUrl: string, maxSockets: number) {
    this.pool = new Pool(new URL(baseUrl).origin, {
      connections: maxSockets,
      pipelining: 1,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
  }

  async request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const started = performance.now();
    let status = 0;
    let text = '';
    let retryAfter: string | undefined;
    try {
      const res = await this.pool.request({
        method: method as 'GET' | 'POST',
        path,
        headers,
        body,
      });
      text = await res.body.text();
      status = res.statusCode;
      const header = res.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
    } catch {
      status = 0;
    }
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    const code = status === 0 ? 'network_error' : (json?.error ?? json?.status ?? (status < 400 ? 'ok' : 'unknown'));
    return {
      status,
      code: String(code),
      body: json,
      retryAfterMs: retryAfter ? Number(retryAfter) * 1000 || 0 : 0,
      ms: performance.now() - started,
    };
  }

  close(): void {
    void this.pool.destroy();
  }
}
