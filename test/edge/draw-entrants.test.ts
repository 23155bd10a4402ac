/**
 * The public entrant list at the edge (issue 24.4): pages of a published list are cached (identical
 * requests cost one origin call), a page larger than DRAW_ENTRANTS_PAGE_MAX is refused, and pages
 * the edge does not hold are limited per client address (DRAW_ENTRANTS_PER_SEC, 1 in these tests).
 */
import { SELF } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { BASE, newActivityId, originCalls, push, setOrigin, snapshotOf } from './support.js';

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

it('random cursors from one client are limited: past the per-client rate 429 rate_limited, other clients unaffected', async () => {
  const activityId = await publishedLottery();
  // DRAW_ENTRANTS_PER_SEC is 1 in these tests (edge/vitest.config.ts): of four at once, one page is fetched.
  const answers = await Promise.all(
    Array.from({ length: 4 }, () => page(activityId, `?after=${randomTicket()}`, '192.0.2.44')),
  );
  expect(answers.map((r) => r.status).sort()).toEqual([200, 429, 429, 429]);
  const refused = answers.find((r) => r.status === 429)!;
  expect(((await refused.json()) as { error: string }).error).toBe('rate_limited');
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // The refused requests cost no origin call; another address still gets its page.
  expect((await originCalls(activityId)).entrants).toBe(1);
  expect((await page(activityId, `?after=${randomTicket()}`, '192.0.2.45')).status).toBe(200);
  expect((await originCalls(activityId)).entrants).toBe(2);
  // A page the edge already holds is served to the limited client too: it costs nothing.
  expect((await page(activityId, '?limit=1000', '192.0.2.46')).status).toBe(200);
  expect((await page(activityId, '?limit=1000', '192.0.2.44')).status).toBe(200);
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
