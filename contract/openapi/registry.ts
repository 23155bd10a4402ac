/**
 * The route registry behind the OpenAPI documents (docs/openapi/*.json, docs/api.md's tables): each
 * route's method, path, schemas, statuses and contract error codes, and the one function that turns
 * a list of them into an OpenAPI 3.1 document with zod's own JSON Schema output (`z.toJSONSchema`).
 * The schemas are the ones the routes validate with; nothing here runs on a request's path — the
 * documents are built by `npm run openapi` and, at the origin, once on the first ask.
 */
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { EDGE_SIGNATURE_HEADER, EDGE_TIMESTAMP_HEADER } from '../signing.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call: a user's JWT, an operator's token, the edge ↔ origin signature, the payment provider's signature. */
export type Security = 'user' | 'admin' | 'edgeSignature' | 'paymentSignature' | 'metricsToken' | 'none';

/** A path, query or header parameter. */
export interface Param {
  schema: z.ZodType;
  description: string;
  required?: boolean;
}

/** One success status. `schema` absent: no JSON body (a page, a text). */
export interface Success {
  /** Short, Markdown: also the "answer" cell of docs/api.md's tables. */
  description: string;
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
  /** Response headers worth naming (Cache-Control is left out). */
  headers?: ResponseHeader[];
}

export type ResponseHeader = 'Retry-After' | 'Set-Cookie';

export interface RouteDoc {
  method: Method;
  /** As the Hono app registers it: `/api/activities/:id/purchase`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  security: Security;
  /** Who answers, where a document covers two servers (the internal API: edge and origin). */
  server?: 'edge' | 'origin';
  /** Path parameters other than the shared ones (PATH_PARAMS). */
  params?: Record<string, Param>;
  query?: Record<string, Param>;
  /** Request headers besides the security scheme's. */
  headers?: Record<string, Param>;
  body?: z.ZodType;
  responses: Partial<Record<number, Success>>;
  /** The contract codes this route answers (contract/errors.ts gives each its status). */
  errors: readonly ErrorCode[];
}

/** A webhook a downstream system receives (`webhooks` in the admin document). */
export interface WebhookDoc {
  name: string;
  summary: string;
  description: string;
  body: z.ZodType;
  headers: Record<string, Param>;
  responses: Record<string, { description: string }>;
}

/** Path parameters that mean the same on every route. */
const PATH_PARAMS: Record<string, Param> = {
  id: {
    schema: z.string().regex(/^[1-9][0-9]{0,19}$/),
    description: 'Activity id: a decimal positive 64-bit integer.',
  },
  reservationId: {
    schema: z.string().regex(/^[1-9][0-9]{0,19}-([0-9a-f]{32}|entry-[1-9][0-9]{0,19})$/),
    description: 'Reservation id `<activityId>-<32 hex>` (or a lottery entry id `<activityId>-entry-<userId>`).',
  },
  userId: {
    schema: z.string().regex(/^[1-9][0-9]{0,19}$/),
    description: 'User id: a decimal positive 64-bit integer.',
  },
};

const RESPONSE_HEADERS: Record<ResponseHeader, object> = {
  'Retry-After': {
    description: 'Seconds to wait before asking again.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Set-Cookie': {
    description:
      'The holder receipt `sk_receipt_<activityId>` (HttpOnly): the reservation id and an HMAC over activity, user and reservation.',
    schema: { type: 'string' },
  },
};

const SECURITY_SCHEMES = {
  userJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The buyer: a JWT HS256 signed with USER_TOKEN_SECRET, `sub` = user id, `exp` required.',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: "An operator's token from ADMIN_TOKENS, or the shared ADMIN_TOKEN.",
  },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set.' },
  edgeSignature: {
    type: 'apiKey',
    in: 'header',
    name: EDGE_SIGNATURE_HEADER,
    description:
      '`v1=<hex HMAC-SHA256(EDGE_ORIGIN_SECRET, ts + "\\n" + METHOD + "\\n" + path-with-query + "\\n" + hex SHA-256(body))>`, ' +
      `with \`${EDGE_TIMESTAMP_HEADER}\` = ts; older than 5 s, altered or missing: 401.`,
  },
  edgeTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: EDGE_TIMESTAMP_HEADER,
    description: 'Milliseconds since the epoch, covered by the signature.',
  },
  paymentSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'x-payment-signature',
    description: '`v1=<hex HMAC-SHA256(PAYMENT_WEBHOOK_SECRET, ts + "\\n" + body)>` with `x-payment-timestamp` = ts.',
  },
  paymentTimestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'x-payment-timestamp',
    description: 'Milliseconds since the epoch; older than PAYMENT_SIGNATURE_MAX_AGE_MS: 401.',
  },
} as const;

const SECURITY: Record<Security, { schemes: (keyof typeof SECURITY_SCHEMES)[]; codes: ErrorCode[] }> = {
  user: { schemes: ['userJwt'], codes: ['unauthenticated'] },
  admin: { schemes: ['adminToken'], codes: ['unauthenticated'] },
  metricsToken: { schemes: ['metricsToken'], codes: [] },
  edgeSignature: { schemes: ['edgeSignature', 'edgeTimestamp'], codes: ['unauthenticated'] },
  paymentSignature: { schemes: ['paymentSignature', 'paymentTimestamp'], codes: ['unauthenticated'] },
  none: { schemes: [], codes: [] },
};

/** The error body `{error, message, traceId}` of a response that answers `codes`. */
export function errorSchema(codes: readonly ErrorCode[]) {
  return z
    .object({
      error: z.enum(codes as [ErrorCode, ...ErrorCode[]]).describe('The contract error code (contract/errors.ts).'),
      message: z.string().describe('Human text; may change.'),
      traceId: z.string().describe('The W3C trace id of the request.'),
    })
    .strict();
}

/**
 * Every code a route can answer, its own and the ones its security, body and handler add: 401 when
 * it is authenticated, 400 / 413 when it takes a body, 500 everywhere.
 */
function codesOf(route: Pick<RouteDoc, 'security' | 'body' | 'errors'>): ErrorCode[] {
  const codes = new Set<ErrorCode>([...SECURITY[route.security].codes, ...route.errors]);
  if (route.body) {
    codes.add('bad_request');
    codes.add('payload_too_large');
  }
  codes.add('internal');
  return [...codes];
}

/** The codes a route answers, by status (contract/errors.ts). */
export function errorsByStatus(route: Pick<RouteDoc, 'security' | 'body' | 'errors'>): Map<number, ErrorCode[]> {
  const out = new Map<number, ErrorCode[]>();
  for (const code of codesOf(route)) {
    const status = ERROR_STATUS[code];
    out.set(status, [...(out.get(status) ?? []), code]);
  }
  return new Map([...out].sort(([a], [b]) => a - b));
}

/** All of the scheme's headers together; the metrics token only when METRICS_TOKEN is set, so it is optional. */
function securityRequirement(security: Security): Json[] {
  const schemes = SECURITY[security].schemes;
  if (schemes.length === 0) return [];
  const all = Object.fromEntries(schemes.map((s) => [s, []]));
  return security === 'metricsToken' ? [all, {}] : [all];
}

/** `/api/activities/:id` → `/api/activities/{id}` */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function pathParamNames(honoPath: string): string[] {
  return [...honoPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

const RETRY_AFTER_STATUSES = new Set([425, 429, 503]);

export interface DocumentInput {
  title: string;
  description: string;
  version: string;
  servers: { url: string; description: string }[];
  routes: readonly RouteDoc[];
  /** Response schemas worth a name in components (the rest get `<OperationId><status>`). */
  named: Record<string, z.ZodType>;
  webhooks?: readonly WebhookDoc[];
  /** Per-operation servers where a document covers two (RouteDoc.server). */
  operationServers?: Partial<Record<'edge' | 'origin', { url: string; description: string }>>;
}

type Json = Record<string, unknown>;

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

function parameter(name: string, where: 'path' | 'query' | 'header', p: Param): Json {
  return {
    name,
    in: where,
    required: where === 'path' ? true : (p.required ?? false),
    description: p.description,
    schema: jsonSchemaOf(p.schema, 'input'),
  };
}

function responseHeaders(names: readonly ResponseHeader[]): Json | undefined {
  if (names.length === 0) return undefined;
  return Object.fromEntries(names.map((n) => [n, RESPONSE_HEADERS[n]]));
}

/** The OpenAPI 3.1 document of `input.routes`. */
export function buildDocument(input: DocumentInput): Json {
  const outputs = z.registry<{ id: string }>();
  const inputs = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(input.named)) outputs.add(schema, { id: name });
  for (const route of input.routes) {
    if (route.body && !inputs.has(route.body)) inputs.add(route.body, { id: `${pascal(route.operationId)}Request` });
    for (const [status, success] of Object.entries(route.responses)) {
      if (success?.schema && !outputs.has(success.schema))
        outputs.add(success.schema, { id: `${pascal(route.operationId)}${status}` });
    }
  }
  for (const hook of input.webhooks ?? []) if (!inputs.has(hook.body)) inputs.add(hook.body, { id: pascal(hook.name) });

  const uri = (id: string) => `#/components/schemas/${id}`;
  const schemas: Record<string, Json> = {};
  for (const [registry, io] of [
    [outputs, 'output'],
    [inputs, 'input'],
  ] as const) {
    const out = z.toJSONSchema(registry, { io, uri, unrepresentable: 'any' }) as { schemas: Record<string, Json> };
    for (const [id, { $schema: _s, $id: _i, ...schema }] of Object.entries(out.schemas)) {
      if (schemas[id]) throw new Error(`OpenAPI: two schemas named ${id}`);
      schemas[id] = schema;
    }
  }
  schemas.Error = jsonSchemaOf(errorSchema(Object.keys(ERROR_STATUS) as ErrorCode[]), 'output');
  const ref = (registry: typeof outputs, schema: z.ZodType) => ({ $ref: uri(registry.get(schema)!.id) });

  const paths: Record<string, Record<string, Json>> = {};
  const usedSchemes = new Set<string>();
  for (const route of input.routes) {
    const security = SECURITY[route.security].schemes;
    security.forEach((s) => usedSchemes.add(s));
    const parameters = [
      ...pathParamNames(route.path).map((name) => {
        const p = route.params?.[name] ?? PATH_PARAMS[name];
        if (!p) throw new Error(`OpenAPI: ${route.method} ${route.path}: path parameter ${name} is not described`);
        return parameter(name, 'path', p);
      }),
      ...Object.entries(route.query ?? {}).map(([name, p]) => parameter(name, 'query', p)),
      ...Object.entries(route.headers ?? {}).map(([name, p]) => parameter(name, 'header', p)),
    ];
    const responses: Record<string, Json> = {};
    for (const [status, success] of Object.entries(route.responses)) {
      if (!success) continue;
      responses[status] = {
        description: success.description,
        ...(responseHeaders(success.headers ?? []) && { headers: responseHeaders(success.headers ?? []) }),
        ...(success.schema
          ? { content: { [success.contentType ?? 'application/json']: { schema: ref(outputs, success.schema) } } }
          : success.contentType
            ? { content: { [success.contentType]: { schema: { type: 'string' } } } }
            : {}),
      };
    }
    for (const [status, codes] of errorsByStatus(route)) {
      responses[String(status)] = {
        description: codes.map((c) => `\`${c}\``).join(', '),
        // A 429 always says when to come back; a 425 or 503 when it knows.
        ...(RETRY_AFTER_STATUSES.has(status) && {
          headers: { 'Retry-After': { ...RESPONSE_HEADERS['Retry-After'], required: status === 429 } },
        }),
        content: {
          'application/json': {
            schema: {
              allOf: [
                { $ref: uri('Error') },
                { type: 'object', properties: { error: { type: 'string', enum: codes } } },
              ],
            },
          },
        },
      };
    }
    const server = route.server && input.operationServers?.[route.server];
    const key = openApiPath(route.path);
    paths[key] ??= {};
    if (paths[key]![route.method]) throw new Error(`OpenAPI: ${route.method} ${route.path} is registered twice`);
    paths[key]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description && { description: route.description }),
      tags: [route.tag],
      ...(server && { servers: [server] }),
      security: securityRequirement(route.security),
      ...(parameters.length > 0 && { parameters }),
      ...(route.body && {
        requestBody: { required: true, content: { 'application/json': { schema: ref(inputs, route.body) } } },
      }),
      responses,
    };
  }

  const webhooks: Record<string, Json> = {};
  for (const hook of input.webhooks ?? []) {
    webhooks[hook.name] = {
      post: {
        operationId: hook.name,
        summary: hook.summary,
        description: hook.description,
        parameters: Object.entries(hook.headers).map(([name, p]) => parameter(name, 'header', p)),
        requestBody: { required: true, content: { 'application/json': { schema: ref(inputs, hook.body) } } },
        responses: hook.responses,
      },
    };
  }

  const tags = [...new Set(input.routes.map((r) => r.tag))].map((name) => ({ name }));
  return {
    openapi: '3.1.1',
    info: { title: input.title, version: input.version, description: input.description },
    servers: input.servers,
    tags,
    paths,
    ...(input.webhooks && { webhooks }),
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => usedSchemes.has(name))),
    },
  };
}

/**
 * The routes an app registers (Hono's `app.routes`, without middleware, which Hono lists under the
 * method ALL) against the registry's routes and the app's file routes: `undocumented` are served but
 * in no document, `missing` are documented but not served.
 */
export function routeCoverage(
  registered: readonly { method: string; path: string }[],
  documented: readonly Pick<RouteDoc, 'method' | 'path'>[],
  files: readonly string[],
): { undocumented: string[]; missing: string[] } {
  const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;
  const served = new Set(registered.filter((r) => r.method !== 'ALL').map((r) => key(r.method, r.path)));
  const known = new Set([...documented.map((r) => key(r.method, r.path)), ...files]);
  return {
    undocumented: [...served].filter((k) => !known.has(k)).sort(),
    missing: [...known].filter((k) => !served.has(k)).sort(),
  };
}
