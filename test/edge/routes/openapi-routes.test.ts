/**
 * Every route the edge's Hono app registers is in the public or the internal OpenAPI document (or is
 * one of the sale page's files), and every route those documents give the edge is served. The
 * origin's side: test/origin/openapi/openapi-documents.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { internalRoutes } from '../../../contract/openapi/internal.js';
import { PUBLIC_STATIC_ROUTES, publicRoutes } from '../../../contract/openapi/public.js';
import { routeCoverage } from '../../../contract/openapi/registry.js';
import { app } from '../../../edge/app.js';

describe('edge routes and the OpenAPI documents', () => {
  it('every route of the edge app is documented, and every documented edge route is served', () => {
    const documented = [...publicRoutes, ...internalRoutes.filter((r) => r.server === 'edge')];
    expect(routeCoverage(app.routes, documented, PUBLIC_STATIC_ROUTES)).toEqual({ undocumented: [], missing: [] });
  });
});
