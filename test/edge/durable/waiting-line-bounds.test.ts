/**
 * The waiting line's bounds through the Worker, in workerd: a shard's line holds at most
 * WAITING_LINE_MAX places (a join beyond it is 503 `line_full` with Retry-After, and nothing is kept),
 * nobody is told to come back later than WAITING_POLL_MAX_MS, a place not polled within 3 × its own
 * pollAfterMs is gone, and the line's length and storage reach the origin's figures.
 *
 * Settings are shortened or tightened per test by handing the Worker a copy of its environment
 * (`worker.fetch(request, env, ctx)`): the route passes them to the admission shard with every call.
 * The sales run one admission token per 64 s on the shard under test (rate 1 over 64 shards; the
 * users are picked to hash to shard 0), so no turn comes while a test runs and counts are exact.
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { EDGE_FIGURES_PATH, signEdgeRequest, type EdgeFigures } from '../../../contract/index.js';
import { admissionShard } from '../../../edge/durable/names.js';
import { shardOf } from '../../../edge/gates.js';
import worker from '../../../edge/index.js';
import { issueTicket, parseTicketKeys } from '../../../edge/ticket.js';
import { TEST_EDGE_SECRETS } from '../../helpers/edge-test-secrets.js';
import { BASE, bearer, newUserId, openActivity, sleep } from '../support.js';

type Json = Record<string, any>;

const SHARDS = 64;
const keys = parseTicketKeys(TEST_EDGE_SECRETS.TICKET_KEYS);

/** A queue sale whose shard 0 gives one token per 64 s; its one initial token is taken by a first buyer. */
async function slowQueueSale(run: Env): Promise<string> {
  const activityId = await openActivity({ overflow: 'queue', admissionRatePerSec: 1, admissionShards: SHARDS });
  const first = await buy(run, activityId, shardZeroUser());
  expect([first.status, first.body.status]).toEqual([202, 'queued']);
  return activityId;
}

/** A new user id that hashes to admission shard 0. */
function shardZeroUser(): string {
  for (;;) {
    const id = newUserId();
    if (shardOf(id, SHARDS) === 0) return id;
  }
}

async function call(
  run: Env,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${BASE}${path}`, init), run, ctx);
  const body = (await res.json()) as Json;
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body };
}

/** A purchase request with a valid ticket (minted here: tickets are not what these tests are about). */
async function purchaseRequest(activityId: string, userId: string): Promise<[string, RequestInit]> {
  const ticket = await issueTicket(keys, { activityId, userId, expiresAt: Date.now() + 600_000 });
  const init = {
    method: 'POST',
    headers: {
      authorization: await bearer(userId),
      'idempotency-key': crypto.randomUUID(),
      'content-type': 'application/json',
    },
    body: '{"quantity":1}',
  };
  return [`/api/activities/${activityId}/purchase?t=${ticket}`, init];
}

async function buy(run: Env, activityId: string, userId: string) {
  return call(run, ...(await purchaseRequest(activityId, userId)));
}

async function signedGet(run: Env, path: string) {
  const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
    method: 'GET',
    pathWithQuery: path,
    body: '',
  });
  return call(run, path, { headers });
}

describe('waiting line bounds', () => {
  // The cap is a count, the same rule at any size: a small one keeps the test short.
  const CAP = 250;
  it(`${2 * CAP} joins on a shard capped at ${CAP}: ${CAP} places and ${CAP} clear 503 line_full refusals`, async () => {
    const capped = { ...env, WAITING_LINE_MAX: String(CAP) };
    const activityId = await openActivity({ overflow: 'queue', admissionRatePerSec: 1, admissionShards: SHARDS });
    // Tickets and JWTs first, so the joins follow the first buyer's token closely (the next is 64 s away).
    const requests = await Promise.all(
      Array.from({ length: 2 * CAP }, () => purchaseRequest(activityId, shardZeroUser())),
    );
    const first = await buy(capped, activityId, shardZeroUser());
    expect([first.status, first.body.status]).toEqual([202, 'queued']);
    const answers: Awaited<ReturnType<typeof call>>[] = [];
    // In order, 100 at a time: the line's order is the order the shard sees them.
    for (let i = 0; i < requests.length; i += 100)
      answers.push(...(await Promise.all(requests.slice(i, i + 100).map((r) => call(capped, ...r)))));

    const places = answers.filter((a) => a.status === 202 && a.body.status === 'waiting');
    const refusals = answers.filter((a) => a.status === 503 && a.body.error === 'line_full');
    expect([places.length, refusals.length]).toEqual([CAP, CAP]);
    expect(refusals[0]!.body.message).toBe('the waiting line is full; no place was taken; try again later');
    for (const r of refusals) expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Positions are the shard's places × the shard count: every place from 0 to CAP - 1 once.
    expect(new Set(places.map((p) => p.body.position / SHARDS)).size).toBe(CAP);
    // Nobody is told to come back later than WAITING_POLL_MAX_MS (60 s), the back of the line included.
    expect(Math.max(...places.map((p) => p.body.pollAfterMs))).toBe(60_000);

    const shard = await admissionShard(env, activityId, 0).figures();
    // No turn came meanwhile (the next token is 64 s away): the counts above are the cap's alone.
    expect(shard).toMatchObject({ waiting: CAP, entered: CAP, admitted: 0, refusedFull: CAP });
    const room = await signedGet(capped, `/internal/activities/${activityId}/waiting-room`);
    expect(room.body).toMatchObject({ waiting: CAP, longestShard: CAP, lineMax: CAP, refusedFull: CAP });
    expect(room.body.storageBytes).toBeGreaterThan(0);
  }, 180_000);

  it('the line length and storage bytes of each queueing sale reach the origin through /internal/figures', async () => {
    const activityId = await slowQueueSale(env);
    for (let i = 0; i < 3; i++) expect((await buy(env, activityId, shardZeroUser())).status).toBe(202);
    const { body } = await signedGet(env, EDGE_FIGURES_PATH);
    const figures = body as EdgeFigures;
    expect(figures.waitingLine[activityId]).toBe(3);
    expect(figures.waitingLineLongestShard[activityId]).toBe(3);
    // The bytes of every shard's storage, summed (an empty shard's database is a few pages too).
    const shards = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) => admissionShard(env, activityId, i).figures()),
    );
    expect(figures.waitingLineBytes[activityId]).toBe(shards.reduce((n, f) => n + f.storageBytes, 0));
    expect(shards[0]!.storageBytes).toBeGreaterThan(0);
  });

  it('a place not polled within 3 × its own pollAfterMs is gone; one polled as told stays', async () => {
    // Shortened for the test: every place is told 1 s at most, so a silent one is gone after 3 s, and a
    // buyer polling as told has 2 s to spare on a loaded machine.
    const short = { ...env, WAITING_POLL_MIN_MS: '500', WAITING_POLL_MAX_MS: '1000' };
    const activityId = await slowQueueSale(short);
    const silent = shardZeroUser();
    const polling = shardZeroUser();
    const first = await buy(short, activityId, silent);
    const second = await buy(short, activityId, polling);
    expect([first.body.pollAfterMs, second.body.pollAfterMs]).toEqual([1_000, 1_000]);
    const auth = await bearer(polling);
    const poll = (url: string, authorization: string) => call(short, url, { headers: { authorization } });
    /** Polls as told for `ms`; the last answer. */
    const pollAsTold = async (ms: number) => {
      const until = Date.now() + ms;
      let answer: Awaited<ReturnType<typeof poll>>;
      do {
        await sleep(second.body.pollAfterMs + 10);
        answer = await poll(second.body.pollUrl, auth);
        expect([answer.status, answer.body.status]).toEqual([200, 'waiting']);
      } while (Date.now() < until);
      return answer;
    };
    expect((await pollAsTold(1_500)).body.position).toBe(SHARDS); // one place ahead, × the shard count
    await pollAsTold(2_000); // past the silent place's 3 s
    const late = await poll(first.body.pollUrl, await bearer(silent));
    expect([late.status, late.body.error]).toEqual([404, 'not_found']);
    expect(late.body.message).toBe(
      'this place in line was given up: not polled for 3 s (3 × the pollAfterMs it was given); buy again',
    );
    // Once the line is swept (at most once a second) the buyer who kept polling is first in line.
    expect((await pollAsTold(2_500)).body.position).toBe(0);
  });
});
