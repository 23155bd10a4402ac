/**
 * The edge's one error handler and its JSON 404: ContractError → `{error, message, traceId}` with
 * its status (and Retry-After); anything else is logged and becomes a 500 `internal` without internals.
 */
import type { ErrorHandler, NotFoundHandler } from 'hono';
import { ContractError, errorBody, randomHex, type ErrorCode } from '../contract/index.js';
import type { EdgeEnv } from './context.js';

// At the edge a ContractError is an answer, never a fault to trace: no stack is recorded.
ContractError.recordStack = false;

/**
 * Error bodies up to the trace id, built once per (code, message): a doomed click's refusal is a
 * string concatenation, not an object build and JSON.stringify. Messages are fixed
 * texts, so the map stays small; it is bounded anyway.
 */
const prebuilt = new Map<string, string>();
const MAX_PREBUILT = 256;

function bodyFor(code: ErrorCode, message: string, traceId: string): string {
  const key = `${code}\n${message}`;
  let head = prebuilt.get(key);
  if (head === undefined) {
    const whole = JSON.stringify(errorBody(code, message, ''));
    head = whole.slice(0, whole.length - 2); // everything before the empty trace id's closing `"}`
    if (prebuilt.size < MAX_PREBUILT) prebuilt.set(key, head);
  }
  return `${head}${traceId}"}`; // trace ids are hex: nothing to escape
}

export const onError: ErrorHandler<EdgeEnv> = (err, c) => {
  const traceId = c.get('traceId') ?? randomHex(16);
  if (err instanceof ContractError) {
    c.set('outcome', err.code);
    if (err.retryAfter !== undefined) c.header('Retry-After', String(err.retryAfter));
    c.header('Cache-Control', 'no-store');
    c.header('Content-Type', 'application/json');
    return c.body(bodyFor(err.code, err.message, traceId), err.status);
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
  c.header('Content-Type', 'application/json');
  return c.body(bodyFor('not_found', 'no such route', c.get('traceId') ?? randomHex(16)), 404);
};
