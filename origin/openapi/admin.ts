/**
 * The operator's admin API, the console's data routes, the payment webhook and the health routes of
 * the origin as registry entries (contract/openapi/registry.ts), plus the order events a downstream
 * system receives (`webhooks`). Request schemas are the ones the routes validate with.
 */
import { z } from 'zod';
import { activitySnapshotSchema } from '../../contract/activity.js';
import type { ErrorCode } from '../../contract/errors.js';
import { EVENT_SIGNATURE_HEADER, EVENT_TIMESTAMP_HEADER } from '../../contract/order-events.js';
import { INTERNAL_NAMED, internalRoutes, INTERNAL_SERVERS } from '../../contract/openapi/internal.js';
import { publicStateSchema } from '../../contract/openapi/bodies.js';
import { buildDocument, type RouteDoc, type WebhookDoc } from '../../contract/openapi/registry.js';
import { paymentCallbackSchema } from '../orders/payment.js';
import { ORDER_EVENT_TYPES } from '../orders/order-event-store.js';
import { releaseSchema } from '../operator/admin-routes.js';
import { createActivitySchema, patchActivitySchema } from '../sale/sale-schemas.js';

/** Reading the raw body at the origin: too slow a sender is 408. */
const BODY_READ: ErrorCode[] = ['request_timeout'];
const ACTIVITY: ErrorCode[] = ['bad_request', 'not_found'];

const actorHeader = {
  'x-admin-actor': {
    schema: z.string().regex(/^[A-Za-z0-9_.@:+-]{1,64}$/),
    description: "An unverified note (a name, a ticket), logged beside the token's operator, who is the actor.",
  },
};
const replicaRiskQuery = {
  acceptReplicaRisk: {
    schema: z.enum(['true', 'false']),
    description: 'true: open although one Redis failover would stall a bucket (REDIS_WAIT_REPLICAS).',
  },
};

/** An admin answer about an activity: the snapshot, `state` = the switch, `publicState` = the phase. */
export const adminActivitySchema = activitySnapshotSchema.extend({ publicState: publicStateSchema });

const checkSchema = z.looseObject({
  name: z.string(),
  expected: z.unknown(),
  actual: z.unknown(),
  ok: z.boolean(),
  rule: z.string().optional(),
});
const reconciliationSchema = z.looseObject({
  activityId: z.string(),
  ok: z.boolean(),
  at: z.string(),
  checks: z.array(checkSchema),
  figures: z.record(z.string(), z.number().nullable()),
});
const deadLetterSchema = z.looseObject({
  reservationId: z.string(),
  activityId: z.string(),
  userId: z.string(),
  quantity: z.number().int(),
  streamId: z.string(),
  deliveries: z.number().int(),
  reason: z.string(),
  restocked: z.number().int(),
  status: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const orderEventViewSchema = z
  .object({
    id: z.string(),
    type: z.enum(ORDER_EVENT_TYPES),
    orderNo: z.string(),
    activityId: z.string(),
    userId: z.string(),
    quantity: z.number().int(),
    at: z.string(),
    status: z.string(),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.string(),
    seq: z.string(),
  })
  .strict();

/** The body a downstream system receives at ORDER_EVENTS_URL (contract/order-events.ts `OrderEventBody`). */
export const orderEventBodySchema = z
  .object({
    id: z.string().describe('`<orderNo>:<type>`: the same on every delivery of this event; dedupe by it.'),
    type: z.enum(ORDER_EVENT_TYPES),
    orderNo: z.string(),
    activityId: z.string(),
    userId: z.string(),
    quantity: z.number().int(),
    at: z.string().describe('When the order change committed (ISO-8601, ms).'),
  })
  .strict();

const admin = (route: Omit<RouteDoc, 'security' | 'tag'> & { tag?: string }): RouteDoc => ({
  tag: 'sales',
  security: 'admin',
  ...route,
});

export const adminRoutes: readonly RouteDoc[] = [
  admin({
    method: 'post',
    path: '/admin/activities',
    operationId: 'createActivity',
    summary: 'Create a sale',
    description: 'Body and defaults: docs/operations.md step 1.',
    body: createActivitySchema,
    responses: { 201: { description: '`{config, state, soldOut, publicState}`', schema: adminActivitySchema } },
    errors: ['conflict', ...BODY_READ],
  }),
  admin({
    method: 'get',
    path: '/admin/activities/:id',
    operationId: 'getAdminActivity',
    summary: 'The activity: `config`, `state` (the switch), `publicState` (the phase), `soldOut`, …',
    responses: { 200: { description: 'the activity', schema: adminActivitySchema } },
    errors: ACTIVITY,
  }),
  admin({
    method: 'patch',
    path: '/admin/activities/:id',
    operationId: 'changeActivity',
    summary: 'The live switches: state, rates, sold-out threshold, eligibility',
    query: replicaRiskQuery,
    headers: actorHeader,
    body: patchActivitySchema,
    responses: { 200: { description: 'the new snapshot', schema: adminActivitySchema } },
    errors: [...ACTIVITY, 'conflict', 'not_ready', ...BODY_READ],
  }),
  admin({
    method: 'post',
    path: '/admin/activities/:id/warmup',
    operationId: 'warmup',
    tag: 'warm-up',
    summary: 'Load stock and switches into Redis from MySQL',
    query: replicaRiskQuery,
    headers: actorHeader,
    responses: {
      200: {
        description: '`{activityId, stock, holders, state, publicState}`',
        schema: z.looseObject({
          activityId: z.string(),
          stock: z.number().int(),
          holders: z.number().int(),
          state: z.string(),
          publicState: publicStateSchema.optional(),
        }),
      },
    },
    errors: [...ACTIVITY, 'conflict', 'unavailable'],
  }),
  admin({
    method: 'get',
    path: '/admin/activities/:id/warmup',
    operationId: 'verifyWarmup',
    tag: 'warm-up',
    summary: 'Redis compared with MySQL',
    responses: {
      200: {
        description: '`{ok, keys, figures, checks:[{name, expected, actual, ok}]}`',
        schema: z.looseObject({ activityId: z.string(), ok: z.boolean(), checks: z.array(checkSchema) }),
      },
    },
    errors: ACTIVITY,
  }),
  admin({
    method: 'post',
    path: '/admin/activities/:id/releases',
    operationId: 'releaseUnits',
    tag: 'tranches',
    summary: 'Put units held back on sale',
    headers: actorHeader,
    body: releaseSchema,
    responses: {
      200: {
        description: '`{released, heldBack, applied}`',
        schema: z.object({ released: z.number().int(), heldBack: z.number().int(), applied: z.boolean() }).strict(),
      },
    },
    errors: [...ACTIVITY, 'conflict', ...BODY_READ],
  }),
  admin({
    method: 'put',
    path: '/admin/deny/:userId',
    operationId: 'denyUser',
    tag: 'deny list',
    summary: 'Deny a user: in force at the origin before the answer, then at the edge',
    headers: actorHeader,
    responses: {
      200: {
        description: '`{userId, denied, atEdge}`',
        schema: z.looseObject({ userId: z.string(), denied: z.boolean(), atEdge: z.boolean() }),
      },
    },
    errors: ['bad_request'],
  }),
  admin({
    method: 'delete',
    path: '/admin/deny/:userId',
    operationId: 'undenyUser',
    tag: 'deny list',
    summary: 'Lift a denial',
    headers: actorHeader,
    responses: {
      200: {
        description: '`{userId, denied, atEdge}`',
        schema: z.looseObject({ userId: z.string(), denied: z.boolean(), atEdge: z.boolean() }),
      },
    },
    errors: ['bad_request'],
  }),
  admin({
    method: 'get',
    path: '/admin/activities/:id/reconciliation',
    operationId: 'reconcile',
    tag: 'report',
    summary: 'Redis, the Stream and MySQL checked against each other',
    responses: {
      200: {
        description: '`{ok, checks:[{name, expected, actual, ok, rule?}], figures}`',
        schema: reconciliationSchema,
      },
    },
    errors: ACTIVITY,
  }),
  admin({
    method: 'get',
    path: '/admin/activities/:id/dead-letters',
    operationId: 'listDeadLetters',
    tag: 'dead letters',
    summary: "The sale's dead letters",
    responses: {
      200: {
        description: '`{deadLetters:[…]}`',
        schema: z.object({ deadLetters: z.array(deadLetterSchema) }).strict(),
      },
    },
    errors: ACTIVITY,
  }),
  admin({
    method: 'post',
    path: '/admin/dead-letters/:reservationId/retry',
    operationId: 'retryDeadLetter',
    tag: 'dead letters',
    summary: 'Re-queue a dead letter for settlement',
    responses: {
      200: {
        description: '`{reservationId, status:"retried", requeued}`',
        schema: z.looseObject({ reservationId: z.string(), status: z.string() }),
      },
    },
    errors: ['bad_request', 'not_found', 'conflict', 'not_ready'],
  }),
  admin({
    method: 'post',
    path: '/admin/dead-letters/:reservationId/give-up',
    operationId: 'giveUpDeadLetter',
    tag: 'dead letters',
    summary: 'Compensate and close a dead letter',
    responses: {
      200: {
        description: '`{reservationId, status:"given_up", restocked}`',
        schema: z.looseObject({ reservationId: z.string(), status: z.string() }),
      },
    },
    errors: ['bad_request', 'not_found', 'conflict'],
  }),
  admin({
    method: 'post',
    path: '/admin/activities/:id/recover',
    operationId: 'recover',
    tag: 'recovery',
    summary: 'Rebuild Redis from MySQL and the Stream',
    responses: {
      200: {
        description: '`{activityId, stock, holders, unsettled, pendingRefills, state, …}`',
        schema: z.looseObject({ activityId: z.string(), stock: z.number().int(), state: z.string() }),
      },
    },
    errors: [...ACTIVITY, 'conflict', 'busy'],
  }),
  admin({
    method: 'post',
    path: '/admin/activities/:id/cleanup',
    operationId: 'cleanup',
    tag: 'cleanup',
    summary: 'After the end: stop the sale and let its Redis keys expire',
    responses: {
      200: {
        description: '`{state, expiresInSeconds}` (the message of a 409 says why not)',
        schema: z.looseObject({ activityId: z.string(), state: z.string(), expiresInSeconds: z.number() }),
      },
    },
    errors: [...ACTIVITY, 'conflict'],
  }),
  admin({
    method: 'get',
    path: '/admin/order-events',
    operationId: 'listOrderEvents',
    tag: 'order events',
    summary: 'Parked (or pending) downstream order events',
    query: {
      status: { schema: z.enum(['parked', 'pending']), description: 'Default parked.' },
      after: { schema: z.string().regex(/^\d{1,20}$/), description: 'The `seq` the page starts after.' },
      limit: { schema: z.string().regex(/^\d{1,4}$/), description: '1-500, default 100.' },
    },
    responses: {
      200: {
        description: '`{events:[…], next}`',
        schema: z.object({ events: z.array(orderEventViewSchema), next: z.string().nullable() }).strict(),
      },
    },
    errors: ['bad_request'],
  }),
  admin({
    method: 'post',
    path: '/admin/order-events/:id/retry',
    operationId: 'retryOrderEvent',
    tag: 'order events',
    summary: 'Send a parked event again',
    params: { id: { schema: z.string(), description: 'The event id `<orderNo>:<order event type>`.' } },
    responses: {
      200: {
        description: '`{id, status:"pending"}`',
        schema: z.object({ id: z.string(), status: z.literal('pending') }).strict(),
      },
    },
    errors: ['bad_request', 'not_found', 'conflict'],
  }),
  admin({
    method: 'get',
    path: '/admin/openapi.json',
    operationId: 'originOpenApi',
    tag: 'reference',
    summary: 'This document: the admin API, the internal API and the webhooks',
    responses: {
      200: {
        description: 'OpenAPI 3.1',
        schema: z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string() }) }),
      },
    },
    errors: [],
  }),
  // The console's data (origin/console/console-routes.ts): reads the admin API has no route for.
  admin({
    method: 'get',
    path: '/admin/console/api/whoami',
    operationId: 'whoami',
    tag: 'console',
    summary: "The token's operator: the actor of every change made with it",
    responses: { 200: { description: '`{operator}`', schema: z.object({ operator: z.string() }).strict() } },
    errors: [],
  }),
  admin({
    method: 'get',
    path: '/admin/console/api/sales',
    operationId: 'listSales',
    tag: 'console',
    summary: 'The latest sales with their order counts',
    responses: { 200: { description: 'the sales list', schema: z.looseObject({}) } },
    errors: [],
  }),
  admin({
    method: 'get',
    path: '/admin/console/api/sales/:id/live',
    operationId: 'saleLiveView',
    tag: 'console',
    summary: "One sale's live view: figures, switches, signals",
    responses: { 200: { description: 'the live view', schema: z.looseObject({}) } },
    errors: ACTIVITY,
  }),
  admin({
    method: 'get',
    path: '/admin/console/api/sales/:id/report',
    operationId: 'saleReport',
    tag: 'report',
    summary: 'The end-of-sale report',
    responses: {
      200: {
        description: '`{reconciliation, orders, refills, deadLetters, refundsNeeded, …}`',
        schema: z.looseObject({ reconciliation: reconciliationSchema }),
      },
    },
    errors: ACTIVITY,
  }),
  admin({
    method: 'get',
    path: '/admin/console/api/sales/:id/cleanup-checklist',
    operationId: 'cleanupChecklist',
    tag: 'cleanup',
    summary: 'What stands between the sale and its cleanup',
    responses: { 200: { description: 'the checklist', schema: z.looseObject({}) } },
    errors: ACTIVITY,
  }),
  admin({
    method: 'post',
    path: '/admin/console/api/activities/check',
    operationId: 'checkActivity',
    tag: 'console',
    summary: "The create form's check, by the schema `POST /admin/activities` parses with",
    description: 'A 400 lists every issue with its field (`issues`), beside the usual error fields.',
    body: createActivitySchema,
    responses: { 200: { description: '`{ok: true}`', schema: z.object({ ok: z.literal(true) }).strict() } },
    errors: [],
  }),
  {
    method: 'post',
    path: '/payments/callback',
    operationId: 'paymentCallback',
    tag: 'payment webhook',
    security: 'paymentSignature',
    summary: "The payment provider's webhook",
    description:
      'A repeat answers the same. A payment for a timed-out order is 409 `order_timed_out`, for an order paid by ' +
      'another payment 409 `conflict`; both record a refund. docs/operations.md#exposing-only-the-payment-webhook.',
    body: paymentCallbackSchema,
    responses: {
      200: {
        description: '`{orderNo, status:"paid"}`',
        schema: z.object({ orderNo: z.string(), status: z.literal('paid') }).strict(),
      },
    },
    errors: ['not_found', 'order_timed_out', 'conflict', ...BODY_READ],
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    tag: 'operations',
    security: 'metricsToken',
    summary: 'Redis and MySQL reachable',
    description: 'On its own METRICS_PORT listener when set; behind METRICS_TOKEN when set.',
    responses: {
      200: {
        description: '`{ok, redis, mysql}`',
        schema: z.object({ ok: z.boolean(), redis: z.boolean(), mysql: z.boolean() }).strict(),
      },
      503: {
        description: '`{ok:false, redis, mysql}`',
        schema: z.object({ ok: z.boolean(), redis: z.boolean(), mysql: z.boolean() }).strict(),
      },
    },
    errors: ['unauthenticated'],
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'operations',
    security: 'metricsToken',
    summary: 'Prometheus text format',
    responses: { 200: { description: 'the metrics', contentType: 'text/plain' } },
    errors: ['unauthenticated'],
  },
];

/**
 * Routes the origin registers that are files or a redirect, not API: the console's static shell and
 * the interactive reference (Swagger UI). The route check knows them by this list.
 */
export const ORIGIN_STATIC_ROUTES: readonly string[] = [
  'GET /admin/console',
  'GET /admin/console/',
  'GET /admin/console/:file{[a-z][a-z0-9.-]*\\.(?:js|css)}',
  'GET /admin/api-reference',
  'GET /admin/api-reference/',
  'GET /admin/api-reference/:file',
];

export const orderEventWebhook: WebhookDoc = {
  name: 'orderEvent',
  summary: 'An order change, POSTed to ORDER_EVENTS_URL',
  description:
    'Sent after the change commits, at least once, in order per order; a 2xx is delivered, anything else is ' +
    'retried with backoff and parked after ORDER_EVENTS_MAX_ATTEMPTS (docs/order-events.md). ' +
    `Verify \`${EVENT_SIGNATURE_HEADER}\` = \`v1=<hex HMAC-SHA256(ORDER_EVENTS_SECRET, ts + "\\n" + body)>\` ` +
    `with \`${EVENT_TIMESTAMP_HEADER}\` = ts (contract/order-events.ts \`verifyOrderEvent\`).`,
  body: orderEventBodySchema,
  headers: {
    [EVENT_TIMESTAMP_HEADER]: {
      schema: z.string().regex(/^\d{1,16}$/),
      required: true,
      description: 'Milliseconds since the epoch.',
    },
    [EVENT_SIGNATURE_HEADER]: {
      schema: z.string().regex(/^v1=[0-9a-f]{64}$/),
      required: true,
      description: 'The HMAC over ts and the body.',
    },
  },
  responses: {
    '2XX': { description: 'delivered' },
    default: { description: 'retried later (with backoff), parked after the last attempt' },
  },
};

const ADMIN_DESCRIPTION =
  "The operator's API on the origin (private network): `Authorization: Bearer <token>` — an operator's own " +
  'token from ADMIN_TOKENS, or the shared ADMIN_TOKEN. A change records the authenticated operator. Also the ' +
  "payment provider's webhook, the health routes, and (`webhooks`) the order events a downstream system " +
  'receives. Generated by `npm run openapi`; prose: docs/api.md, docs/operations.md.';

/** The origin that serves the document: Swagger UI's "Try it out" calls go back to it. */
const THIS_ORIGIN = { url: '/', description: 'the origin' };

const ADMIN_NAMED = {
  AdminActivity: adminActivitySchema,
  Reconciliation: reconciliationSchema,
  DeadLetter: deadLetterSchema,
  OrderEventView: orderEventViewSchema,
};

export function adminDocument() {
  return buildDocument({
    title: 'Flash-sale gateway: admin API (origin)',
    version: '1',
    description: ADMIN_DESCRIPTION,
    servers: [THIS_ORIGIN],
    routes: adminRoutes,
    named: ADMIN_NAMED,
    webhooks: [orderEventWebhook],
  });
}

/** What the origin serves at `/admin/openapi.json`: the admin document with the internal API's routes. */
export function originDocument() {
  return buildDocument({
    title: 'Flash-sale gateway: origin (admin, internal, webhooks)',
    version: '1',
    description: `${ADMIN_DESCRIPTION} The internal routes (tags \`origin\`, \`edge\`) are signed edge ↔ origin calls.`,
    servers: [THIS_ORIGIN],
    routes: [...adminRoutes, ...internalRoutes],
    operationServers: INTERNAL_SERVERS,
    named: { ...ADMIN_NAMED, ...INTERNAL_NAMED },
    webhooks: [orderEventWebhook],
  });
}
