/**
 * The cheaper way into `POST /internal/reserve` (reserve-chain.ts): the edge's usual request read
 * from Node's own request and answered on its response, in front of the Hono app, so the sale's
 * hot route does without the web Request/Response adapter, Hono's routing and two child loggers per
 * request. It only does what the Hono app does before the route — the body's size cap (413) and
 * deadline (408, connection closed) — and hands the body and headers to the same chain as the Hono
 * route. Anything unusual — another method or path, a query string, a chunked body, a declared
 * length over the limit — goes on to the Hono app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContractError } from '../../contract/errors.js';
import type { OriginConfig } from '../platform/config.js';
import { errorAnswer } from '../platform/http/errors.js';
import { newTraceId } from '../../contract/trace.js';
import { reserveChain, type ReserveChainDeps } from './reserve-chain.js';
import type { RequestListener } from '../platform/http/listen.js';

export type { RequestListener };

const PATH = '/internal/reserve';
/** As Hono reads a body (@hono/node-server: TextDecoder), so both ways in sign-check the same text. */
const decoder = new TextDecoder();

/** What the fast path uses: the chain's parts and the Hono app's body limits. */
export interface ReserveFastPathDeps extends ReserveChainDeps {
  config: ReserveChainDeps['config'] & Pick<OriginConfig, 'MAX_BODY_BYTES' | 'BODY_TIMEOUT_MS'>;
}

/** Wraps the Hono app's listener: `POST /internal/reserve` is answered here, the rest goes to `next`. */
export function reserveFastPath(deps: ReserveFastPathDeps, next: RequestListener): RequestListener {
  const chain = reserveChain(deps);
  const { MAX_BODY_BYTES: maxBytes, BODY_TIMEOUT_MS: timeoutMs } = deps.config;

  async function reserveRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, timeoutMs).catch((err: unknown) => err as Error);
    if (body instanceof Error) {
      // The caller went away: nobody to answer. A late body: 408, as the Hono app answers it.
      if (!(body instanceof ContractError)) return void res.destroy();
      const answer = errorAnswer(body, newTraceId(), () => undefined);
      return send(res, answer.status, answer.body, answer.headers);
    }
    const answer = await chain({
      path: PATH,
      pathWithQuery: PATH,
      body,
      timestamp: header(req, 'x-edge-timestamp'),
      signature: header(req, 'x-edge-signature'),
      traceparent: header(req, 'traceparent'),
    });
    send(res, answer.status, answer.body, answer.headers);
  }

  return function reserveFastPath(req, res) {
    const declared = req.headers['content-length'];
    if (
      req.method !== 'POST' ||
      req.url !== PATH ||
      declared === undefined ||
      req.headers['transfer-encoding'] !== undefined ||
      !(Number(declared) <= maxBytes)
    )
      return next(req, res);
    reserveRoute(req, res).catch((err: unknown) => {
      deps.log.error({ err }, 'reserve fast path failed');
      if (!res.headersSent) send(res, 500, { error: 'internal', message: 'internal error', traceId: '' });
      else res.destroy();
    });
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The whole body as text; 408 `request_timeout` when it has not all arrived within `timeoutMs`. */
function readBody(req: IncomingMessage, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => reject(new ContractError('request_timeout', `the request body did not arrive within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      clearTimeout(timer);
      resolve(decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    });
    // The caller went away: nobody to answer.
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  const head = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  // No spread of an empty object on every answer: only refusals carry headers of their own.
  res.writeHead(status, headers === undefined ? head : { ...head, ...headers });
  res.end(text);
}
