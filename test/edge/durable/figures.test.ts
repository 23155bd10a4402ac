/**
 * The edge's figures (edge/figures.ts → EdgeFiguresDO → signed GET /internal/figures): every answer
 * counted in the isolate and handed over at most every EDGE_FIGURES_FLUSH_MS (1 s), so the origin's
 * /metrics can show clicks, tickets, admissions, refusals by reason, origin calls and waiting lines.
 */
import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { EDGE_FIGURES_PATH, SHADOW_CLAIM, signEdgeRequest, type EdgeFigures } from '../../../contract/index.js';
import { TEST_EDGE_SECRETS } from '../../helpers/edge-test-secrets.js';
import { BASE, bearer, newUserId, openActivity, purchase, purchaseUrlFor, sleep } from '../support.js';

async function figures(): Promise<EdgeFigures> {
  const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
    method: 'GET',
    pathWithQuery: EDGE_FIGURES_PATH,
    body: '',
  });
  const res = await SELF.fetch(`${BASE}${EDGE_FIGURES_PATH}`, { headers });
  expect(res.status).toBe(200);
  return res.json();
}

/** Past the flush interval, one request that counts nothing hands this isolate's growth over. */
async function flushed(): Promise<EdgeFigures> {
  await sleep(1_100);
  await (await SELF.fetch(`${BASE}/favicon.ico`)).arrayBuffer();
  await sleep(100);
  return figures();
}

describe('GET /internal/figures', () => {
  it('needs the origin signature', async () => {
    const res = await SELF.fetch(`${BASE}${EDGE_FIGURES_PATH}`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthenticated');
  });

  it('counts clicks, tickets, admissions, refusals by reason and origin calls, over the flush', async () => {
    const activityId = await openActivity({ userRatePerSec: 50 });
    const before = await flushed();
    const user = newUserId();
    const url = await purchaseUrlFor(activityId, user); // a ticket
    expect((await purchase(url, user)).status).toBe(202); // a click, admitted, one origin call
    // Three doomed clicks: no ticket (403 bad_ticket) and, twice, no login (401 unauthenticated).
    const noTicket = await SELF.fetch(`${BASE}/api/activities/${activityId}/purchase`, {
      method: 'POST',
      headers: { authorization: await bearer(user), 'idempotency-key': 'k1', 'content-type': 'application/json' },
      body: '{"quantity":1}',
    });
    expect(noTicket.status).toBe(403);
    for (let i = 0; i < 2; i++)
      expect((await purchase(url, user, { headers: { authorization: '' } })).status).toBe(401);
    const after = await flushed();
    expect(after.clicks - before.clicks).toBe(4);
    expect(after.tickets - before.tickets).toBe(1);
    expect(after.admitted - before.admitted).toBe(1);
    const reserves = (f: EdgeFigures) => f.originCalls['reserve/answered'] ?? 0;
    expect(reserves(after) - reserves(before)).toBe(1);
    expect((after.refusals.bad_ticket ?? 0) - (before.refusals.bad_ticket ?? 0)).toBe(1);
    expect((after.refusals.unauthenticated ?? 0) - (before.refusals.unauthenticated ?? 0)).toBe(2);
  });

  it("counts a shadow token's answers apart from real traffic's, and only there", async () => {
    const shadowSale = await openActivity({ shadow: true, userRatePerSec: 50 });
    const realSale = await openActivity({ userRatePerSec: 50 });
    const before = await flushed();
    const user = newUserId();
    const shadowToken = await bearer(user, { claims: { [SHADOW_CLAIM]: true } });
    const ticketFor = (activityId: string, authorization: string) =>
      SELF.fetch(`${BASE}/api/activities/${activityId}/tickets`, { method: 'POST', headers: { authorization } });
    // The shadow token: a ticket and a purchase on the shadow sale, refused on the real sale.
    const ticket = await ticketFor(shadowSale, shadowToken);
    expect(ticket.status).toBe(200);
    const { purchaseUrl } = (await ticket.json()) as { purchaseUrl: string };
    expect((await purchase(purchaseUrl, user, { headers: { authorization: shadowToken } })).status).toBe(202);
    expect((await ticketFor(realSale, shadowToken)).status).toBe(403);
    // A real token refused on the shadow sale is real traffic.
    expect((await ticketFor(shadowSale, await bearer(newUserId()))).status).toBe(403);
    const after = await flushed();

    const mismatches = (f: EdgeFigures['shadow']) => f.refusals.shadow_mismatch ?? 0;
    const reserves = (f: EdgeFigures['shadow']) => f.originCalls['reserve/answered'] ?? 0;
    expect(after.shadow.clicks - before.shadow.clicks).toBe(1);
    expect(after.shadow.tickets - before.shadow.tickets).toBe(1);
    expect(after.shadow.admitted - before.shadow.admitted).toBe(1);
    expect(reserves(after.shadow) - reserves(before.shadow)).toBe(1);
    expect(mismatches(after.shadow) - mismatches(before.shadow)).toBe(1);
    // Real traffic's figures moved by the real token's refusal only.
    expect(after.clicks - before.clicks).toBe(0);
    expect(after.tickets - before.tickets).toBe(0);
    expect(after.admitted - before.admitted).toBe(0);
    expect(reserves(after) - reserves(before)).toBe(0);
    expect(mismatches(after) - mismatches(before)).toBe(1);
  });

  it('lists the waiting line of each live sale that queues, and only those', async () => {
    const queueing = await openActivity({ overflow: 'queue' });
    const rejecting = await openActivity({ overflow: 'reject' });
    const { waitingLine } = await figures();
    expect(waitingLine[queueing]).toBe(0);
    expect(rejecting in waitingLine).toBe(false);
  });
});
