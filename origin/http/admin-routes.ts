/** The admin API (`Authorization: Bearer $ADMIN_TOKEN`, DESIGN §9). */
import { Hono } from 'hono';
import { publicState, type ActivitySnapshot } from '../../contract/activity.js';
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

/**
 * Admin answers keep `state` = the switch (open / paused / stopped, DESIGN §9) and add `publicState`
 * = the phase buyers see (upcoming / open / sold_out / paused / ended), so nobody reads one as the other.
 */
function withPublicState<T extends object>(body: T, snapshot: ActivitySnapshot | null) {
  return snapshot ? { ...body, publicState: publicState(snapshot, Date.now()) } : body;
}

export function adminRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ token: ctx.config.ADMIN_TOKEN }));

  app.post('/activities', async (c) => {
    const input = createActivitySchema.parse(parseJson(c.get('rawBody')));
    const snapshot = await createActivity(ctx, input);
    return c.json(withPublicState(snapshot ?? {}, snapshot), 201);
  });

  app.get('/activities/:id', async (c) => {
    const snapshot = await ctx.snapshot(activityIdOf(c.req.param('id')));
    if (!snapshot) throw new ContractError('not_found', 'no such activity');
    return c.json(withPublicState(snapshot, snapshot));
  });

  app.post('/activities/:id/warmup', async (c) => {
    const activityId = activityIdOf(c.req.param('id'));
    const { loaded: _loaded, ...result } = await warmup(ctx, activityId);
    return c.json(withPublicState(result, await ctx.snapshot(activityId)));
  });

  app.patch('/activities/:id', async (c) => {
    const activityId = activityIdOf(c.req.param('id'));
    const { state } = patchActivitySchema.parse(parseJson(c.get('rawBody')));
    const snapshot = await setState(ctx, activityId, state);
    return c.json(withPublicState(snapshot ?? {}, snapshot));
  });

  app.get('/activities/:id/reconciliation', async (c) => {
    const rec = await reconcile(ctx, activityIdOf(c.req.param('id')));
    raiseMismatch(ctx, rec);
    return c.json(rec);
  });

  return app;
}
