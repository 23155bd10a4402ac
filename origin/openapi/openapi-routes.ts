/**
 * The origin's API reference: `GET /admin/openapi.json` (the admin token, as the admin API) answers the
 * admin document with the internal API's routes and the webhooks (origin/openapi/admin.ts), built on
 * the first ask and kept; `/admin/api-reference/` is Swagger UI (swagger-ui-dist) for operators, its
 * files served from this origin under the console's strict CSP: no CDN, no inline script — the page
 * starts from our own initializer (reference/api-reference.js), which fetches the document with the
 * token the console keeps in this tab. The console links to it. Registered before the other /admin
 * routes (origin/app.ts), so the page's files answer before their token check.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { CONSOLE_SECURITY_HEADERS } from '../console/console-routes.js';
import type { OriginConfig } from '../platform/config.js';
import { adminToken } from '../platform/http/middleware.js';
import type { OriginEnv } from '../platform/http/types.js';
import { projectPath } from '../platform/paths.js';
import { originDocument } from './admin.js';

/**
 * The console's headers, with one addition: images from `data:` URLs, which swagger-ui.css uses for
 * its icons (an image runs no code).
 */
const REFERENCE_SECURITY_HEADERS: Record<string, string> = {
  ...CONSOLE_SECURITY_HEADERS,
  'Content-Security-Policy': CONSOLE_SECURITY_HEADERS['Content-Security-Policy']!.replace(
    "img-src 'self'",
    "img-src 'self' data:",
  ),
};

const swaggerDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The page's files: name → where it is and its type. Only these are served. */
const FILES: Record<string, [() => string, string]> = {
  'index.html': [() => projectPath('origin', 'openapi', 'reference', 'index.html'), 'text/html; charset=utf-8'],
  'api-reference.js': [
    () => projectPath('origin', 'openapi', 'reference', 'api-reference.js'),
    'text/javascript; charset=utf-8',
  ],
  'swagger-ui-bundle.js': [() => join(swaggerDir(), 'swagger-ui-bundle.js'), 'text/javascript; charset=utf-8'],
  'swagger-ui.css': [() => join(swaggerDir(), 'swagger-ui.css'), 'text/css; charset=utf-8'],
};

export function openApiRoutes(deps: { config: Pick<OriginConfig, 'ADMIN_OPERATORS'> }) {
  const app = new Hono<OriginEnv>();
  let document: string | undefined;
  // Read on the first ask (the bundle is over a megabyte; most origins never serve it).
  const loaded = new Map<string, Uint8Array>();
  const serve = (name: string) => {
    const file = FILES[name];
    if (!file) throw new ContractError('not_found', 'no such file');
    let bytes = loaded.get(name);
    if (!bytes) {
      bytes = new Uint8Array(readFileSync(file[0]()));
      loaded.set(name, bytes);
    }
    return new Response(bytes, { headers: { 'content-type': file[1], ...REFERENCE_SECURITY_HEADERS } });
  };

  app.get('/openapi.json', adminToken({ operators: deps.config.ADMIN_OPERATORS }), (c) => {
    document ??= JSON.stringify(originDocument());
    c.header('Cache-Control', 'no-store');
    c.header('Content-Type', 'application/json');
    return c.body(document);
  });
  app.get('/api-reference', (c) => c.redirect('/admin/api-reference/', 301));
  app.get('/api-reference/', () => serve('index.html'));
  app.get('/api-reference/:file', (c) => serve(c.req.param('file')));
  return app;
}
