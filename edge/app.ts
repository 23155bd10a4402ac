/** The edge's Hono app: routes of docs/design.md §3 and the internal API of §9, one error handler. */
import { Hono } from 'hono';
import type { EdgeContext, EdgeEnv } from './context.js';
import { notFound, onError } from './errors.js';
import { bodyLimit } from './middleware/body-limit.js';
import { requestLog } from './middleware/request-log.js';
import { activityRoutes } from './routes/activities.js';
import { drawRoutes } from './routes/draw.js';
import { internalRoutes } from './routes/internal.js';
import { purchaseRoutes } from './routes/purchase.js';
import { entryRoutes, reservationRoutes } from './routes/reservations.js';
import { waitingRoutes } from './routes/waiting.js';
import { settingsOf } from './settings.js';

export const app = new Hono<EdgeEnv>();

app.use(
  requestLog({
    sample: (env) => settingsOf(env).refusalLogSample,
    figuresFlushMs: (env) => settingsOf(env).figuresFlushMs,
  }),
);
// Before any route, so before every signature, JWT or ticket check: 413 / bounded read (docs/design.md §10).
app.use(
  bodyLimit({
    limits(env, _method, path) {
      const s = settingsOf(env);
      return {
        maxBytes: path.startsWith('/internal/') ? s.maxInternalBodyBytes : s.maxBodyBytes,
        timeoutMs: s.bodyReadTimeoutMs,
        drainMs: s.bodyDrainMs,
      };
    },
  }),
);
app.route('/api/activities', activityRoutes);
app.route('/api/activities', purchaseRoutes);
app.route('/api/activities', drawRoutes);
app.route('/api/activities', entryRoutes);
app.route('/api/activities', waitingRoutes);
app.route('/api/reservations', reservationRoutes);
app.route('/internal', internalRoutes);

// The sale page. In production the asset server answers `/` and `/assets/*` before the Worker runs
// (edge/public/_headers sets the same headers there); these routes serve `/a/:activityId` and stand
// in wherever the Worker is reached directly (tests, a bare Miniflare), with the same headers.
const PAGE_CACHE = 'no-cache';
const VERSIONED_ASSET_CACHE = 'public, max-age=31536000, immutable';
const FAVICON_CACHE = 'public, max-age=86400';

/**
 * The page's security headers (issue 8.6), one list for the Worker and edge/public/_headers (a test
 * checks they agree). A strict CSP: scripts and styles only from this origin, no inline script, no
 * framing; no Referer ever leaves the page, so the `?token=` in its address cannot leak to a
 * subresource or the API, even before the script strips it. Images: this origin and any https host,
 * because a product's `imageUrl` (admin-set, https or site-relative) usually lives on a CDN; an image
 * runs no code, and with no-referrer it learns nothing about the buyer's page.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' https:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

async function fromAssets(c: EdgeContext, path: string, cacheControl: string): Promise<Response> {
  const asset = await c.env.ASSETS.fetch(new URL(path, c.req.url));
  if (asset.status !== 200) return asset.status === 404 ? notFound(c) : asset;
  const res = new Response(asset.body, asset);
  res.headers.set('Cache-Control', cacheControl);
  for (const [name, value] of Object.entries(PAGE_SECURITY_HEADERS)) res.headers.set(name, value);
  return res;
}

app.get('/', (c) => fromAssets(c, '/', PAGE_CACHE));
app.get('/a/:activityId', (c) => fromAssets(c, '/', PAGE_CACHE));
app.get('/assets/*', (c) => fromAssets(c, c.req.path, VERSIONED_ASSET_CACHE));
// Browsers ask for it on every page load; without it each load logs a 404.
app.get('/favicon.ico', (c) => fromAssets(c, '/favicon.ico', FAVICON_CACHE));

app.onError(onError);
app.notFound(notFound);
