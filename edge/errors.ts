/**
 * The edge's one error handler and its JSON 404: ContractError → `{error, message, traceId}` with
 * its status (and Retry-After); anything else is logged and becomes a 500 `internal` without internals.
 */
import type { ErrorHandler, NotFoundHandler } from 'hono';
import { ContractError, errorBody, randomHex } from '../contract/index.js';
import type { EdgeEnv } from './context.js';

export const onError: ErrorHandler<EdgeEnv> = (err, c) => {
  const traceId = c.get('traceId') ?? randomHex(16);
  if (err instanceof ContractError) {
    c.set('outcome', err.code);
    if (err.retryAfter !== undefined) c.header('Retry-After', String(err.retryAfter));
    c.header('Cache-Control', 'no-store');
    return c.json(errorBody(err.code, err.message, traceId), err.status);
  }
  c.set('outcome', 'internal');
  console.error(
    JSON.stringify({
      level: 'error',
      traceId,
      path: c.req.path,
      error: err instanceof Error ? err.message : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    }),
  );
  return c.json(errorBody('internal', 'internal error', traceId), 500);
};

export const notFound: NotFoundHandler<EdgeEnv> = (c) => {
  c.set('outcome', 'not_found');
  return c.json(errorBody('not_found', 'no such route', c.get('traceId') ?? randomHex(16)), 404);
};
