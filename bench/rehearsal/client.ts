/**
 * A small HTTP/1.1 client over keep-alive sockets (node:http): the rehearsal's load is many tiny
 * JSON requests, where node:http costs less per request than fetch. Never throws: a network
 * failure is status 0 with code `network_error`.
 */
import http from 'node:http';

export interface Answer {
  status: number;
  /** The contract's error code, or `status` of a success body (queued, ordered, ...), or `ok`. */
  code: string;
  body: any;
  /** Retry-After in ms (0 when absent). */
  retryAfterMs: number;
  ms: number;
}

const REQUEST_TIMEOUT_MS = 15_000;

export class HttpClient {
  private readonly agent: http.Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(baseUrl: string, maxSockets: number) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, scheduling: 'lifo' });
  }

  request(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve) => {
      const done = (status: number, text: string, retryAfter: string | undefined) => {
        let json: any = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        const code =
          status === 0 ? 'network_error' : (json?.error ?? json?.status ?? (status < 400 ? 'ok' : 'unknown'));
        resolve({
          status,
          code: String(code),
          body: json,
          retryAfterMs: retryAfter ? Number(retryAfter) * 1000 || 0 : 0,
          ms: performance.now() - started,
        });
      };
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: REQUEST_TIMEOUT_MS,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => done(res.statusCode ?? 0, text, res.headers['retry-after'] as string | undefined));
          res.on('error', () => done(0, '', undefined));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => done(0, '', undefined));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
