/**
 * The signed edge ↔ origin API (docs/design.md §9) as registry entries: the origin's routes the edge
 * calls (origin/reservation/internal-routes.ts and its fast path) and the edge's routes the origin
 * calls (edge/routes/internal.ts). Every call carries the §9 signature.
 */
import { z } from 'zod';
import { activitySnapshotSchema } from '../activity.js';
import { EDGE_FIGURES_PATH, edgeFiguresSchema } from '../edge-figures.js';
import { denyPushSchema, liveListSchema } from '../edge-push.js';
import type { ErrorCode } from '../errors.js';
import { REFUSALS } from '../refusals.js';
import { SHADOW_REFUSALS } from '../shadow.js';
import { reserveRequestSchema } from '../reservation.js';
import { entrantsPageSchema, entryPollSchema, entryResponseSchema, reservationBodySchema } from './bodies.js';
import { buildDocument, type RouteDoc } from './registry.js';

/** A status read over STATUS_MAX_IN_FLIGHT at the origin is shed. */
const SHED: ErrorCode[] = ['busy'];
const userIdQuery = {
  userId: {
    schema: z.string().regex(/^[1-9][0-9]{0,19}$/),
    required: true,
    description: 'The user the edge verified.',
  },
};

/** What the origin's reserve answers besides a reservation (contract/refusals.ts). */
const RESERVE_CODES: ErrorCode[] = [
  REFUSALS.soldOut.code,
  REFUSALS.insufficientStock.code,
  REFUSALS.limitExceeded.code,
  REFUSALS.notEligible.code,
  REFUSALS.denied.code,
  SHADOW_REFUSALS.realTokenOnShadowSale.code,
  REFUSALS.tooEarly.code,
  REFUSALS.ended.code,
  REFUSALS.paused.code,
  REFUSALS.notWarmed.code,
  REFUSALS.admissionBusy.code,
  REFUSALS.unavailable.code,
  'request_timeout',
];

const waitingRoomFiguresSchema = z.looseObject({
  activityId: z.string(),
  overflow: z.enum(['reject', 'queue']),
  at: z.string(),
  waiting: z.number().int(),
  oldestWaitMs: z.number(),
  turnsPending: z.number().int(),
  entered: z.number().int(),
  admitted: z.number().int(),
  dropped: z.number().int(),
  closed: z.number().int(),
  retried: z.number().int(),
  timeInLine: z.looseObject({
    bucketsMs: z.array(z.number().nullable()),
    cumulativeCounts: z.array(z.number().int()),
    sumMs: z.number(),
  }),
});

export const internalRoutes: readonly RouteDoc[] = [
  {
    method: 'post',
    path: '/internal/reserve',
    operationId: 'reserve',
    server: 'origin',
    summary: 'The one decision: check, pre-deduct, queue (one Redis Lua call)',
    description:
      '`claims` are the JWT claims the edge verified, for a members-only sale. Inside a lottery window the ' +
      'answer is an entry. Over RESERVE_MAX_IN_FLIGHT: 503 `busy`.',
    tag: 'origin',
    security: 'edgeSignature',
    body: reserveRequestSchema,
    responses: {
      200: {
        description: 'a repeat: the same reservation, its current status (or the same entry)',
        schema: z.union([reservationBodySchema, entryResponseSchema]),
      },
      202: {
        description: '`{status:"queued", reservationId}` · lottery window: `{status:"entered", entryId}`',
        schema: z.union([reservationBodySchema, entryResponseSchema]),
      },
    },
    errors: RESERVE_CODES,
  },
  {
    method: 'get',
    path: '/internal/reservations/:reservationId',
    operationId: 'reservationStatus',
    server: 'origin',
    summary: 'A reservation (or lottery entry) for its owner',
    tag: 'origin',
    security: 'edgeSignature',
    query: userIdQuery,
    responses: {
      200: {
        description: 'the reservation body (an entry: drawing / lost / the reservation)',
        schema: entryPollSchema,
      },
    },
    errors: ['bad_request', 'not_found', 'forbidden', ...SHED],
  },
  {
    method: 'get',
    path: '/internal/activities/:id/reservation',
    operationId: 'reservationOfUser',
    server: 'origin',
    summary: "A user's reservation in an activity",
    tag: 'origin',
    security: 'edgeSignature',
    query: userIdQuery,
    responses: { 200: { description: 'the reservation body', schema: reservationBodySchema } },
    errors: ['bad_request', 'not_found', ...SHED],
  },
  {
    method: 'get',
    path: '/internal/activities/:id',
    operationId: 'activitySnapshot',
    server: 'origin',
    summary: "The activity's snapshot",
    description: 'An ActivityDO without config fetches it once, then every ACTIVITY_REFRESH_MS.',
    tag: 'origin',
    security: 'edgeSignature',
    responses: {
      200: { description: 'the snapshot `{config, state, soldOut, draw?, units?}`', schema: activitySnapshotSchema },
    },
    errors: ['bad_request', 'not_found', ...SHED],
  },
  {
    method: 'get',
    path: '/internal/activities/:id/draw/entrants',
    operationId: 'drawEntrantsPage',
    server: 'origin',
    summary: 'A page of the published entrant list',
    tag: 'origin',
    security: 'edgeSignature',
    query: {
      after: { schema: z.string().regex(/^[0-9a-f]{64}$/), description: 'The ticket the page starts after.' },
      limit: { schema: z.string().regex(/^\d{1,7}$/), description: 'At most DRAW_ENTRANTS_PAGE_MAX.' },
    },
    responses: { 200: { description: '`{activityId, entrants, next}`', schema: entrantsPageSchema } },
    errors: ['bad_request', 'not_found', ...SHED],
  },
  {
    method: 'put',
    path: '/internal/activities/:id',
    operationId: 'pushActivity',
    server: 'edge',
    summary: 'Upsert the ActivityDO: every admin change and sold-out / refilled transition',
    tag: 'edge',
    security: 'edgeSignature',
    body: activitySnapshotSchema,
    responses: {
      200: {
        description: '`{activityId, version, state, soldOut}` as stored',
        schema: z
          .object({ activityId: z.string(), version: z.number().int(), state: z.string(), soldOut: z.boolean() })
          .strict(),
      },
    },
    errors: [],
  },
  {
    method: 'put',
    path: '/internal/activities',
    operationId: 'pushLiveList',
    server: 'edge',
    summary: 'The live list (at start and every EDGE_LIVE_LIST_PUSH_MS)',
    tag: 'edge',
    security: 'edgeSignature',
    body: liveListSchema,
    responses: {
      200: { description: '`{live}`: ids now live', schema: z.object({ live: z.number().int() }).strict() },
    },
    errors: [],
  },
  {
    method: 'put',
    path: '/internal/deny',
    operationId: 'pushDenyList',
    server: 'edge',
    summary: "Deny-list changes, kept in each user's UserGateDO shard",
    tag: 'edge',
    security: 'edgeSignature',
    body: denyPushSchema,
    responses: {
      200: {
        description: '`{applied, ignored}` (ignored: older than the revision the edge holds)',
        schema: z.object({ applied: z.number().int(), ignored: z.number().int() }).strict(),
      },
    },
    errors: [],
  },
  {
    method: 'get',
    path: '/internal/activities/:id/waiting-room',
    operationId: 'waitingRoomFigures',
    server: 'edge',
    summary: "The waiting room's figures summed over the shards",
    tag: 'edge',
    security: 'edgeSignature',
    responses: { 200: { description: 'the figures', schema: waitingRoomFiguresSchema } },
    errors: ['bad_request', 'not_found', REFUSALS.lookupFailed.code],
  },
  {
    method: 'get',
    path: EDGE_FIGURES_PATH,
    operationId: 'edgeFigures',
    server: 'edge',
    summary: "The edge's figures over all isolates, for the origin's /metrics",
    tag: 'edge',
    security: 'edgeSignature',
    responses: { 200: { description: 'counters and waiting lines', schema: edgeFiguresSchema } },
    errors: [],
  },
];

export const INTERNAL_SERVERS = {
  origin: { url: 'http://127.0.0.1:3000', description: 'the origin (ORIGIN_URL at the edge)' },
  edge: { url: 'http://127.0.0.1:8787', description: 'the edge (EDGE_URL at the origin)' },
};

/** Response schemas of the internal API worth a name in components. */
export const INTERNAL_NAMED = {
  ActivitySnapshot: activitySnapshotSchema,
  ReservationBody: reservationBodySchema,
  EntryResponse: entryResponseSchema,
  EntryPoll: entryPollSchema,
  EntrantsPage: entrantsPageSchema,
  EdgeFigures: edgeFiguresSchema,
};

export function internalDocument() {
  return buildDocument({
    title: 'Flash-sale gateway: internal API (edge ↔ origin)',
    version: '1',
    description:
      'The private calls between edge and origin, each signed (docs/design.md §9): `x-edge-timestamp` and ' +
      '`x-edge-signature`; requests carry a W3C `traceparent`. Tag `origin`: answered by the origin, called by ' +
      'the edge; tag `edge`: answered by the edge, called by the origin. Generated by `npm run openapi`.',
    servers: [INTERNAL_SERVERS.origin, INTERNAL_SERVERS.edge],
    routes: internalRoutes,
    operationServers: INTERNAL_SERVERS,
    named: INTERNAL_NAMED,
  });
}
