/**
 * The public edge API (edge/app.ts, edge/routes/*) as registry entries: what buyers' browsers and
 * apps call. Request schemas are the ones the routes validate with; codes come from the contract.
 */
import { z } from 'zod';
import type { ErrorCode } from '../errors.js';
import { purchaseBodySchema } from '../reservation.js';
import { REFUSALS } from '../refusals.js';
import { SHADOW_REFUSALS } from '../shadow.js';
import {
  entrantsPageSchema,
  entryAnswerSchema,
  entryPollSchema,
  publicActivitySchema,
  purchaseAnswerSchema,
  reservationBodySchema,
  ticketAnswerSchema,
  waitingAnswerSchema,
} from './bodies.js';
import { buildDocument, type RouteDoc } from './registry.js';

/** The sale's window, switches and sold-out flag (edge/gates.ts `assertOpen`). */
const SALE_STATE: ErrorCode[] = [
  REFUSALS.tooEarly.code,
  REFUSALS.ended.code,
  REFUSALS.paused.code,
  REFUSALS.soldOut.code,
];
/** Who may buy: members-only, the deny list, a shadow (rehearsal) sale's tokens. */
const WHO_MAY_BUY: ErrorCode[] = [
  REFUSALS.notEligible.code,
  REFUSALS.denied.code,
  SHADOW_REFUSALS.realTokenOnShadowSale.code,
];
/** The origin's reserve refusals the edge passes on (contract/refusals.ts). */
const RESERVE_REFUSALS: ErrorCode[] = [
  REFUSALS.soldOut.code,
  REFUSALS.insufficientStock.code,
  REFUSALS.limitExceeded.code,
  REFUSALS.notWarmed.code,
  REFUSALS.admissionBusy.code,
  REFUSALS.unavailable.code,
  ...WHO_MAY_BUY,
];
/** An activity id the edge was not told about, or a malformed one. */
const ACTIVITY_LOOKUP: ErrorCode[] = ['bad_request', 'not_found', REFUSALS.lookupFailed.code];

export const publicRoutes: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/',
    operationId: 'salePage',
    summary: 'The sale page',
    tag: 'sale page',
    security: 'none',
    responses: { 200: { description: 'the sale page', contentType: 'text/html' } },
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: '/a/:activityId',
    operationId: 'salePageOfActivity',
    summary: "An activity's sale page",
    description: 'The same page; it reads the activity id from its address and a `?token=` once.',
    tag: 'sale page',
    security: 'none',
    params: {
      activityId: { schema: z.string(), description: 'The activity the page shows.' },
    },
    responses: { 200: { description: 'the sale page', contentType: 'text/html' } },
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: '/api/openapi.json',
    operationId: 'publicOpenApi',
    summary: 'This document',
    tag: 'reference',
    security: 'none',
    responses: {
      200: {
        description: 'the public API as OpenAPI 3.1',
        schema: z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string() }) }),
      },
    },
    errors: ['not_found'],
  },
  {
    method: 'get',
    path: '/api/activities/:id',
    operationId: 'getActivity',
    summary: 'The activity: window, state, server time, stock hint',
    description:
      '`state` is the phase buyers see; `stockHint` is at most about 1 s old. Lottery sales add `admission`, ' +
      '`lotteryWindowMs`, `drawCommitment`, `drawEntrantsDigest` and, after the draw, `drawSeed` and `draw`. ' +
      'Browsers and the colo may keep it 1 s.',
    tag: 'activities',
    security: 'none',
    responses: { 200: { description: 'the activity', schema: publicActivitySchema } },
    errors: ACTIVITY_LOOKUP,
  },
  {
    method: 'post',
    path: '/api/activities/:id/tickets',
    operationId: 'issueTicket',
    summary: 'A purchase ticket: signed, bound to the user, short-lived',
    tag: 'purchase',
    security: 'user',
    headers: {
      'x-challenge-token': {
        schema: z.string(),
        description: "The bot-check widget's answer, when the edge has a bot check (BOT_CHECK_URL).",
      },
    },
    responses: {
      200: { description: '`{purchaseUrl, expiresAt}` (TICKET_TTL_SECONDS, 60 s)', schema: ticketAnswerSchema },
    },
    errors: [
      ...ACTIVITY_LOOKUP,
      ...SALE_STATE,
      ...WHO_MAY_BUY,
      REFUSALS.rateLimited.code,
      'challenge_failed',
      REFUSALS.unavailable.code,
    ],
  },
  {
    method: 'post',
    path: '/api/activities/:id/purchase',
    operationId: 'purchase',
    summary: 'Buy: the one call that may reserve a unit',
    description:
      'POST the `purchaseUrl` of a ticket with an `Idempotency-Key`. 202: queued (or, in a lottery window, ' +
      'entered; beyond the admission rate of a sale with a waiting room, a place in line). A repeat with the ' +
      'same key answers 200 with the same reservation and its current status.',
    tag: 'purchase',
    security: 'user',
    query: {
      t: { schema: z.string(), required: true, description: 'The ticket (from `purchaseUrl`).' },
    },
    headers: {
      'Idempotency-Key': {
        schema: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/),
        required: true,
        description: 'The client-chosen request id: a repeat with the same key answers the same reservation.',
      },
    },
    body: purchaseBodySchema,
    responses: {
      200: {
        description: 'a repeat: the same reservation (current `status`), or the same entry',
        schema: z.union([purchaseAnswerSchema, entryAnswerSchema]),
        headers: ['Set-Cookie'],
      },
      202: {
        description: '`{status:"queued", reservationId, pollUrl}` · lottery: `entered` · waiting room: `waiting`',
        schema: z.union([purchaseAnswerSchema, entryAnswerSchema, waitingAnswerSchema]),
        headers: ['Set-Cookie'],
      },
    },
    errors: [
      ...ACTIVITY_LOOKUP,
      'bad_ticket',
      ...SALE_STATE,
      ...RESERVE_REFUSALS,
      REFUSALS.rateLimited.code,
      REFUSALS.lineFull.code,
    ],
  },
  {
    method: 'get',
    path: '/api/activities/:id/waiting/:entryId',
    operationId: 'pollWaitingPlace',
    summary: 'A place in the waiting room: position, then the purchase’s result at the turn',
    tag: 'waiting room',
    security: 'user',
    params: { entryId: { schema: z.string(), description: 'The place, from `pollUrl`.' } },
    responses: {
      200: {
        description:
          '`{status:"waiting", position, etaSeconds, pollUrl, pollAfterMs}`; at the turn `{status:"queued", …}`',
        schema: z.union([waitingAnswerSchema, purchaseAnswerSchema]),
      },
    },
    errors: [...ACTIVITY_LOOKUP, ...SALE_STATE, ...RESERVE_REFUSALS, REFUSALS.pollTooSoon.code],
  },
  {
    method: 'get',
    path: '/api/activities/:id/reservation',
    operationId: 'myReservation',
    summary: "The caller's own reservation in the activity",
    tag: 'reservations',
    security: 'user',
    responses: {
      200: { description: '`{reservationId, status, orderNo?, expireAt?}`', schema: reservationBodySchema },
    },
    errors: [
      ...ACTIVITY_LOOKUP,
      REFUSALS.rateLimited.code,
      REFUSALS.unavailable.code,
      SHADOW_REFUSALS.realTokenOnShadowSale.code,
    ],
  },
  {
    method: 'get',
    path: '/api/reservations/:reservationId',
    operationId: 'pollReservation',
    summary: 'A reservation (or lottery entry) by id: its owner polls it',
    description: 'At most one poll per second per user, whichever ids are polled (429 + Retry-After).',
    tag: 'reservations',
    security: 'user',
    responses: {
      200: {
        description:
          '`{reservationId, status, orderNo?, expireAt?}`; an entry: `{status:"drawing"}` / `{status:"lost"}` / the reservation',
        schema: entryPollSchema,
      },
    },
    errors: ['not_found', 'forbidden', REFUSALS.rateLimited.code, REFUSALS.unavailable.code],
  },
  {
    method: 'get',
    path: '/api/activities/:id/entries/:entryId',
    operationId: 'pollEntry',
    summary: "A lottery entry's poll (the same answer as `/api/reservations/<entryId>`)",
    tag: 'lottery',
    security: 'user',
    params: { entryId: { schema: z.string(), description: '`<activityId>-entry-<userId>`' } },
    responses: { 200: { description: '`drawing`, then the reservation or `lost`', schema: entryPollSchema } },
    errors: ['not_found', 'forbidden', REFUSALS.rateLimited.code, REFUSALS.unavailable.code],
  },
  {
    method: 'get',
    path: '/api/activities/:id/draw/entrants',
    operationId: 'drawEntrants',
    summary: "A lottery's published entrant list, in draw order, a page at a time",
    description: 'Published once the winners are final; pages are cached at the edge. Limited per client IP.',
    tag: 'lottery',
    security: 'none',
    query: {
      after: { schema: z.string().regex(/^[0-9a-f]{64}$/), description: 'The ticket the page starts after.' },
      limit: {
        schema: z.string().regex(/^[1-9][0-9]{0,6}$/),
        description: 'Entrants per page, at most DRAW_ENTRANTS_PAGE_MAX (1,000).',
      },
    },
    responses: { 200: { description: '`{activityId, entrants:[…], next}`', schema: entrantsPageSchema } },
    errors: [...ACTIVITY_LOOKUP, REFUSALS.rateLimited.code, REFUSALS.unavailable.code],
  },
];

/**
 * Routes the edge app registers that are files, not API: the sale page's versioned assets and the
 * favicon (served by the asset server in production). The route check knows them by this list.
 */
export const PUBLIC_STATIC_ROUTES: readonly string[] = ['GET /assets/*', 'GET /favicon.ico'];

export function publicDocument() {
  return buildDocument({
    title: 'Flash-sale gateway: public API (edge)',
    version: '1',
    description:
      "What buyers' browsers and apps call, at the edge. Every error is `{error, message, traceId}` with a " +
      'contract code (contract/errors.ts); users send `Authorization: Bearer <JWT>`. ' +
      'An activity id the origin has not put on the live list is 404 `not_found`. ' +
      'Generated from the schemas the routes validate with (`npm run openapi`); prose: docs/api.md.',
    servers: [{ url: '/', description: 'the edge (Cloudflare Worker)' }],
    routes: publicRoutes,
    named: {
      PublicActivity: publicActivitySchema,
      ReservationBody: reservationBodySchema,
      PurchaseAnswer: purchaseAnswerSchema,
      EntryAnswer: entryAnswerSchema,
      WaitingAnswer: waitingAnswerSchema,
      EntryPoll: entryPollSchema,
      EntrantsPage: entrantsPageSchema,
      Ticket: ticketAnswerSchema,
    },
  });
}
