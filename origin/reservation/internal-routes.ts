/** The origin's internal API, called by the edge with a §9 signature (docs/design.md §9). */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { parseEntryId } from '../../contract/ids.js';
import { reserveRequestSchema } from '../../contract/reservation.js';
import type { OriginContext } from '../context.js';
import { entrantsPage } from '../lottery/draw-store.js';
import { entryStatus } from '../lottery/entry-status.js';
import { reservationOfUser, reservationStatus } from './status.js';
import { edgeSignature, inFlightLimit } from '../platform/http/middleware.js';
import { countOrderAnswers } from '../orders/order-answers.js';
import { answerReserve, reserveGate } from './reserve-answer.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, jsonBody, requireId } from '../platform/http/validate.js';

export function internalRoutes(ctx: OriginContext) {
  const app = new Hono<OriginEnv>();
  // First, so an answer refused by the signature check counts too.
  app.use('/reserve', countOrderAnswers({ metrics: ctx.metrics, deadlineMs: ctx.config.RESERVE_ANSWER_DEADLINE_MS }));
  app.use('*', edgeSignature({ secret: ctx.config.EDGE_ORIGIN_SECRET }));

  app.use('/reserve', inFlightLimit({ gate: reserveGate(ctx) }));
  // The usual path of this route is reserve-fast-path.ts (outside Hono); this one serves the rest
  // (a chunked body, a query string) with the same answer.
  app.post('/reserve', jsonBody(reserveRequestSchema), async (c) => {
    const answer = await answerReserve(ctx, c.req.valid('json'), c.get('traceId'), () => c.get('log'));
    c.set('answer', answer.answer);
    return c.json(answer.body, answer.status);
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

  // The published entrant list of a lottery (docs/design.md §10), in draw order, a page at a time.
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
