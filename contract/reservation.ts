/** Reservation requests and bodies shared by edge and origin (docs/design.md §3, §9). */
import { z } from 'zod';
import { MAX_QUANTITY } from './activity.js';
import { claimsSchema } from './eligibility.js';
import { isId, isRequestId, isTraceId } from './ids.js';

export const RESERVATION_STATUSES = ['queued', 'ordered', 'paid', 'timeout', 'failed'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** `{reservationId, status, orderNo?, expireAt?}` */
export interface ReservationBody {
  reservationId: string;
  status: ReservationStatus;
  orderNo?: string;
  expireAt?: string;
}

/** Units per reservation: the one quantity rule, for the purchase body and the reserve request. */
const quantity = z
  .number()
  .int('quantity must be an integer')
  .min(1, 'quantity must be at least 1')
  .max(MAX_QUANTITY, `quantity must be at most ${MAX_QUANTITY}`);

/** Body of the origin's `POST /internal/reserve`. */
export const reserveRequestSchema = z.object({
  activityId: z.string().refine(isId, 'activityId must be a decimal positive 64-bit integer'),
  userId: z.string().refine(isId, 'userId must be a decimal positive 64-bit integer'),
  quantity,
  requestId: z.string().refine(isRequestId, 'requestId must be 1-64 characters of [A-Za-z0-9._:-]'),
  traceId: z.string().refine(isTraceId, 'traceId must be 32 lowercase hex characters').optional(),
  /** The user's JWT claims the edge verified (contract/eligibility.ts), for the origin's eligibility check. */
  claims: claimsSchema.optional(),
});
export type ReserveRequest = z.infer<typeof reserveRequestSchema>;

/**
 * Body of a successful reserve: 202 `queued` when new; 200 when the caller already held it, with the
 * reservation's current status (and its order number and expiry once settled).
 */
export interface ReserveResponse {
  status: ReservationStatus;
  reservationId: string;
  orderNo?: string;
  expireAt?: string;
}

/** The purchase body a client sends to the edge. */
export const purchaseBodySchema = z.object({ quantity });

/** A purchase inside a lottery window (docs/design.md §10): 202 `{status:"entered", entryId, pollUrl}` at the edge. */
export interface EntryResponse {
  status: 'entered';
  entryId: string;
}

/** An entry's poll: `drawing` until the winners are final, then the reservation body or `lost`. */
export type EntryPollBody = { status: 'drawing' } | { status: 'lost' } | ReservationBody;
