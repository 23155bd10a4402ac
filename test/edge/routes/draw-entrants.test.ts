/**
 * The public entrant list at the edge: pages of a published list are cached (identical
 * requests cost one origin call); only the fixed page sizes (10, 100, 1000 under the default
 * DRAW_ENTRANTS_PAGE_MAX) and cursors this edge handed out as a page's `next` are served, anything
 * else is 400 with no origin call; pages the edge does not hold are limited per client network
 * (DRAW_ENTRANTS_PER_SEC, 1 in these tests): an IPv4 address, an IPv6 /64. The stand-in origin's
 * list is endless: each page's `next` leads to another page.
 */
import { SELF } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { BASE, newActivityId, originCalls, push, setOrigin, snapshotOf } from '../support.js';

/** A lottery whose window has closed and whose list is published, known to the edge and the stand-in origin. */
async function publishedLottery(entrantsPublished = true): Promise<string> {
  const activityId = newActivityId();
  const now = Date.now();
  const snapshot = {
    ...snapshotOf(activityId, {
      admission: 'lottery',
      lotteryWindowMs: 1_000,
      startsAt: new Date(now - 60_000).toISOString(),
    }),
    draw: {
      commitment: 'a'.repeat(64),
      entrantsDigest: 'b'.repeat(64),
      ...(entrantsPublished ? { seed: 'c'.repeat(64), entrants: 1, winners: 0, units: 0, entrantsPublished } : {}),
    },
  };
  await setOrigin(activityId, { snapshot });
  expect((await push(snapshot)).status).toBe(200);
  return activityId;
}

const page = (activityId: string, query: string, ip = '198.51.100.7') =>
  SELF.fetch(`${BASE}/api/activities/${activityId}/draw/entrants${query}`, { headers: { 'cf-connecting-ip': ip } });

const randomTicket = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');

it('five identical requests for a published page make one origin call', async () => {
  const activityId = await publishedLottery();
  const bodies: unknown[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await page(activityId, '?limit=100', `203.0.113.${i + 1}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('max-age=');
    bodies.push(await res.json());
  }
  expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
  expect((bodies[0] as { entrants: unknown[] }).entrants).toHaveLength(1);
  expect((await originCalls(activityId)).entrants).toBe(1);
  // Five at the same moment: still that one call (now cached).
  await Promise.all(Array.from({ length: 5 }, () => page(activityId, '?limit=100')));
  expect((await originCalls(activityId)).entrants).toBe(1);
});

it('made-up cursors are 400 bad_request with no origin call; the next cursor of a served page is accepted', async () => {
  const activityId = await publishedLottery();
  for (let i = 0; i < 5; i++) {
    const res = await page(activityId, `?after=${randomTicket()}`, `192.0.2.${60 + i}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe('bad_request');
    expect(body.message).toContain('after must be the next cursor of a page of 1000');
  }
  expect((await originCalls(activityId)).entrants).toBe(0);
  // The first page's `next` is a real cursor, but only for the page size it was served with.
  const first = (await (await page(activityId, '?limit=10', '192.0.2.70')).json()) as { next: string };
  expect(first.next).toMatch(/^[0-9a-f]{64}$/);
  expect((await originCalls(activityId)).entrants).toBe(1);
  expect((await page(activityId, `?after=${first.next}&limit=100`, '192.0.2.71')).status).toBe(400);
  const second = await page(activityId, `?after=${first.next}&limit=10`, '192.0.2.72');
  expect(second.status).toBe(200);
  expect(((await second.json()) as { entrants: { ticket: string }[] }).entrants[0]!.ticket > first.next).toBe(true);
  expect((await originCalls(activityId)).entrants).toBe(2);
});

it('a page size that is not one of the fixed sizes is 400 bad_request, with no origin call', async () => {
  const activityId = await publishedLottery();
  for (const limit of ['1', '50', '99', '101', '999', '010', '1e3', '1000.0', '+100', '-10', 'abc']) {
    const res = await page(activityId, `?limit=${encodeURIComponent(limit)}`, '198.51.100.80');
    expect(res.status, limit).toBe(400);
    const body = (await res.json()) as { error: string; message: string };
    expect(body).toMatchObject({ error: 'bad_request', message: 'limit must be one of 10, 100, 1000' });
  }
  expect((await originCalls(activityId)).entrants).toBe(0);
});

it('pages past the cache are limited per client: 429 rate_limited + Retry-After past the rate, other clients unaffected', async () => {
  const activityId = await publishedLottery();
  // DRAW_ENTRANTS_PER_SEC is 1 in these tests (edge/vitest.config.ts): of three distinct pages at once, one is fetched.
  const answers = await Promise.all(
    ['10', '100', '1000'].map((limit) => page(activityId, `?limit=${limit}`, '192.0.2.44')),
  );
  expect(answers.map((r) => r.status).sort()).toEqual([200, 429, 429]);
  const refused = answers.find((r) => r.status === 429)!;
  expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // The refused requests cost no origin call; another address still gets a page.
  expect((await originCalls(activityId)).entrants).toBe(1);
  const fetched = [10, 100, 1000][answers.findIndex((r) => r.status === 200)]!;
  const other = [10, 100, 1000].find((l) => l !== fetched)!;
  expect((await page(activityId, `?limit=${other}`, '192.0.2.45')).status).toBe(200);
  expect((await originCalls(activityId)).entrants).toBe(2);
  // A page the edge already holds is served to the limited client too: it costs nothing.
  expect((await page(activityId, `?limit=${fetched}`, '192.0.2.46')).status).toBe(200);
  expect((await page(activityId, `?limit=${other}`, '192.0.2.44')).status).toBe(200);
  expect((await originCalls(activityId)).entrants).toBe(2);
});

it('two IPv6 addresses in one /64 share one allowance; another /64 has its own', async () => {
  const activityId = await publishedLottery();
  expect((await page(activityId, '?limit=10', '2001:db8:77:1::1')).status).toBe(200);
  // Same /64, another address (spelled out in full, upper case): the allowance is already used.
  const sameNetwork = await page(activityId, '?limit=100', '2001:DB8:77:1:ffff:ffff:ffff:fffe');
  expect(sameNetwork.status).toBe(429);
  expect(((await sameNetwork.json()) as { error: string }).error).toBe('rate_limited');
  expect((await originCalls(activityId)).entrants).toBe(1);
  // The neighbouring /64 is another client.
  expect((await page(activityId, '?limit=100', '2001:db8:77:2::1')).status).toBe(200);
  expect((await originCalls(activityId)).entrants).toBe(2);
});

it('an oversized page is 400 bad_request, with no origin call', async () => {
  const activityId = await publishedLottery();
  const res = await page(activityId, '?limit=1001');
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: string }).error).toBe('bad_request');
  expect((await page(activityId, '?limit=1000', '203.0.113.200')).status).toBe(200);
  expect((await page(activityId, '?limit=0')).status).toBe(400);
  expect((await originCalls(activityId)).entrants).toBe(1);
});

it('before the list is published: 404 not_found, no origin call', async () => {
  const activityId = await publishedLottery(false);
  const res = await page(activityId, '');
  expect(res.status).toBe(404);
  expect((await originCalls(activityId)).entrants).toBe(0);
});
