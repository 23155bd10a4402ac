/**
 * `GET /api/activities/:id/draw/entrants?after=<ticket>&limit=<n>` (docs/design.md §10): the published
 * entrant list of a lottery, in draw order, a page at a time — `{activityId, entrants: [{ticket,
 * entrant, entry, quantity, won, excluded}], next}`. An entrant id is hex HMAC-SHA256(drawSeed,
 * userId): the list shows no user ids, and each buyer finds their own line from the public seed.
 *
 * Published once and never changed, so a page is cached at the edge (issue 24.4): the Cache API
 * (per colo) keeps each page after its first fetch, and one isolate asks the origin once for a page
 * that several requests want at the same moment. Only a page the edge does not hold costs an origin
 * call, and those are limited per client: DRAW_ENTRANTS_PER_SEC per `cf-connecting-ip` (the list is
 * public, so callers need not be signed in; the per-user gate, UserGateDO, counts them under the key
 * `draw-entrants:ip:<address>`), beyond which 429 `rate_limited` + Retry-After. Pages hold at most
 * DRAW_ENTRANTS_PAGE_MAX entrants; a larger `limit` is 400.
 */
import { Hono } from 'hono';
import { ContractError } from '../../contract/index.js';
import { loadActivity } from '../activity-cache.js';
import type { EdgeContext, EdgeEnv } from '../context.js';
import { admitUser } from '../gates.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';
import { activityIdParam } from './activities.js';

/** Browsers and the colo may keep a page this long (it never changes once published). */
const ENTRANTS_MAX_AGE_SECONDS = 3_600;
const TICKET = /^[0-9a-f]{64}$/;

/** Origin fetches in flight in this isolate, by page: identical requests at once share one. */
const inFlight = new Map<string, Promise<string>>();

export const drawRoutes = new Hono<EdgeEnv>().get('/:id/draw/entrants', async (c) => {
  const activityId = activityIdParam(c);
  const settings = settingsOf(c.env);
  const after = c.req.query('after') ?? '';
  const limitText = c.req.query('limit');
  if (after !== '' && !TICKET.test(after)) throw new ContractError('bad_request', 'after must be a ticket (64 hex)');
  if (limitText !== undefined && !/^[1-9][0-9]{0,6}$/.test(limitText))
    throw new ContractError('bad_request', 'limit must be a positive integer');
  const limit = limitText === undefined ? settings.drawEntrantsPageMax : Number(limitText);
  if (limit > settings.drawEntrantsPageMax)
    throw new ContractError('bad_request', `limit must be at most ${settings.drawEntrantsPageMax}`);
  const traceId = c.get('traceId');
  const snapshot = await loadActivity(c.env, activityId, traceId);
  if (!snapshot.draw?.entrantsPublished)
    throw new ContractError('not_found', 'the entrant list is not published (yet)');

  // One key per page, whatever order or spelling the query had.
  const path = `/api/activities/${activityId}/draw/entrants?after=${after}&limit=${limit}`;
  const key = new Request(new URL(path, c.req.url).toString());
  const cache = await caches.open('draw-entrants');
  const cached = await cache.match(key);
  if (cached) return pageResponse(await cached.text());

  let fetching = inFlight.get(path);
  if (!fetching) {
    fetching = fetchPage(c, activityId, after, limit, traceId);
    inFlight.set(path, fetching);
    void fetching.finally(() => inFlight.delete(path)).catch(() => {});
    const body = await fetching;
    // Stored before answering, so the client's next request for it (and everyone's) is a hit.
    await cache.put(key, pageResponse(body));
    return pageResponse(body);
  }
  return pageResponse(await fetching);
});

/** A page from the origin, after the client's per-IP allowance. */
async function fetchPage(
  c: EdgeContext,
  activityId: string,
  after: string,
  limit: number,
  traceId: string,
): Promise<string> {
  const settings = settingsOf(c.env);
  const client = c.req.header('cf-connecting-ip') ?? 'unknown';
  await admitUser(c.env, {
    shards: settings.userGateShards,
    userId: `ip:${client}`,
    scope: 'draw-entrants',
    ratePerSec: settings.drawEntrantsPerSec,
  });
  const answer = await callOrigin<unknown>(settings, {
    method: 'GET',
    path: `/internal/activities/${activityId}/draw/entrants?${new URLSearchParams({ after, limit: String(limit) })}`,
    traceId,
  });
  return JSON.stringify(answer.body);
}

function pageResponse(body: string): Response {
  return new Response(body, {
    headers: {
      'content-type': 'application/json',
      'cache-control': `public, max-age=${ENTRANTS_MAX_AGE_SECONDS}, immutable`,
    },
  });
}
