/** The origin's internal API, called by the edge with a §9 signature (DESIGN §9). */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { parseEntryId } from '../../contract/ids.js';
import { reserveRequestSchema } from '../../contract/reservation.js';
import type { OriginContext } from '../context.js';
import { entrantsPage } from '../lottery/draw-store.js';
import { lotteryPurchase } from '../lottery/entry.js';
import { entryStatus } from '../lottery/entry-status.js';
import { reserve } from '../reservation/reserve.js';
import { reservationOfUser, reservationStatus } from '../reservation/status.js';
import { edgeSignature, inFlightLimit } from './middleware.js';
import { countOrderAnswers } from './order-answers.js';
import type { OriginEnv } from './types.js';
import { idParam, jsonBody, requireId } from './validate.js';

export function internalRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  // First, so an answer refused by the signature check counts too.
  app.use('/reserve', countOrderAnswers({ metrics: ctx.metrics, deadlineMs: ctx.config.RESERVE_ANSWER_DEADLINE_MS }));
  app.use('*', edgeSignature({ secret: ctx.config.EDGE_ORIGIN_SECRET }));

  app.use(
    '/reserve',
    inFlightLimit({
      max: ctx.config.RESERVE_MAX_IN_FLIGHT,
      onShed: () => ctx.metrics.reserveOutcomes.inc({ code: 'busy' }),
    }),
  );
  app.post('/reserve', jsonBody(reserveRequestSchema), async (c) => {
    const req = c.req.valid('json');
    // The edge's trace id wins over the header's only when it sent one in the body.
    const traceId = req.traceId ?? c.get('traceId');
    // Lottery activities (DESIGN §10): an entry inside the window, `busy` while the draw runs.
    const entry = await lotteryPurchase(ctx, req);
    if (entry) {
      c.get('log').info({ activityId: req.activityId, userId: req.userId, entryId: entry.body.entryId }, 'enter');
      c.set('answer', entry.status === 202 ? 'entered' : 'entered_again');
      return c.json(entry.body, entry.status);
    }
    const result = await reserve(ctx, req, traceId);
    // One line per reserve only at debug: at info it cost the hot path a JSON line per request.
    // Outcomes are counted in seckill_reserve_total (reserve.ts); failures still log at warn.
    c.get('log').debug(
      { activityId: req.activityId, userId: req.userId, reservationId: result.reservationId, created: result.created },
      'reserve',
    );
    c.set('answer', result.created ? 'reserved' : 'repeat');
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
    const entry = parseEntryId(c.req.param('reservationId'));
    if (entry) return c.json(await entryStatus(ctx, entry, userId));
    return c.json(await reservationStatus(ctx, c.req.param('reservationId'), userId));
  });

  app.get('/activities/:id/reservation', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const userId = requireId(c.req.query('userId'), 'userId');
    return c.json(await reservationOfUser(ctx, activityId, userId));
  });

  // The published entrant list of a lottery (DESIGN §10), in draw order, a page at a time.
  app.use('/activities/:id/draw/entrants', statusLimit);
  app.get('/activities/:id/draw/entrants', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const after = c.req.query('after') ?? '';
    if (after !== '' && !/^[0-9a-f]{64}$/.test(after))
      throw new ContractError('bad_request', 'after must be a ticket (64 hex)');
    const limitText = c.req.query('limit') ?? String(ctx.config.DRAW_ENTRANTS_PAGE_MAX);
    const limit = Number(limitText);
    if (!/^\d{1,7}$/.test(limitText) || limit < 1 || limit > ctx.config.DRAW_ENTRANTS_PAGE_MAX)
      throw new ContractError('bad_request', `limit must be 1-${ctx.config.DRAW_ENTRANTS_PAGE_MAX}`);
    const snapshot = await ctx.snapshot(activityId);
    if (!snapshot?.draw?.entrantsPublished)
      throw new ContractError('not_found', 'the entrant list is not published (yet)');
    const entrants = await entrantsPage(ctx.db, activityId, after, limit);
    const next = entrants.length === limit ? entrants[entrants.length - 1]!.ticket : null;
    return c.json({ activityId, entrants, next });
  });

  app.get('/activities/:id', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const snapshot = await ctx.snapshot(activityId);
    if (!snapshot) throw new ContractError('not_found', `activity ${activityId} does not exist`);
    return c.json(snapshot);
  });

  return app;
}
