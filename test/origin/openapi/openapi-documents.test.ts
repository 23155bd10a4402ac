/**
 * The OpenAPI documents (docs/openapi/*.json) and what is generated with them: they are valid OpenAPI
 * 3.1, the repo holds exactly what `npm run openapi` generates (documents, the public API's types,
 * the route tables of docs/api.md and README.md), every route the origin's Hono app registers is
 * documented and every documented origin route is served (the edge's: test/edge/routes/openapi-routes.test.ts),
 * and the conformance check used by the e2e samples refuses what the documents do not allow.
 * No Redis, MySQL or workerd: the origin app is built over stand-in parts, never started.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { internalDocument, internalRoutes } from '../../../contract/openapi/internal.js';
import { publicDocument, publicRoutes } from '../../../contract/openapi/public.js';
import { routeCoverage } from '../../../contract/openapi/registry.js';
import { createApp } from '../../../origin/app.js';
import type { OriginParts } from '../../../origin/parts.js';
import { adminDocument, adminRoutes, originDocument, ORIGIN_STATIC_ROUTES } from '../../../origin/openapi/admin.js';
import { generatedFiles, ROOT } from '../../../scripts/openapi-files.js';
import { conformance } from '../../helpers/openapi-conformance.js';
import { testConfig } from '../../helpers/origin.js';

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the OpenAPI documents', () => {
  const documents = {
    public: publicDocument(),
    internal: internalDocument(),
    admin: adminDocument(),
    'origin (served at /admin/openapi.json)': originDocument(),
  };
  for (const [name, document] of Object.entries(documents)) {
    it(`${name}: valid OpenAPI 3.1 (@readme/openapi-parser)`, async () => {
      // The parser dereferences in place: give it a copy.
      const result = await validate(structuredClone(document) as never);
      expect(result.valid ? '' : compileErrors(result)).toBe('');
    });
  }

  it('the repo holds exactly what `npm run openapi` generates (documents, types, tables of docs/api.md and README.md)', async () => {
    const stale: string[] = [];
    for (const [path, content] of await generatedFiles()) {
      let current: string | undefined;
      try {
        current = read(path);
      } catch {
        current = undefined;
      }
      if (current !== content) stale.push(path);
    }
    expect(stale, 'run npm run openapi and commit the result').toEqual([]);
  });
});

describe('routes: what the origin serves is what its documents say', () => {
  /** Any part the app asks for: a stand-in that answers anything (routes are registered, never run). */
  const anything: unknown = new Proxy(function () {}, {
    get: (_t, key) => (key === 'then' ? undefined : anything),
    apply: () => anything,
    construct: () => anything as object,
  });
  const config = testConfig('mysql://root@127.0.0.1:3306/unused', {});
  const parts = new Proxy({ config } as unknown as OriginParts, {
    get: (target, key) => (key in target ? target[key as keyof OriginParts] : anything),
  });

  it('every route of the origin app is in the admin or internal document, and every one documented is served', () => {
    const app = createApp(parts);
    const documented = [...adminRoutes, ...internalRoutes.filter((r) => r.server === 'origin')];
    expect(routeCoverage(app.routes, documented, ORIGIN_STATIC_ROUTES)).toEqual({ undocumented: [], missing: [] });
  });

  it('a route added without a document entry is found', () => {
    const app = createApp(parts);
    app.get('/admin/activities/:id/planted', (c) => c.json({}));
    const documented = [...adminRoutes, ...internalRoutes.filter((r) => r.server === 'origin')];
    expect(routeCoverage(app.routes, documented, ORIGIN_STATIC_ROUTES).undocumented).toEqual([
      'GET /admin/activities/:id/planted',
    ]);
  });
});

describe('POST /internal/reserve: the document and docs/api.md say what the code does', () => {
  const reserve = (internalDocument() as any).paths['/internal/reserve'].post;
  const requestSchema = (internalDocument() as any).components.schemas.ReserveRequest;

  it('the body has the claims the edge forwards; 403 not_eligible / denied are documented', () => {
    expect(Object.keys(requestSchema.properties)).toEqual(
      expect.arrayContaining(['activityId', 'userId', 'quantity', 'requestId', 'traceId', 'claims']),
    );
    expect(reserve.responses['403'].content['application/json'].schema.allOf[1].properties.error.enum).toEqual(
      expect.arrayContaining(['not_eligible', 'denied']),
    );
  });

  it("docs/api.md's row says the same", () => {
    const row = read('docs/api.md')
      .split('\n')
      .find((line) => line.startsWith('| `POST /internal/reserve`'));
    expect(row).toContain('claims?');
    expect(row).toContain('403 `not_eligible` / `denied`');
  });
});

describe('the conformance check of the e2e samples', () => {
  const assertConforms = conformance(publicRoutes, 'docs/openapi/public.json');
  const headers = (h: Record<string, string> = {}) => new Headers(h);
  const queued = {
    status: 'queued',
    reservationId: '1-00000000000000000000000000000000',
    pollUrl: '/api/reservations/1-0',
  };

  it('accepts a documented answer', () => {
    assertConforms('post', '/api/activities/:id/purchase', { status: 202, body: queued, headers: headers() });
    const limited = { error: 'rate_limited', message: 'slow down', traceId: 'ab' };
    assertConforms('post', '/api/activities/:id/purchase', {
      status: 429,
      body: limited,
      headers: headers({ 'retry-after': '1' }),
    });
  });

  it('refuses an undocumented field, code, status or a 429 without Retry-After', () => {
    const purchase = '/api/activities/:id/purchase';
    expect(() =>
      assertConforms('post', purchase, { status: 202, body: { ...queued, extra: 1 }, headers: headers() }),
    ).toThrow(/documented schema/);
    expect(() =>
      assertConforms('post', purchase, {
        status: 409,
        body: { error: 'order_timed_out', message: '', traceId: '' },
        headers: headers(),
      }),
    ).toThrow(/documented schema/);
    expect(() => assertConforms('post', purchase, { status: 418, body: {}, headers: headers() })).toThrow(
      /no such status/,
    );
    expect(() =>
      assertConforms('post', purchase, {
        status: 429,
        body: { error: 'rate_limited', message: '', traceId: '' },
        headers: headers(),
      }),
    ).toThrow(/Retry-After/);
  });
});
