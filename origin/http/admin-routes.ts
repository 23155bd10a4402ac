/** The admin API (`Authorization: Bearer $ADMIN_TOKEN`, DESIGN §9). */
import { Hono } from 'hono';
import { publicState, type ActivitySnapshot } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import { isId } from '../../contract/ids.js';
import { z } from 'zod';
import { setDenied } from '../access/deny-list.js';
import { changeActivity, createActivity, warmup } from '../activity/operations.js';
import { createActivitySchema, patchActivitySchema } from '../activity/store.js';
import { releaseUnits } from '../activity/tranches.js';
import { verifyWarmup } from '../activity/warmup-check.js';
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

function userIdOf(value: string): string {
  if (!isId(value)) throw new ContractError('bad_request', 'user id must be a decimal positive 64-bit integer');
  return value;
}

/**
 * Who made a change, for the log line every live change writes: the `x-admin-actor` header (an
 * operator's name or ticket; ADMIN_TOKEN is one shared secret and names nobody), else `admin`.
 */
const ACTOR = /^[A-Za-z0-9_.@:+-]{1,64}$/;
function actorOf(header: string | undefined): string {
  if (header === undefined || header === '') return 'admin';
  if (!ACTOR.test(header))
    throw new ContractError('bad_request', 'x-admin-actor must be 1-64 characters of [A-Za-z0-9_.@:+-]');
  return header;
}

const releaseSchema = z.object({ units: z.number().int().min(1).max(100_000_000) }).strict();

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

  app.get('/activities/:id/warmup', async (c) => {
    return c.json(await verifyWarmup(ctx, activityIdOf(c.req.param('id'))));
  });

  app.patch('/activities/:id', async (c) => {
    const activityId = activityIdOf(c.req.param('id'));
    const actor = actorOf(c.req.header('x-admin-actor'));
    const patch = patchActivitySchema.parse(parseJson(c.get('rawBody')));
    const snapshot = await changeActivity(ctx, activityId, patch, actor);
    return c.json(withPublicState(snapshot ?? {}, snapshot));
  });

  app.post('/activities/:id/releases', async (c) => {
    const activityId = activityIdOf(c.req.param('id'));
    const actor = actorOf(c.req.header('x-admin-actor'));
    const { units } = releaseSchema.parse(parseJson(c.get('rawBody')));
    return c.json(await releaseUnits(ctx, activityId, units, actor));
  });

  app.put('/deny/:userId', async (c) => {
    const userId = userIdOf(c.req.param('userId'));
    return c.json(await setDenied(ctx, userId, true, actorOf(c.req.header('x-admin-actor'))));
  });

  app.delete('/deny/:userId', async (c) => {
    const userId = userIdOf(c.req.param('userId'));
    return c.json(await setDenied(ctx, userId, false, actorOf(c.req.header('x-admin-actor'))));
  });

  app.get('/activities/:id/reconciliation', async (c) => {
    const rec = await reconcile(ctx, activityIdOf(c.req.param('id')));
    raiseMismatch(ctx, rec);
    return c.json(rec);
  });

  return app;
}
