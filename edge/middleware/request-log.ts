/**
 * Trace context and the request log. The edge mints its own trace id for every request (a client's
 * `traceparent` is attacker-controlled: it is logged beside ours as `clientTraceparent`, never used
 * as the id), exposes it to handlers, and logs one JSON line per request with trace id, user,
 * activity and outcome — except for doomed refusals (sold out, too early, ended, paused, rate
 * limited, busy, unknown activity) and cheap attack refusals (bad ticket, no valid JWT, oversized
 * body, a malformed request from a caller not yet authenticated): at a sale's peak they are nearly
 * all of the traffic, and a flood of them must not flood the logs, so they are only counted, and one
 * in `sample` is logged with the counts since the last such line.
 */
import type { MiddlewareHandler } from 'hono';
import { isShadowToken } from '../../contract/index.js';
import type { EdgeEnv } from '../context.js';
import { countAnswer, flushFiguresIfDue } from '../figures.js';

/** Outcomes that are the sale working as designed, counted instead of logged one by one. */
export const DOOMED_OUTCOMES: ReadonlySet<string> = new Set([
  'sold_out',
  'too_early',
  'ended',
  'paused',
  'rate_limited',
  'busy',
  // A join refused because the shard's waiting line is full: a flood of accounts is counted, not logged.
  'line_full',
  'not_found',
  'bad_ticket',
  'unauthenticated',
  'payload_too_large',
  // A waiting-room answer (place in line, poll): at a sale's peak as many as the refusals.
  'waiting',
]);

/**
 * Whether a request's outcome is counted and sampled rather than logged: a doomed outcome, or a
 * malformed request (400) from nobody known — a bad activity id or Idempotency-Key is refused
 * before the JWT is read, and anyone can send a flood of them. A 400 to an authenticated user is
 * still logged: it names whose client is broken.
 */
export function isSampledOutcome(outcome: string, userId: string | undefined): boolean {
  return DOOMED_OUTCOMES.has(outcome) || (outcome === 'bad_request' && userId === undefined);
}

const MAX_TRACEPARENT_LOGGED = 128;

/** This isolate's count of doomed refusals since the last sampled line, by outcome. */
const refusals = new Map<string, number>();
let refusalsSeen = 0;

export function newTraceId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}

export function requestLog(
  options: {
    log?: (line: string) => void;
    sample?: (env: Env) => number;
    /** Count every answer in the edge's figures (edge/figures.ts), flushed this often. */
    figuresFlushMs?: (env: Env) => number;
  } = {},
): MiddlewareHandler<EdgeEnv> {
  const log = options.log ?? ((line: string) => console.log(line));
  const sample = options.sample ?? (() => 1);
  return async function requestLog(c, next) {
    const started = Date.now();
    const traceId = newTraceId();
    c.set('traceId', traceId);
    // Set before the answer is built, so a response built by the handler or onError carries it from
    // the start; after it, Hono would copy the whole Response to add one header. A raw
    // Response a handler returns (the sale page's assets) gets it afterwards.
    c.header('x-trace-id', traceId);
    await next();
    if (!c.res.headers.has('x-trace-id')) c.header('x-trace-id', traceId);
    const outcome = c.get('outcome') ?? (c.res.status < 400 ? 'ok' : String(c.res.status));
    if (options.figuresFlushMs) {
      countAnswer(c.req.method, c.req.path, c.res.status, outcome, isShadowToken(c.get('claims')));
      flushFiguresIfDue(c.env, c.executionCtx, options.figuresFlushMs(c.env));
    }
    let counts: Record<string, number> | undefined;
    if (isSampledOutcome(outcome, c.get('userId'))) {
      refusals.set(outcome, (refusals.get(outcome) ?? 0) + 1);
      if (++refusalsSeen % sample(c.env) !== 0) return;
      counts = Object.fromEntries(refusals);
      refusals.clear();
    }
    const clientTraceparent = c.req.header('traceparent')?.slice(0, MAX_TRACEPARENT_LOGGED);
    log(
      JSON.stringify({
        at: new Date(started).toISOString(),
        traceId,
        clientTraceparent,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        outcome,
        userId: c.get('userId'),
        activityId: c.get('activityId'),
        ms: Date.now() - started,
        refusalsSinceLastSample: counts,
      }),
    );
  };
}
