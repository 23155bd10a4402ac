/** The edge's Hono app: routes of DESIGN §3 and the internal API of §9, one error handler. */
import { Hono } from 'hono';
import type { EdgeEnv } from './context.js';
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

// The sale page for one activity: the same index.html the asset server gives for `/`.
app.get('/a/:activityId', async (c) => {
  const page = await c.env.ASSETS.fetch(new URL('/', c.req.url));
  const res = new Response(page.body, page);
  res.headers.set('Cache-Control', 'no-cache');
  return res;
});

app.onError(onError);
app.notFound(notFound);
