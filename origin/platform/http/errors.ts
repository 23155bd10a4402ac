/**
 * The origin's one error translator: ContractError → its status and `{error, message, traceId}`;
 * validation errors → 400; a Redis or MySQL outage → 503 `unavailable` (fail closed); anything else
 * → a logged 500 without internals.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError } from 'zod';
import { ContractError, errorBody } from '../../../contract/errors.js';
import type { Logger } from '../logger.js';
import type { OriginEnv } from './types.js';
import { AuthFailure } from './auth-failures.js';

const OUTAGE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_LOCK_WAIT_TIMEOUT',
  'POOL_CLOSED',
]);

export function isOutage(err: unknown): boolean {
  const e = err as { code?: string; name?: string; message?: string };
  return (
    OUTAGE_CODES.has(e?.code ?? '') ||
    e?.name === 'MaxRetriesPerRequestError' ||
    /Command timed out|Connection is closed|Stream isn't writeable|enableOfflineQueue/.test(e?.message ?? '')
  );
}

export function toContractError(err: unknown): ContractError | null {
  if (err instanceof ContractError) return err;
  if (err instanceof ZodError) {
    const first = err.issues[0];
    const where = first?.path.length ? `${first.path.join('.')}: ` : '';
    return new ContractError('bad_request', `${where}${first?.message ?? 'invalid request'}`);
  }
  if (isOutage(err))
    return new ContractError('unavailable', 'a backing service is unavailable, try again shortly', { retryAfter: 1 });
  return null;
}

/** What an error answers: status, `{error, message, traceId}` and headers; logs a 5xx (warn) or an unknown error. */
export function errorAnswer(
  err: Error,
  traceId: string,
  log: () => Logger | undefined,
): { status: ContentfulStatusCode; body: ReturnType<typeof errorBody>; headers: Record<string, string> } {
  const known = toContractError(err);
  if (!known) {
    log()?.error({ err, traceId }, 'unhandled error');
    return { status: 500, body: errorBody('internal', 'internal error', traceId), headers: {} };
  }
  if (known.status >= 500)
    log()?.warn({ code: known.code, err: (err.cause as Error)?.message ?? err.message }, 'request failed');
  const headers: Record<string, string> = {};
  if (known.retryAfter !== undefined) headers['Retry-After'] = String(known.retryAfter);
  // The rest of a late body may still come (or never): the connection is not reused.
  if (known.code === 'request_timeout') headers['Connection'] = 'close';
  return { status: known.status, body: errorBody(known.code, known.message, traceId), headers };
}

export function onError(err: Error, c: Context<OriginEnv>) {
  if (err instanceof AuthFailure) c.get('authFailures')?.record(err, { path: c.req.path, log: c.get('log') });
  const answer = errorAnswer(err, c.get('traceId') ?? '', () => c.get('log'));
  for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
  return c.json(answer.body, answer.status);
}
