/**
 * The body of `POST /internal/reserve` checked against the contract's schema, the reserve chain's
 * parse step (reserve-chain.ts). The edge's usual body is accepted by hand first — a few type checks
 * instead of zod's walk of the schema, on every request of the hot route — and anything the hand
 * check does not accept outright (a bad or missing field, another shape, claims that break their rule) goes
 * through the schema itself, so every refusal is the schema's own, word for word.
 */
import { MAX_QUANTITY } from '../../contract/activity.js';
import { claimsSchema } from '../../contract/eligibility.js';
import { isId, isRequestId, isTraceId } from '../../contract/ids.js';
import { reserveRequestSchema, type ReserveRequest } from '../../contract/reservation.js';

/** What `reserveRequestSchema.parse(json)` returns, or the ZodError it throws. */
export function reserveRequestOf(json: unknown): ReserveRequest {
  return acceptedByHand(json) ?? reserveRequestSchema.parse(json);
}

/** The schema's output for a body that plainly meets it, with the schema's fields in its order; else null. */
function acceptedByHand(json: unknown): ReserveRequest | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const { activityId, userId, quantity, requestId, traceId, claims } = json as Record<string, unknown>;
  if (
    !isId(activityId) ||
    !isId(userId) ||
    typeof quantity !== 'number' ||
    !Number.isInteger(quantity) ||
    quantity < 1 ||
    quantity > MAX_QUANTITY ||
    !isRequestId(requestId) ||
    (traceId !== undefined && !isTraceId(traceId))
  )
    return null;
  const req: ReserveRequest = { activityId, userId, quantity, requestId };
  if (traceId !== undefined) req.traceId = traceId;
  if (claims !== undefined) {
    const checked = claimsSchema.safeParse(claims);
    if (!checked.success) return null;
    req.claims = checked.data;
  }
  return req;
}
