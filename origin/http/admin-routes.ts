/** The admin API (`Authorization: Bearer $ADMIN_TOKEN`, DESIGN §9). */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { isId } from '../../contract/ids.js';
import { createActivity, setState, warmup } from '../activity/operations.js';
import { createActivitySchema, patchActivitySchema } from '../activity/store.js';
import type { OriginContext } from '../context.js';
import { raiseMismatch, reconcile } from '../reconcile/reconcile.js';
import { adminToken, parseJson } from './middleware.js';
import type { OriginEnv } from './types.js';

function activityIdOf(value: string): string {
  if (!isId(value)) throw new ContractError('bad_request', 'activity id must be a decimal positive 64-bit integer');
  return value;
}

export function adminRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ token: ctx.config.ADMIN_TOKEN }));

  app.post('/activities', async (c) => {
    const input = createActivitySchema.parse(parseJson(c.get('rawBody')));
    return c.json(await createActivity(ctx, input), 201);
  });

  app.get('/activities/:id', async (c) => {
    const snapshot = await ctx.snapshot(activityIdOf(c.req.param('id')));
    if (!snapshot) throw new ContractError('not_found', 'no such activity');
    return c.json(snapshot);
  });

  app.post('/activities/:id/warmup', async (c) => {
    const { loaded: _loaded, ...result } = await warmup(ctx, activityIdOf(c.req.param('id')));
    return c.json(result);
  });

  app.patch('/activities/:id', async (c) => {
    const activityId = activityIdOf(c.req.param('id'));
    const { state } = patchActivitySchema.parse(parseJson(c.get('rawBody')));
    return c.json(await setState(ctx, activityId, state));
  });

  app.get('/activities/:id/reconciliation', async (c) => {
    const rec = await reconcile(ctx, activityIdOf(c.req.param('id')));
    raiseMismatch(ctx, rec);
    return c.json(rec);
  });

  return app;
}
