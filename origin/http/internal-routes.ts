/** The origin's internal API, called by the edge with a §9 signature (DESIGN §9). */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { isId } from '../../contract/ids.js';
import { reserveRequestSchema } from '../../contract/reservation.js';
import type { OriginContext } from '../context.js';
import { reserve } from '../reservation/reserve.js';
import { reservationOfUser, reservationStatus } from '../reservation/status.js';
import { edgeSignature, inFlightLimit, parseJson } from './middleware.js';
import type { OriginEnv } from './types.js';

function requireId(value: string | undefined, name: string): string {
  if (!isId(value)) throw new ContractError('bad_request', `${name} must be a decimal positive 64-bit integer`);
  return value;
}

export function internalRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  app.use('*', edgeSignature({ secret: ctx.config.EDGE_ORIGIN_SECRET }));

  app.use(
    '/reserve',
    inFlightLimit({
      max: ctx.config.RESERVE_MAX_IN_FLIGHT,
      onShed: () => ctx.metrics.reserveOutcomes.inc({ code: 'busy' }),
    }),
  );
  app.post('/reserve', async (c) => {
    const req = reserveRequestSchema.parse(parseJson(c.get('rawBody')));
    // The edge's trace id wins over the header's only when it sent one in the body.
    const traceId = req.traceId ?? c.get('traceId');
    const result = await reserve(ctx, req, traceId);
    c.get('log').info(
      { activityId: req.activityId, userId: req.userId, reservationId: result.reservationId, created: result.created },
      'reserve',
    );
    if (result.created) return c.json({ status: 'queued' as const, reservationId: result.reservationId }, 202);
    // A repeat answers where the reservation stands now (ordered, paid, …), not a stale "queued".
    // The lookup is best effort and bounded: the reserve path stays fast while settlement keeps MySQL
    // busy, and a repeat never fails because of it — the pollUrl tells the rest.
    const queued = { status: 'queued' as const, reservationId: result.reservationId };
    let timer: NodeJS.Timeout | undefined;
    const current = await Promise.race([
      reservationStatus(ctx, result.reservationId, req.userId).catch((err) => {
        c.get('log').warn(
          { err: (err as Error).message, reservationId: result.reservationId },
          'repeat status lookup failed',
        );
        return queued;
      }),
      new Promise<typeof queued>(
        (resolve) => (timer = setTimeout(resolve, ctx.config.REPEAT_STATUS_TIMEOUT_MS, queued)),
      ),
    ]).finally(() => clearTimeout(timer));
    return c.json(current, 200);
  });

  // Status reads share one cap: a flood of polls cannot starve the event loop or the Redis/MySQL
  // connections that reserve needs.
  const statusLimit = inFlightLimit({ max: ctx.config.STATUS_MAX_IN_FLIGHT, what: 'status reads' });
  app.use('/reservations/:reservationId', statusLimit);
  app.use('/activities/:id/reservation', statusLimit);
  app.use('/activities/:id', statusLimit);

  app.get('/reservations/:reservationId', async (c) => {
    const userId = requireId(c.req.query('userId'), 'userId');
    return c.json(await reservationStatus(ctx, c.req.param('reservationId'), userId));
  });

  app.get('/activities/:id/reservation', async (c) => {
    const activityId = requireId(c.req.param('id'), 'activity id');
    const userId = requireId(c.req.query('userId'), 'userId');
    return c.json(await reservationOfUser(ctx, activityId, userId));
  });

  app.get('/activities/:id', async (c) => {
    const activityId = requireId(c.req.param('id'), 'activity id');
    const snapshot = await ctx.snapshot(activityId);
    if (!snapshot) throw new ContractError('not_found', `activity ${activityId} does not exist`);
    return c.json(snapshot);
  });

  return app;
}
