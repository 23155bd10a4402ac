/**
 * `GET /api/activities/:id/draw/entrants?after=<ticket>&limit=<n>` (docs/design.md §10): the published
 * entrant list of a lottery, in draw order, a page at a time — `{activityId, entrants: [{ticket,
 * entrant, entry, quantity, won, excluded}], next}`. An entrant id is hex HMAC-SHA256(drawSeed,
 * userId): the list shows no user ids, and each buyer finds their own line from the public seed.
 *
 * Published once and never changed, so a page is cached at the edge: the Cache API
 * (per colo) keeps each page after its first fetch, and one isolate asks the origin once for a page
 * that several requests want at the same moment. Only a page the edge does not hold costs an origin
 * call, and those are limited per client network: DRAW_ENTRANTS_PER_SEC per `cf-connecting-ip`
 * address for IPv4, per /64 for IPv6 (edge/client-network.ts; the list is public, so callers need not
 * be signed in; the per-user gate, UserGateDO, counts them under `draw-entrants:ip:<address>` /
 * `draw-entrants:ip6:<prefix>::/64`), beyond which 429 `rate_limited` + Retry-After.
 * So that a caller cannot mint new pages (each a cache key and an origin call), only these pages
 * exist: `limit` is one of the fixed sizes (pageSizesOf), and `after` is empty or the `next` of a
 * page of that size this edge has served (a cursor mark kept in the same cache beside the page).
 * Anything else is 400 `bad_request` with no origin call.
 */
import { Hono } from 'hono';
import { ContractError } from '../../contract/index.js';
import { loadActivity } from '../activity-cache.js';
import type { EdgeContext, EdgeEnv } from '../context.js';
import { admitUser } from '../gates.js';
import { callOrigin } from '../origin.js';
import { clientNetworkOf } from '../client-network.js';
import { settingsOf } from '../settings.js';
import { activityIdParam } from './activities.js';

/** Browsers and the colo may keep a page this long (it never changes once published). */
const ENTRANTS_MAX_AGE_SECONDS = 3_600;
const TICKET = /^[0-9a-f]{64}$/;

/** Origin fetches in flight in this isolate, by page: identical requests at once share one. */
const inFlight = new Map<string, Promise<string>>();

/** The page sizes a client may ask for: 10, 100, 1000 … up to DRAW_ENTRANTS_PAGE_MAX, and that maximum. */
export function pageSizesOf(pageMax: number): number[] {
  const sizes = new Set<number>();
  for (let size = 10; size < pageMax; size *= 10) sizes.add(size);
  sizes.add(pageMax);
  return [...sizes];
}

/** The cache key marking `ticket` as the `next` of a served page of `limit` entrants. */
const cursorKey = (base: string, activityId: string, limit: number, ticket: string) =>
  new Request(new URL(`/api/activities/${activityId}/draw/entrants-cursor/${limit}/${ticket}`, base).toString());

export const drawRoutes = new Hono<EdgeEnv>().get('/:id/draw/entrants', async (c) => {
  const activityId = activityIdParam(c);
  const settings = settingsOf(c.env);
  const after = c.req.query('after') ?? '';
  const limitText = c.req.query('limit');
  if (after !== '' && !TICKET.test(after)) throw new ContractError('bad_request', 'after must be a ticket (64 hex)');
  const sizes = pageSizesOf(settings.drawEntrantsPageMax);
  const limit = limitText === undefined ? settings.drawEntrantsPageMax : Number(limitText);
  if (limitText !== undefined && !sizes.some((size) => String(size) === limitText))
    throw new ContractError('bad_request', `limit must be one of ${sizes.join(', ')}`);
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
  // A page not held yet: its cursor must be one this edge handed out for this page size.
  if (after !== '' && !(await cache.match(cursorKey(c.req.url, activityId, limit, after))))
    throw new ContractError(
      'bad_request',
      `after must be the next cursor of a page of ${limit} of this list, as this edge served it; start from the first page`,
    );

  let fetching = inFlight.get(path);
  if (!fetching) {
    fetching = (async () => {
      const body = await fetchPage(c, activityId, after, limit, traceId);
      // Stored before answering, so the client's next request for it (and everyone's) is a hit, and
      // its `next` is a cursor this edge accepts.
      const next = (JSON.parse(body) as { next?: unknown }).next;
      await Promise.all([
        cache.put(key, pageResponse(body)),
        typeof next === 'string' && TICKET.test(next)
          ? cache.put(cursorKey(c.req.url, activityId, limit, next), pageResponse('{}'))
          : null,
      ]);
      return body;
    })();
    inFlight.set(path, fetching);
    void fetching.finally(() => inFlight.delete(path)).catch(() => {});
  }
  return pageResponse(await fetching);
});

/** A page from the origin, after the client network's allowance (IPv4 address, IPv6 /64). */
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
    userId: clientNetworkOf(client),
    scope: 'draw-entrants',
    ratePerSec: settings.drawEntrantsPerSec,
  });
  const answer = await callOrigin<unknown>(settings, {
    method: 'GET',
    path: `/internal/activities/${activityId}/draw/entrants?${new URLSearchParams({ after, limit: String(limit) }).toString()}`,
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
