/** Origin middleware: trace context, body reading with a size cap, edge signatures, admin token. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ContractError } from '../../../contract/errors.js';
import { newTraceId, traceIdOf } from '../../../contract/trace.js';
import type { AdminOperator } from '../secret-rules.js';
import type { Logger } from '../logger.js';
import { AuthFailure, type AuthFailureLog, type AuthRoute } from './auth-failures.js';
import { edgeSecretKey, verifyEdgeSignatureSync } from './edge-signature.js';
import type { OriginEnv } from './types.js';

/** Longest caller `traceparent` kept as a log field (a well-formed one is 55 characters). */
export const MAX_TRACEPARENT_LOGGED = 128;

/**
 * Sets a fresh `traceId` and a child logger carrying it. The caller's `traceparent` is not
 * trusted before the caller is: until an authentication middleware (edge signature, admin token,
 * payment signature) calls adoptCallerTrace, it is only a log field (`callerTraceparent`), so an
 * unauthenticated caller cannot put its requests under someone else's trace.
 */
export function traceContext(opts: { log: Logger; authFailures: AuthFailureLog }): MiddlewareHandler<OriginEnv> {
  return async function traceContext(c, next) {
    const traceId = newTraceId();
    const callerTraceparent = c.req.header('traceparent');
    c.set('traceId', traceId);
    c.set('baseLog', opts.log);
    c.set('authFailures', opts.authFailures);
    c.set(
      'log',
      opts.log.child(
        callerTraceparent === undefined
          ? { traceId }
          : { traceId, callerTraceparent: callerTraceparent.slice(0, MAX_TRACEPARENT_LOGGED) },
      ),
    );
    await next();
  };
}

/** The caller is authenticated: its `traceparent`, when well-formed, becomes the request's trace. */
export function adoptCallerTrace(c: Context<OriginEnv>): void {
  const traceId = traceIdOf(c.req.header('traceparent'));
  if (traceId === null) return;
  c.set('traceId', traceId);
  c.set('log', c.get('baseLog').child({ traceId }));
}

/**
 * 413 `payload_too_large` for a body over `maxBytes`: from a declared Content-Length without reading,
 * or by counting a chunked body while reading it and stopping at the limit (Hono's bodyLimit), so
 * an oversized body is never held in memory; a chunked body not all read within `timeoutMs` → 408
 * `request_timeout`. Runs before any signature or token check.
 *
 * The declared-length check is done here from the header alone: Hono's bodyLimit first touches
 * `c.req.raw.body`, which makes @hono/node-server build a full web Request (abort signal, web
 * stream) for every request, the costliest part of a request the origin itself handles. Without that,
 * rawBody() reads the Node request directly.
 */
export function bodySizeLimit(opts: { maxBytes: number; timeoutMs: number }): MiddlewareHandler<OriginEnv> {
  const tooLarge = () => {
    throw new ContractError('payload_too_large', `body larger than ${opts.maxBytes} bytes`);
  };
  const chunked = bodyLimit({ maxSize: opts.maxBytes, onError: tooLarge });
  return async function bodySizeLimit(c, next) {
    const method = c.req.method;
    // A GET or HEAD request has no body (a web Request refuses one), as bodyLimit would find.
    if (method === 'GET' || method === 'HEAD') return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined)
      return parseInt(declared, 10) > opts.maxBytes ? tooLarge() : next();
    // bodyLimit reads a chunked body whole before going on: that read gets the body deadline.
    await readWithin(
      chunked(c, async () => undefined),
      opts.timeoutMs,
    );
    return next();
  };
}

/**
 * Reads the (size-checked) body once as text, so signature checks and JSON parsing see the same
 * bytes. A body not fully arrived within `timeoutMs` is answered 408 `request_timeout` and its
 * connection closed (onError), so a client that declares 1,000 bytes and sends 1 is not held for
 * Node's own request timeout.
 */
export function rawBody(opts: { timeoutMs: number }): MiddlewareHandler<OriginEnv> {
  return async function rawBody(c, next) {
    c.set(
      'rawBody',
      c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await readWithin(c.req.text(), opts.timeoutMs),
    );
    await next();
  };
}

/** `read`, or 408 `request_timeout` when it has not finished within `timeoutMs`. */
async function readWithin<T>(read: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ContractError('request_timeout', `the request body did not arrive within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  read.catch(() => undefined); // still pending when late; it fails when the connection is closed
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The 401 message of each reason an edge signature is refused. */
export const EDGE_SIGNATURE_REFUSALS = {
  missing: 'missing edge signature',
  stale: 'stale edge signature',
  bad_signature: 'bad edge signature',
} as const;

/** The 401 of a refused edge signature (the signature middleware and the reserve chain alike). */
export function edgeSignatureFailure(failure: keyof typeof EDGE_SIGNATURE_REFUSALS): AuthFailure {
  const reason = failure === 'bad_signature' ? 'invalid' : failure;
  return new AuthFailure('/internal', reason, EDGE_SIGNATURE_REFUSALS[failure]);
}

/** Edge → origin calls must carry a fresh, valid §9 signature. */
export function edgeSignature(opts: { secret: string }): MiddlewareHandler<OriginEnv> {
  const key = edgeSecretKey(opts.secret);
  return async function edgeSignature(c, next) {
    // Path and query exactly as sent (undecoded), sliced off the absolute URL: a WHATWG URL parse
    // per request is not needed to read them.
    const url = c.req.url;
    const failure = verifyEdgeSignatureSync(key, {
      method: c.req.method,
      pathWithQuery: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      body: c.get('rawBody'),
      timestamp: c.req.header('x-edge-timestamp'),
      signature: c.req.header('x-edge-signature'),
    });
    if (failure) throw edgeSignatureFailure(failure);
    adoptCallerTrace(c);
    await next();
  };
}

/** The bearer token of `Authorization: Bearer <token>`; 401 when missing (told apart from wrong). */
function givenToken(header: string | undefined, what: string, route: AuthRoute): string {
  const given = header?.startsWith('Bearer ') ? header.slice(7) : '';
  // Missing and wrong are told apart (an operator's typo vs a forgotten header); neither says more.
  if (given.length === 0)
    throw new AuthFailure(route, 'missing', `${what} required: send Authorization: Bearer <token>`);
  return given;
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/** `Authorization: Bearer <token>`, compared in constant time; 401 `unauthenticated` otherwise. */
export function bearerToken(opts: { token: string; what: string; route: AuthRoute }): MiddlewareHandler<OriginEnv> {
  const expected = digest(opts.token);
  return async function bearerToken(c, next) {
    const given = givenToken(c.req.header('authorization'), opts.what, opts.route);
    if (!timingSafeEqual(digest(given), expected))
      throw new AuthFailure(opts.route, 'invalid', `${opts.what} is not valid`);
    await next();
  };
}

/**
 * `Authorization: Bearer <token>` of one of the admin operators (ADMIN_TOKEN as `admin`, each of
 * ADMIN_TOKENS by name): sets `operator`, the name every change records as its actor. The token is
 * compared with every operator's in constant time, all of them every time, so the answer's timing
 * tells neither the token nor which operator's it came close to.
 */
export function adminToken(opts: { operators: readonly AdminOperator[] }): MiddlewareHandler<OriginEnv> {
  const known = opts.operators.map((o) => ({ name: o.name, digest: digest(o.token) }));
  return async function adminToken(c, next) {
    const given = digest(givenToken(c.req.header('authorization'), 'admin token', '/admin'));
    let operator: string | undefined;
    for (const o of known) if (timingSafeEqual(given, o.digest)) operator ??= o.name;
    if (operator === undefined) throw new AuthFailure('/admin', 'invalid', 'admin token is not valid');
    c.set('operator', operator);
    adoptCallerTrace(c);
    await next();
  };
}

/**
 * Sheds load: at most `max` requests in progress through this gate; the rest get 503 `busy` with
 * Retry-After at once, before any Redis or MySQL work. One gate can serve several ways in (the
 * reserve chain's, whichever adapter called it).
 */
export class InFlightGate {
  private inFlight = 0;
  private readonly message: string;

  constructor(
    private readonly opts: {
      max: number;
      onShed?: () => void;
      /** What is in progress, for the message ("purchases", "status reads"). */
      what?: string;
    },
  ) {
    this.message = `too many ${opts.what ?? 'purchases'} in progress, try again shortly`;
  }

  /** Counts one request in, or throws 503 `busy`; every enter that returns is followed by one leave. */
  enter(): void {
    if (this.inFlight >= this.opts.max) {
      this.opts.onShed?.();
      throw new ContractError('busy', this.message, { retryAfter: 1 });
    }
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
  }
}

/** An InFlightGate as middleware: a new gate from `max`/`onShed`/`what`, or a shared `gate`. */
export function inFlightLimit(
  opts: ConstructorParameters<typeof InFlightGate>[0] | { gate: InFlightGate },
): MiddlewareHandler<OriginEnv> {
  const gate = 'gate' in opts ? opts.gate : new InFlightGate(opts);
  return async function inFlightLimit(c, next) {
    gate.enter();
    try {
      await next();
    } finally {
      gate.leave();
    }
  };
}
