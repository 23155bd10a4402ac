/** The origin's internal API, called by the edge with a §9 signature (docs/design.md §9). */
import { Hono } from 'hono';
import { ContractError } from '../../contract/errors.js';
import { parseEntryId } from '../../contract/ids.js';
import type { OriginConfig } from '../platform/config.js';
import { entrantsPage } from '../lottery/draw-store.js';
import { entryStatus, type EntryStatusDeps } from './entry-status.js';
import type { SnapshotPublisher } from '../sale/snapshot-publisher.js';
import { reservationOfUser, reservationStatus } from './status.js';
import { edgeSignature, inFlightLimit } from '../platform/http/middleware.js';
import type { ReserveAnswerDeps } from './reserve-answer.js';
import { reserveChain, type ReserveChainDeps } from './reserve-chain.js';
import type { OriginEnv } from '../platform/http/types.js';
import { idParam, requireId } from '../platform/http/validate.js';

/** What the internal routes use: the reserve chain, the status reads, and the snapshot the edge reads. */
export interface InternalRouteDeps extends ReserveChainDeps, EntryStatusDeps {
  requests: ReserveAnswerDeps['requests'] & EntryStatusDeps['requests'];
  entries: ReserveAnswerDeps['entries'] & EntryStatusDeps['entries'];
  /** Sets sold-out for reserve; builds an activity's snapshot for the edge's reads. */
  publisher: Pick<SnapshotPublisher, 'setSoldOut' | 'snapshot'>;
  config: ReserveChainDeps['config'] & Pick<OriginConfig, 'STATUS_MAX_IN_FLIGHT' | 'DRAW_ENTRANTS_PAGE_MAX'>;
}

export function internalRoutes(deps: InternalRouteDeps) {
  const app = new Hono<OriginEnv>();
  // The reserve chain checks the signature itself (reserve-chain.ts), so the route comes before the
  // signature middleware of the other routes; the fast path (reserve-fast-path.ts) usually answers
  // first, and this route serves the rest (a chunked body, a query string) through the same chain.
  const reserveCall = reserveChain(deps);
  app.post('/reserve', async (c) => {
    const url = c.req.url;
    const answer = await reserveCall({
      path: c.req.path,
      pathWithQuery: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      body: c.get('rawBody'),
      timestamp: c.req.header('x-edge-timestamp'),
      signature: c.req.header('x-edge-signature'),
      traceparent: c.req.header('traceparent'),
      traceId: c.get('traceId'),
    });
    return c.json(answer.body, answer.status, answer.headers);
  });
  app.use('*', edgeSignature({ secret: deps.config.EDGE_ORIGIN_SECRET }));

  // Status reads share one cap: a flood of polls cannot starve the event loop or the Redis/MySQL
  // connections that reserve needs.
  const statusLimit = inFlightLimit({ max: deps.config.STATUS_MAX_IN_FLIGHT, what: 'status reads' });
  app.use('/reservations/:reservationId', statusLimit);
  app.use('/activities/:id/reservation', statusLimit);
  app.use('/activities/:id', statusLimit);

  app.get('/reservations/:reservationId', async (c) => {
    const userId = requireId(c.req.query('userId'), 'userId');
    const entry = parseEntryId(c.req.param('reservationId'));
    if (entry) return c.json(await entryStatus(deps, entry, userId));
    return c.json(await reservationStatus(deps, c.req.param('reservationId'), userId));
  });

  app.get('/activities/:id/reservation', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const userId = requireId(c.req.query('userId'), 'userId');
    return c.json(await reservationOfUser(deps, activityId, userId));
  });

  // The published entrant list of a lottery (docs/design.md §10), in draw order, a page at a time.
  app.use('/activities/:id/draw/entrants', statusLimit);
  app.get('/activities/:id/draw/entrants', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const after = c.req.query('after') ?? '';
    if (after !== '' && !/^[0-9a-f]{64}$/.test(after))
      throw new ContractError('bad_request', 'after must be a ticket (64 hex)');
    const limitText = c.req.query('limit') ?? String(deps.config.DRAW_ENTRANTS_PAGE_MAX);
    const limit = Number(limitText);
    if (!/^\d{1,7}$/.test(limitText) || limit < 1 || limit > deps.config.DRAW_ENTRANTS_PAGE_MAX)
      throw new ContractError('bad_request', `limit must be 1-${deps.config.DRAW_ENTRANTS_PAGE_MAX}`);
    const snapshot = await deps.publisher.snapshot(activityId);
    if (!snapshot?.draw?.entrantsPublished)
      throw new ContractError('not_found', 'the entrant list is not published (yet)');
    const entrants = await entrantsPage(deps.db, activityId, after, limit);
    const next = entrants.length === limit ? entrants[entrants.length - 1]!.ticket : null;
    return c.json({ activityId, entrants, next });
  });

  app.get('/activities/:id', idParam(), async (c) => {
    const activityId = c.req.valid('param').id;
    const snapshot = await deps.publisher.snapshot(activityId);
    if (!snapshot) throw new ContractError('not_found', `activity ${activityId} does not exist`);
    return c.json(snapshot);
  });

  return app;
}
