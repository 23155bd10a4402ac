/**
 * `POST /internal/reserve` outside Hono: the sale's hot route, answered from Node's own request and
 * response. In the reserve profile Hono's middleware chain, the web Request/Response
 * adapter and two child loggers per request cost about a fifth of the origin's CPU per reserve.
 *
 * Every check of the general stack stays, in the same order and with the same answers: body size
 * (413), body deadline (408, connection closed), the §9 signature in constant time (401), the
 * caller's trace adopted only after it, RESERVE_MAX_IN_FLIGHT (503 busy, the route's own gate), the
 * contract's schema (400); the answer is the route's (reserve-answer.ts), errors go through the one
 * translator (errors.ts), and each answer is counted in seckill_order_answers_total as the route counts it. Anything unusual — another method or path, a query string, a chunked body,
 * a declared length over the limit — goes on to the Hono app, which answers it as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContractError } from '../../contract/errors.js';
import { newTraceId, traceIdOf } from '../../contract/trace.js';
import type { OriginConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import { edgeSecretKey, verifyEdgeSignatureSync } from '../platform/http/edge-signature.js';
import { errorAnswer } from '../platform/http/errors.js';
import { edgeSignatureFailure, MAX_TRACEPARENT_LOGGED, type InFlightGate } from '../platform/http/middleware.js';
import type { AuthFailureLog } from '../platform/http/auth-failures.js';
import { countOrderAnswer } from '../orders/order-answers.js';
import { isShadowForwarded } from '../../contract/shadow.js';
import { answerReserve, type ReserveAnswerDeps } from './reserve-answer.js';
import { reserveRequestOf } from './reserve-body.js';
import { parseJson } from '../platform/http/validate.js';
import type { RequestListener } from '../platform/http/listen.js';

export type { RequestListener };

const PATH = '/internal/reserve';
/** As Hono reads a body (@hono/node-server: TextDecoder), so both paths sign-check the same text. */
const decoder = new TextDecoder();

/** What the fast path uses: reserve's answer, the gate it shares with the route, the general stack's limits. */
export interface ReserveFastPathDeps extends ReserveAnswerDeps {
  /** RESERVE_MAX_IN_FLIGHT, shared with the Hono route (reserve-gate.ts). */
  reserveGate: InFlightGate;
  /** Where a refused edge signature is counted and logged, as the route's translator does. */
  authFailures: AuthFailureLog;
  config: ReserveAnswerDeps['config'] &
    Pick<OriginConfig, 'EDGE_ORIGIN_SECRET' | 'MAX_BODY_BYTES' | 'BODY_TIMEOUT_MS' | 'RESERVE_ANSWER_DEADLINE_MS'>;
}

/** Wraps the Hono app's listener: `POST /internal/reserve` is answered here, the rest goes to `next`. */
export function reserveFastPath(deps: ReserveFastPathDeps, next: RequestListener): RequestListener {
  const key = edgeSecretKey(deps.config.EDGE_ORIGIN_SECRET);
  const gate = deps.reserveGate;
  const { MAX_BODY_BYTES: maxBytes, BODY_TIMEOUT_MS: timeoutMs } = deps.config;
  const counting = { metrics: deps.metrics, deadlineMs: deps.config.RESERVE_ANSWER_DEADLINE_MS };

  async function reserveRoute(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A fresh trace id only when needed: the edge's traceparent is usually adopted (it showed in the profile).
    let traceId: string | undefined;
    const trace = () => (traceId ??= newTraceId());
    const traceparent = header(req, 'traceparent');
    // The request's logger, made only when a line is written; as traceContext/adoptCallerTrace make it.
    let adopted = false;
    let logger: Logger | undefined;
    const log = () =>
      (logger ??= deps.log.child(
        adopted || traceparent === undefined
          ? { traceId: trace() }
          : { traceId: trace(), callerTraceparent: traceparent.slice(0, MAX_TRACEPARENT_LOGGED) },
      ));
    const fail = (err: unknown) => {
      const answer = errorAnswer(err as Error, trace(), log);
      send(res, answer.status, answer.body, answer.headers);
    };

    const body = await readBody(req, timeoutMs).catch((err: unknown) => err as Error);
    if (body instanceof Error) return body instanceof ContractError ? fail(body) : void res.destroy();
    // From here every answer is counted, as the route's countOrderAnswers counts (order-answers.ts).
    const startedMs = performance.now();
    // Shadow traffic (contract/shadow.ts) is counted apart, so a rehearsal never moves the real success rate.
    let shadow = false;
    const refuse = (err: unknown) => {
      const answer = errorAnswer(err as Error, trace(), log);
      countOrderAnswer(counting, { status: answer.status, error: err, startedMs, shadow });
      send(res, answer.status, answer.body, answer.headers);
    };

    const failure = verifyEdgeSignatureSync(key, {
      method: 'POST',
      pathWithQuery: PATH,
      body,
      timestamp: header(req, 'x-edge-timestamp'),
      signature: header(req, 'x-edge-signature'),
    });
    if (failure) {
      const refusal = edgeSignatureFailure(failure);
      deps.authFailures.record(refusal, { path: PATH, log: log() });
      return refuse(refusal);
    }
    const callerTrace = traceIdOf(traceparent);
    if (callerTrace !== null) {
      traceId = callerTrace;
      adopted = true;
    }

    let request;
    try {
      request = reserveRequestOf(parseJson(body));
      shadow = isShadowForwarded(request.claims);
      gate.enter();
    } catch (err) {
      return refuse(err);
    }
    try {
      const answer = await answerReserve(deps, request, trace(), log);
      countOrderAnswer(counting, { status: answer.status, answer: answer.answer, startedMs, shadow });
      send(res, answer.status, answer.body);
    } catch (err) {
      refuse(err);
    } finally {
      gate.leave();
    }
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
