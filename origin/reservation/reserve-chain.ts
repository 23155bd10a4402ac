/**
 * `POST /internal/reserve` as one chain, whichever way the request came in: the edge's §9 signature
 * in constant time (401; the caller's trace adopted only after it) → the body against the contract's
 * schema (400, reserve-body.ts) → RESERVE_MAX_IN_FLIGHT (503 `busy`, reserve-gate.ts) → the decision
 * and its answer (reserve-answer.ts). Every answer from the signature check on, refusals included,
 * is counted in seckill_order_answers_total (orders/order-answers.ts), and every error goes through
 * the origin's one translator (platform/http/errors.ts).
 *
 * Its two ways in are adapters that only read the request and write the answer: the listener in
 * front of the Hono app for the edge's usual request (reserve-fast-path.ts), and the Hono route for
 * the rest (internal-routes.ts), which has already applied the body's size cap and deadline.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isShadowForwarded } from '../../contract/shadow.js';
import { newTraceId, traceIdOf } from '../../contract/trace.js';
import type { OriginConfig } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { AuthFailureLog } from '../platform/http/auth-failures.js';
import { edgeSecretKey, verifyEdgeSignatureSync } from '../platform/http/edge-signature.js';
import { errorAnswer } from '../platform/http/errors.js';
import { edgeSignatureFailure, MAX_TRACEPARENT_LOGGED, type InFlightGate } from '../platform/http/middleware.js';
import { parseJson } from '../platform/http/validate.js';
import { countOrderAnswer } from '../orders/order-answers.js';
import { answerReserve, type ReserveAnswerDeps } from './reserve-answer.js';
import { reserveRequestOf } from './reserve-body.js';

/** What the chain uses: reserve's answer, the gate, where a refused signature is told, and its settings. */
export interface ReserveChainDeps extends ReserveAnswerDeps {
  /** RESERVE_MAX_IN_FLIGHT: one per origin, so both ways in count together (reserve-gate.ts). */
  reserveGate: InFlightGate;
  /** Where a refused edge signature is counted and logged, as for every other route. */
  authFailures: AuthFailureLog;
  config: ReserveAnswerDeps['config'] & Pick<OriginConfig, 'EDGE_ORIGIN_SECRET' | 'RESERVE_ANSWER_DEADLINE_MS'>;
}

/** One reserve request as the chain reads it: the whole body and the headers it checks. */
export interface ReserveCall {
  /** The path, for the auth-failure log line. */
  path: string;
  /** Path and query exactly as sent: what the edge signed. */
  pathWithQuery: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  traceparent: string | undefined;
  /** The trace id the request already has (the Hono app's); else one is made when first needed. */
  traceId?: string;
}

/** What to send: status, JSON body and, for some refusals, headers (Retry-After, Connection). */
export interface ReserveCallAnswer {
  status: ContentfulStatusCode;
  body: unknown;
  headers?: Record<string, string>;
}

export function reserveChain(deps: ReserveChainDeps): (call: ReserveCall) => Promise<ReserveCallAnswer> {
  const key = edgeSecretKey(deps.config.EDGE_ORIGIN_SECRET);
  const gate = deps.reserveGate;
  const counting = { metrics: deps.metrics, deadlineMs: deps.config.RESERVE_ANSWER_DEADLINE_MS };

  return async function reserveCall(call) {
    const startedMs = performance.now();
    // A trace id made only when needed: once the signature holds, the edge's traceparent is adopted.
    let traceId = call.traceId;
    const trace = () => (traceId ??= newTraceId());
    const { traceparent } = call;
    // The request's logger, made only when a line is written; as traceContext/adoptCallerTrace make it.
    let adopted = false;
    let logger: Logger | undefined;
    const log = () =>
      (logger ??= deps.log.child(
        adopted || traceparent === undefined
          ? { traceId: trace() }
          : { traceId: trace(), callerTraceparent: traceparent.slice(0, MAX_TRACEPARENT_LOGGED) },
      ));
    // Shadow traffic (contract/shadow.ts) is counted apart, so a rehearsal never moves the real success rate.
    let shadow = false;
    const refuse = (err: unknown): ReserveCallAnswer => {
      const answer = errorAnswer(err as Error, trace(), log);
      countOrderAnswer(counting, { status: answer.status, error: err, startedMs, shadow });
      return answer;
    };

    const failure = verifyEdgeSignatureSync(key, {
      method: 'POST',
      pathWithQuery: call.pathWithQuery,
      body: call.body,
      timestamp: call.timestamp,
      signature: call.signature,
    });
    if (failure) {
      const refusal = edgeSignatureFailure(failure);
      deps.authFailures.record(refusal, { path: call.path, log: log() });
      return refuse(refusal);
    }
    const callerTrace = traceIdOf(traceparent);
    if (callerTrace !== null) {
      traceId = callerTrace;
      adopted = true;
    }

    let request;
    try {
      request = reserveRequestOf(parseJson(call.body));
      shadow = isShadowForwarded(request.claims);
      gate.enter();
    } catch (err) {
      return refuse(err);
    }
    try {
      const answer = await answerReserve(deps, request, trace(), log);
      countOrderAnswer(counting, { status: answer.status, answer: answer.answer, startedMs, shadow });
      return answer;
    } catch (err) {
      return refuse(err);
    } finally {
      gate.leave();
    }
  };
}
