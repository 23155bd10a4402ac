/** Origin middleware: trace context, body reading with a size cap, edge signatures, admin token. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { traceIdFrom } from '../../contract/trace.js';
import type { Logger } from '../logger.js';
import { verifyEdgeSignatureSync } from './edge-signature.js';
import type { OriginEnv } from './types.js';

/** Sets `traceId` (from `traceparent`) and a child logger carrying it. */
export function traceContext(opts: { log: Logger }): MiddlewareHandler<OriginEnv> {
  return async function traceContext(c, next) {
    const traceId = traceIdFrom(c.req.header('traceparent'));
    c.set('traceId', traceId);
    c.set('log', opts.log.child({ traceId }));
    await next();
  };
}

/** Reads the body once as text (capped), so signature checks and JSON parsing see the same bytes. */
export function rawBody(opts: { maxBytes: number }): MiddlewareHandler<OriginEnv> {
  return async function rawBody(c, next) {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > opts.maxBytes) throw new ContractError('bad_request', `body larger than ${opts.maxBytes} bytes`);
    const text = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await c.req.text();
    if (Buffer.byteLength(text) > opts.maxBytes)
      throw new ContractError('bad_request', `body larger than ${opts.maxBytes} bytes`);
    c.set('rawBody', text);
    await next();
  };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ContractError('bad_request', 'body must be JSON');
  }
}

/** Edge → origin calls must carry a fresh, valid §9 signature. */
export function edgeSignature(opts: { secret: string }): MiddlewareHandler<OriginEnv> {
  return async function edgeSignature(c, next) {
    const url = new URL(c.req.url);
    const failure = verifyEdgeSignatureSync(opts.secret, {
      method: c.req.method,
      pathWithQuery: url.pathname + url.search,
      body: c.get('rawBody'),
      timestamp: c.req.header('x-edge-timestamp'),
      signature: c.req.header('x-edge-signature'),
    });
    if (failure) {
      const why = {
        missing: 'missing edge signature',
        stale: 'stale edge signature',
        bad_signature: 'bad edge signature',
      }[failure];
      throw new ContractError('unauthenticated', why);
    }
    await next();
  };
}

/** `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time. */
export function adminToken(opts: { token: string }): MiddlewareHandler<OriginEnv> {
  const expected = createHash('sha256').update(opts.token).digest();
  return async function adminToken(c, next) {
    const header = c.req.header('authorization') ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    const ok = given.length > 0 && timingSafeEqual(createHash('sha256').update(given).digest(), expected);
    if (!ok) throw new ContractError('unauthenticated', 'admin token required');
    await next();
  };
}

/**
 * Sheds load: at most `max` requests in progress through this middleware; the rest get 503 `busy`
 * with Retry-After at once, before any Redis or MySQL work.
 */
export function inFlightLimit(opts: { max: number; onShed?: () => void }): MiddlewareHandler<OriginEnv> {
  let inFlight = 0;
  return async function inFlightLimit(c, next) {
    if (inFlight >= opts.max) {
      opts.onShed?.();
      throw new ContractError('busy', 'too many purchases in progress, try again shortly', { retryAfter: 1 });
    }
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
    }
  };
}
