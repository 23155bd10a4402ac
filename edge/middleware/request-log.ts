/**
 * Trace context and the per-request log line: accepts an incoming W3C `traceparent` (or starts a
 * trace), exposes the trace id to handlers, and logs one JSON object per request with trace id,
 * user, activity and outcome.
 */
import type { MiddlewareHandler } from 'hono';
import { traceIdFrom } from '../../contract/index.js';
import type { EdgeEnv } from '../context.js';

export function requestLog(options: { log?: (line: string) => void } = {}): MiddlewareHandler<EdgeEnv> {
  const log = options.log ?? ((line: string) => console.log(line));
  return async function requestLog(c, next) {
    const started = Date.now();
    const traceId = traceIdFrom(c.req.header('traceparent'));
    c.set('traceId', traceId);
    await next();
    c.header('x-trace-id', traceId);
    log(
      JSON.stringify({
        at: new Date(started).toISOString(),
        traceId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        outcome: c.get('outcome') ?? (c.res.status < 400 ? 'ok' : String(c.res.status)),
        userId: c.get('userId'),
        activityId: c.get('activityId'),
        ms: Date.now() - started,
      }),
    );
  };
}
