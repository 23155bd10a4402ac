/**
 * `GET /api/activities/:id/draw/entrants?after=<ticket>&limit=<n>` (DESIGN §10): the published
 * entrant list of a lottery, in draw order, a page at a time — `{activityId, entrants: [{ticket,
 * quantity, won}], next}`. A ticket is hex HMAC-SHA256(drawSeed, userId): the list shows no user
 * ids, and each buyer finds their own line from the public seed. Published once and never changed,
 * so browsers and the colo may cache a page.
 */
import { Hono } from 'hono';
import { ContractError } from '../../contract/index.js';
import { loadActivity } from '../activity-cache.js';
import type { EdgeEnv } from '../context.js';
import { callOrigin } from '../origin.js';
import { settingsOf } from '../settings.js';
import { activityIdParam } from './activities.js';

const ENTRANTS_MAX_AGE_SECONDS = 300;
const TICKET = /^[0-9a-f]{64}$/;

export const drawRoutes = new Hono<EdgeEnv>().get('/:id/draw/entrants', async (c) => {
  const activityId = activityIdParam(c);
  const after = c.req.query('after') ?? '';
  const limit = c.req.query('limit');
  if (after !== '' && !TICKET.test(after)) throw new ContractError('bad_request', 'after must be a ticket (64 hex)');
  if (limit !== undefined && !/^[1-9][0-9]{0,6}$/.test(limit))
    throw new ContractError('bad_request', 'limit must be a positive integer');
  const traceId = c.get('traceId');
  const snapshot = await loadActivity(c.env, activityId, traceId);
  if (!snapshot.draw?.entrantsPublished)
    throw new ContractError('not_found', 'the entrant list is not published (yet)');
  const query = new URLSearchParams({ after, ...(limit ? { limit } : {}) });
  const answer = await callOrigin<unknown>(settingsOf(c.env), {
    method: 'GET',
    path: `/internal/activities/${activityId}/draw/entrants?${query}`,
    traceId,
  });
  c.header('Cache-Control', `public, max-age=${ENTRANTS_MAX_AGE_SECONDS}`);
  return c.json(answer.body as object);
});
