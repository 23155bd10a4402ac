/** The admin API (`Authorization: Bearer $ADMIN_TOKEN` or an operator's token of ADMIN_TOKENS, docs/design.md §9). */
import { Hono, type MiddlewareHandler } from 'hono';
import { publicState, type ActivitySnapshot } from '../../contract/activity.js';
import { ContractError } from '../../contract/errors.js';
import { z } from 'zod';
import { setDenied, type DenyListDeps } from '../access/deny-list.js';
import { changeActivity, createActivity, warmup, type ActivityOperationsDeps } from './operations.js';
import { createActivitySchema, patchActivitySchema } from '../sale/sale-schemas.js';
import { releaseUnits, type TrancheDeps } from '../sale/tranches.js';
import { verifyWarmup, type WarmupCheckDeps } from './warmup-check.js';
import { raiseMismatch, reconcile, type ReconcileDeps } from '../recovery/reconcile.js';
import type { OriginConfig } from '../platform/config.js';
import { adminToken } from '../platform/http/middleware.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, jsonBody } from '../platform/http/validate.js';

/**
 * Admin answers keep `state` = the switch (open / paused / stopped, docs/design.md §9) and add `publicState`
 * = the phase buyers see (upcoming / open / sold_out / paused / ended), so nobody reads one as the other.
 */
function withPublicState<T extends object>(body: T, snapshot: ActivitySnapshot | null) {
  return snapshot ? { ...body, publicState: publicState(snapshot, Date.now()) } : body;
}

/**
 * Who made a change, for the actor columns and the log line every live change writes: the operator
 * whose token authenticated the request (adminToken), never what the caller writes. The
 * `x-admin-actor` header (a name or a ticket) is still accepted and checked, but it is unverified:
 * it goes on a log line of its own as `claimedActor` beside the authenticated actor, and nowhere
 * else. With the shared ADMIN_TOKEN the actor is `admin`; per-operator tokens (ADMIN_TOKENS) name
 * the person.
 */
const CLAIMED_ACTOR = /^[A-Za-z0-9_.@:+-]{1,64}$/;

/** The actor, checked before the body (as the id is): `c.req.valid('header').actor`. */
function adminActor(): MiddlewareHandler<OriginEnv, string, { out: { header: { actor: string } } }> {
  return async function adminActor(c, next) {
    const actor = c.get('operator');
    const claimed = c.req.header('x-admin-actor');
    if (claimed !== undefined && claimed !== '') {
      if (!CLAIMED_ACTOR.test(claimed))
        throw new ContractError('bad_request', 'x-admin-actor must be 1-64 characters of [A-Za-z0-9_.@:+-]');
      c.get('log').info(
        { actor, claimedActor: claimed, method: c.req.method, path: c.req.path },
        "admin change: x-admin-actor is unverified, the actor is the token's operator",
      );
    }
    c.req.addValidatedData('header', { actor });
    await next();
  };
}

/**
 * `?acceptReplicaRisk=true` on a warm-up or an open: the operator lets the sale open although one
 * Redis failover would stall a bucket (sale/replica-layout.ts). Absent or `false`: no; else 400.
 */
function acceptReplicaRisk(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ContractError('bad_request', 'acceptReplicaRisk must be true or false');
}

/** `POST /admin/activities/:id/releases`: units to put on sale from those held back. */
export const releaseSchema = z.object({ units: z.number().int().min(1).max(100_000_000) }).strict();

/**
 * What the admin routes hand on: each route's service (operations, tranches, warm-up check, deny
 * list, reconciliation with its alert), and the operators whose tokens open them.
 */
export type AdminRouteDeps = ActivityOperationsDeps &
  TrancheDeps &
  WarmupCheckDeps &
  DenyListDeps &
  ReconcileDeps & {
    /** The reconciliation's mismatch gauge and alert line (raiseMismatch). */
    log: Logger;
    metrics: Metrics;
    config: Pick<OriginConfig, 'ADMIN_OPERATORS'>;
  };

export function adminRoutes(deps: AdminRouteDeps) {
  const app = new Hono<OriginEnv>();
  app.use('*', adminToken({ operators: deps.config.ADMIN_OPERATORS }));

  app.post('/activities', jsonBody(createActivitySchema), async (c) => {
    const snapshot = await createActivity(deps, c.req.valid('json'));
    return c.json(withPublicState(snapshot ?? {}, snapshot), 201);
  });

  app.get('/activities/:id', idParam(), async (c) => {
    const snapshot = await deps.publisher.snapshot(c.req.valid('param').id);
    if (!snapshot) throw new ContractError('not_found', 'no such activity');
    return c.json(withPublicState(snapshot, snapshot));
  });

  app.post('/activities/:id/warmup', idParam(), adminActor(), async (c) => {
    const activityId = c.req.valid('param').id;
    const override = {
      acceptReplicaRisk: acceptReplicaRisk(c.req.query('acceptReplicaRisk')),
      actor: c.req.valid('header').actor,
    };
    const { loaded: _loaded, ...result } = await warmup(deps, activityId, override);
    return c.json(withPublicState(result, await deps.publisher.snapshot(activityId)));
  });

  app.get('/activities/:id/warmup', idParam(), async (c) => {
    return c.json(await verifyWarmup(deps, c.req.valid('param').id));
  });

  app.patch('/activities/:id', idParam(), adminActor(), jsonBody(patchActivitySchema), async (c) => {
    const activityId = c.req.valid('param').id;
    const snapshot = await changeActivity(deps, activityId, c.req.valid('json'), c.req.valid('header').actor, {
      acceptReplicaRisk: acceptReplicaRisk(c.req.query('acceptReplicaRisk')),
    });
    return c.json(withPublicState(snapshot ?? {}, snapshot));
  });

  app.post('/activities/:id/releases', idParam(), adminActor(), jsonBody(releaseSchema), async (c) => {
    const activityId = c.req.valid('param').id;
    return c.json(await releaseUnits(deps, activityId, c.req.valid('json').units, c.req.valid('header').actor));
  });

  app.put('/deny/:userId', idParam('userId', 'user id'), adminActor(), async (c) => {
    return c.json(await setDenied(deps, c.req.valid('param').userId, true, c.req.valid('header').actor));
  });

  app.delete('/deny/:userId', idParam('userId', 'user id'), adminActor(), async (c) => {
    return c.json(await setDenied(deps, c.req.valid('param').userId, false, c.req.valid('header').actor));
  });

  app.get('/activities/:id/reconciliation', idParam(), async (c) => {
    const rec = await reconcile(deps, c.req.valid('param').id);
    raiseMismatch(deps, rec);
    return c.json(rec);
  });

  return app;
}
