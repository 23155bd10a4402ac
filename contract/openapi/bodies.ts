/**
 * Response bodies as zod schemas, for the OpenAPI documents and the tests that check answers against
 * them. Where the code builds a body from a TypeScript type of the contract, the schema is pinned to
 * that type (`Same<…>` below): a field added to one and not the other fails `npm run typecheck`.
 */
import { z } from 'zod';
import { ADMISSION_MODES, drawPublicSchema, type PublicActivity } from '../activity.js';
import { RESERVATION_STATUSES, type ReservationBody, type ReserveResponse } from '../reservation.js';

/** True when A and B are the same type (both ways assignable). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const reservationId = z.string().describe('`<activityId>-<32 hex>`');
const isoInstant = z.string().describe('ISO-8601 instant');

export const publicStateSchema = z.enum(['upcoming', 'open', 'sold_out', 'paused', 'ended']);
export const stockHintSchema = z.enum(['plenty', 'limited', 'few', 'sold_out']);

/** `GET /api/activities/:id` (contract/activity.ts `publicActivity`). */
export const publicActivitySchema = z
  .object({
    activityId: z.string(),
    skuId: z.string(),
    title: z.string(),
    startsAt: isoInstant,
    endsAt: isoInstant,
    serverTime: isoInstant,
    state: publicStateSchema,
    version: z.number().int(),
    maxPerUser: z.number().int(),
    description: z.string().optional(),
    priceCents: z.number().int().optional(),
    currency: z.string().optional(),
    imageUrl: z.string().optional(),
    admission: z.enum(ADMISSION_MODES).optional(),
    lotteryWindowMs: z.number().int().optional(),
    drawCommitment: z.string().optional(),
    drawSeed: z.string().optional(),
    drawEntrantsDigest: z.string().optional(),
    draw: drawPublicSchema.omit({ commitment: true, seed: true }).optional(),
    stockHint: stockHintSchema
      .optional()
      .describe('plenty > 50 % of the units on sale left, limited > 10 %, few; only while open or sold out'),
  })
  .strict();
const _publicActivity: Same<z.infer<typeof publicActivitySchema>, PublicActivity> = true;

/** `{reservationId, status, orderNo?, expireAt?}` */
export const reservationBodySchema = z
  .object({
    reservationId,
    status: z.enum(RESERVATION_STATUSES),
    orderNo: z.string().optional(),
    expireAt: isoInstant.optional(),
  })
  .strict();
const _reservationBody: Same<z.infer<typeof reservationBodySchema>, ReservationBody> = true;

/** The origin's reserve answer (`POST /internal/reserve`) has the same fields. */
const _reserveResponse: Same<z.infer<typeof reservationBodySchema>, ReserveResponse> = true;

/** The origin's answer inside a lottery window. */
export const entryResponseSchema = z.object({ status: z.literal('entered'), entryId: z.string() }).strict();

/** The edge's purchase answer for a reservation: 202 `queued`, or a repeat's current status (edge/forward-purchase.ts). */
export const purchaseAnswerSchema = z
  .object({
    status: z.enum(RESERVATION_STATUSES),
    reservationId,
    pollUrl: z.string().describe('`/api/reservations/<reservationId>`'),
    orderNo: z.string().optional(),
    expireAt: isoInstant.optional(),
  })
  .strict();

/** A purchase inside a lottery window. */
export const entryAnswerSchema = z
  .object({
    status: z.literal('entered'),
    entryId: z.string().describe('`<activityId>-entry-<userId>`'),
    pollUrl: z.string().describe('`/api/activities/<id>/entries/<entryId>`'),
  })
  .strict();

/** A place in the waiting room (overflow "queue"). */
export const waitingAnswerSchema = z
  .object({
    status: z.literal('waiting'),
    position: z.number().int().min(0),
    etaSeconds: z.number().min(0),
    pollUrl: z.string().describe('`/api/activities/<id>/waiting/<entryId>`'),
    pollAfterMs: z.number().int().min(0),
  })
  .strict();

/** An entry's or reservation's poll: `drawing`, `lost`, or the reservation. */
export const entryPollSchema = z.union([
  z.object({ status: z.literal('drawing') }).strict(),
  z.object({ status: z.literal('lost') }).strict(),
  reservationBodySchema,
]);

/** One line of a lottery's published entrant list (scheme 1 lines have no entrant / entry / excluded). */
export const entrantsPageSchema = z
  .object({
    activityId: z.string(),
    entrants: z.array(
      z
        .object({
          ticket: z.string().regex(/^[0-9a-f]{64}$/),
          quantity: z.number().int(),
          won: z.boolean(),
          entrant: z.string().optional(),
          entry: z.number().int().optional(),
          excluded: z.boolean().optional(),
        })
        .strict(),
    ),
    next: z.string().nullable().describe('The `after` of the next page; null on the last.'),
  })
  .strict();

export const ticketAnswerSchema = z
  .object({
    purchaseUrl: z.string().describe('`/api/activities/<id>/purchase?t=<ticket>`: bound to the user'),
    expiresAt: isoInstant,
  })
  .strict();
