/** The edge's Hono app: routes of DESIGN §3 and the internal API of §9, one error handler. */
import { Hono } from 'hono';
import type { EdgeContext, EdgeEnv } from './context.js';
import { notFound, onError } from './errors.js';
import { requestLog } from './middleware/request-log.js';
import { activityRoutes } from './routes/activities.js';
import { internalRoutes } from './routes/internal.js';
import { purchaseRoutes } from './routes/purchase.js';
import { reservationRoutes } from './routes/reservations.js';

export const app = new Hono<EdgeEnv>();

app.use(requestLog());
app.route('/api/activities', activityRoutes);
app.route('/api/activities', purchaseRoutes);
app.route('/api/reservations', reservationRoutes);
app.route('/internal', internalRoutes);

// The sale page. In production the asset server answers `/` and `/assets/*` before the Worker runs
// (edge/public/_headers sets their cache headers); these routes serve `/a/:activityId` and stand in
// wherever the Worker is reached directly (tests, a bare Miniflare), with the same headers.
const PAGE_CACHE = 'no-cache';
const VERSIONED_ASSET_CACHE = 'public, max-age=31536000, immutable';

async function fromAssets(c: EdgeContext, path: string, cacheControl: string): Promise<Response> {
  const asset = await c.env.ASSETS.fetch(new URL(path, c.req.url));
  if (asset.status !== 200) return asset.status === 404 ? notFound(c) : asset;
  const res = new Response(asset.body, asset);
  res.headers.set('Cache-Control', cacheControl);
  return res;
}

app.get('/', (c) => fromAssets(c, '/', PAGE_CACHE));
app.get('/a/:activityId', (c) => fromAssets(c, '/', PAGE_CACHE));
app.get('/assets/*', (c) => fromAssets(c, c.req.path, VERSIONED_ASSET_CACHE));

app.onError(onError);
app.notFound(notFound);
