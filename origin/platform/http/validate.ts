/**
 * The origin's one validation path (after Hono's `validator`): `jsonBody(schema)` parses the
 * size-checked raw body against a contract schema, `idParam()` checks a path id, and the handler
 * reads the result with `c.req.valid('json' | 'param')`. A failure is a 400 `bad_request` with the
 * contract's message (platform/http/errors.ts translates zod's errors), before the handler runs.
 */
import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { ContractError } from '../../../contract/errors.js';
import { activityOfReservation, isId } from '../../../contract/ids.js';
import type { OriginEnv } from './types.js';

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ContractError('bad_request', 'body must be JSON');
  }
}

/** A decimal positive 64-bit id, or 400 naming `what` ("activity id", "userId"). */
export function requireId(value: string | undefined, what: string): string {
  if (!isId(value)) throw new ContractError('bad_request', `${what} must be a decimal positive 64-bit integer`);
  return value;
}

/** `<activityId>-<32 hex>` (contract/ids.ts), or 400. */
export function requireReservationId(value: string | undefined): string {
  if (!activityOfReservation(value))
    throw new ContractError('bad_request', 'reservation id must be <activityId>-<32 hex characters>');
  return value!;
}

/** The body, parsed as JSON and checked by `schema`: `c.req.valid('json')`. Needs rawBody() before it. */
export function jsonBody<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<OriginEnv, string, { in: { json: z.input<S> }; out: { json: z.output<S> } }> {
  return async function jsonBody(c, next) {
    c.req.addValidatedData('json', schema.parse(parseJson(c.get('rawBody'))) as object);
    await next();
  };
}

/** Path parameter `name` (default `id`) is an activity id: `c.req.valid('param')[name]`. */
export function idParam<N extends string = 'id'>(
  name: N = 'id' as N,
  what = 'activity id',
): MiddlewareHandler<OriginEnv, string, { out: { param: Record<N, string> } }> {
  return async function idParam(c, next) {
    c.req.addValidatedData('param', { [name]: requireId(c.req.param(name), what) });
    await next();
  };
}

/** Path parameter `reservationId` is a reservation id: `c.req.valid('param').reservationId`. */
export function reservationIdParam(): MiddlewareHandler<
  OriginEnv,
  string,
  { out: { param: { reservationId: string } } }
> {
  return async function reservationIdParam(c, next) {
    c.req.addValidatedData('param', { reservationId: requireReservationId(c.req.param('reservationId')) });
    await next();
  };
}
