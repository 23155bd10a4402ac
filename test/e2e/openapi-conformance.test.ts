/**
 * The OpenAPI documents against the running stack (real edge in workerd, real origin, Redis, MariaDB):
 * a purchase made with the client typed by the public document (docs/openapi/public-api.d.ts), and
 * sampled answers — a purchase 202, a 409 sold out, a 429 with Retry-After, a reservation poll, an
 * admin PATCH — each checked against the document's schema for its status. Also: the documents as the
 * edge and the origin serve them, and the operators' API reference page under the console's CSP.
 */
import { readFileSync } from 'node:fs';
import { sign } from 'hono/jwt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { publicRoutes } from '../../contract/openapi/public.js';
import { adminRoutes } from '../../origin/openapi/admin.js';
import type { RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { launchBrowser } from '../helpers/browser.js';
import { answerOf, conformance } from '../helpers/openapi-conformance.js';
import { TEST_SECRETS, type TestOrigin } from '../helpers/origin.js';
import { publicClient } from '../helpers/public-client.js';
import { startTestStack } from '../helpers/stack.js';

let origin: TestOrigin;
let edge: RunningEdge;

beforeAll(async () => {
  ({ edge, origin } = await startTestStack());
});
afterAll(async () => {
  await edge?.stop();
  await origin?.stop();
});

const publicConforms = conformance(publicRoutes, 'docs/openapi/public.json');
const adminConforms = conformance(adminRoutes, 'docs/openapi/admin.json');

const userToken = (userId: string) =>
  sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256');

/** The ticket query of a `purchaseUrl`. */
const ticketOf = (purchaseUrl: string) => new URL(purchaseUrl, 'http://edge').searchParams.get('t')!;

it('a purchase through the edge with the generated client: ticket 200, purchase 202, poll 200, then 409 sold out; each as documented', async () => {
  const client = publicClient(edge.url);
  const { activityId } = await origin.sale({ stock: 1 });
  const [buyer, late] = [await userToken('8100001'), await userToken('8100002')];

  const activity = await client.request('get', '/api/activities/{id}', { params: { path: { id: activityId } } });
  publicConforms('get', '/api/activities/:id', activity);
  expect(activity.status).toBe(200);

  // Both take a ticket while the unit is there; the second buyer comes too late.
  const tickets = [];
  for (const token of [buyer, late]) {
    const ticket = await client.request('post', '/api/activities/{id}/tickets', {
      params: { path: { id: activityId } },
      token,
    });
    publicConforms('post', '/api/activities/:id/tickets', ticket);
    if (ticket.status !== 200) throw new Error(`ticket: ${ticket.status} ${JSON.stringify(ticket.body)}`);
    tickets.push(ticket.body.purchaseUrl);
  }

  const bought = await client.request('post', '/api/activities/{id}/purchase', {
    params: { path: { id: activityId }, query: { t: ticketOf(tickets[0]!) }, header: { 'Idempotency-Key': 'oa-1' } },
    body: { quantity: 1 },
    token: buyer,
  });
  publicConforms('post', '/api/activities/:id/purchase', bought);
  if (bought.status !== 202) throw new Error(`purchase: ${bought.status} ${JSON.stringify(bought.body)}`);
  expect(bought.body.status).toBe('queued');
  if (!('reservationId' in bought.body)) throw new Error('a reservation was expected');

  const poll = await client.request('get', '/api/reservations/{reservationId}', {
    params: { path: { reservationId: bought.body.reservationId } },
    token: buyer,
  });
  publicConforms('get', '/api/reservations/:reservationId', poll);
  expect(poll.status).toBe(200);

  const soldOut = await client.request('post', '/api/activities/{id}/purchase', {
    params: { path: { id: activityId }, query: { t: ticketOf(tickets[1]!) }, header: { 'Idempotency-Key': 'oa-2' } },
    body: { quantity: 1 },
    token: late,
  });
  publicConforms('post', '/api/activities/:id/purchase', soldOut);
  expect(soldOut.status).toBe(409);
  if (soldOut.status === 409) expect(soldOut.body.error).toBe('sold_out');
});

it('a 429 carries Retry-After, as documented', async () => {
  const client = publicClient(edge.url);
  const { activityId } = await origin.sale({ stock: 10 });
  const token = await userToken('8100003');
  // userRatePerSec 1 (the default): tickets asked for back to back run into the user's gate.
  let limited;
  for (let i = 0; i < 10 && !limited; i++) {
    const answer = await client.request('post', '/api/activities/{id}/tickets', {
      params: { path: { id: activityId } },
      token,
    });
    publicConforms('post', '/api/activities/:id/tickets', answer);
    if (answer.status === 429) limited = answer;
  }
  expect(limited?.status).toBe(429);
  expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
});

it('an admin PATCH and its refusals answer as the admin document says', async () => {
  const { activityId } = await origin.sale({ stock: 5 });
  const path = '/admin/activities/:id';
  adminConforms(
    'patch',
    path,
    await answerOf(await origin.admin('PATCH', `/admin/activities/${activityId}`, { userRatePerSec: 2 })),
  );
  adminConforms(
    'patch',
    path,
    await answerOf(await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'nope' })),
  );
  adminConforms(
    'patch',
    path,
    await answerOf(
      await origin.admin('PATCH', `/admin/activities/${activityId}`, { userRatePerSec: 2 }, 'not-a-token'),
    ),
  );
  adminConforms('get', path, await answerOf(await origin.admin('GET', `/admin/activities/${activityId}`)));
});

it('the edge serves the public document; the origin serves its own behind the admin token', async () => {
  const served = await fetch(`${edge.url}/api/openapi.json`);
  expect(served.status).toBe(200);
  expect(await served.json()).toEqual(JSON.parse(readFileSync('docs/openapi/public.json', 'utf8')));

  const withToken = await answerOf(await origin.admin('GET', '/admin/openapi.json'));
  adminConforms('get', '/admin/openapi.json', withToken);
  const paths = Object.keys((withToken.body as { paths: object }).paths);
  expect(paths).toEqual(expect.arrayContaining(['/admin/activities/{id}', '/internal/reserve', '/payments/callback']));
  adminConforms('get', '/admin/openapi.json', await answerOf(await fetch(`${origin.url}/admin/openapi.json`)));
});

it("the API reference is Swagger UI from this origin, under the console's CSP: no inline script, nothing from elsewhere", async () => {
  const page = await fetch(`${origin.url}/admin/api-reference/`);
  expect(page.status).toBe(200);
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self';");
  expect(csp).toContain("connect-src 'self';");
  const html = await page.text();
  expect(html).not.toMatch(/<script>|<script [^>]*>[^<]+<\/script>|https?:\/\//);
  for (const src of html.match(/(?<=(?:src|href)=")\/admin\/api-reference\/[^"]+/g) ?? []) {
    const file = await fetch(origin.url + src);
    expect(file.status, src).toBe(200);
  }
  expect((await fetch(`${origin.url}/admin/api-reference/elsewhere.js`)).status).toBe(404);
});

it("an operator opens the reference from the console: Swagger UI renders the origin's document with the console's token, no CSP violation", async () => {
  const browser = await launchBrowser('the API reference test');
  try {
    const page = await browser.newPage();
    const problems: string[] = [];
    // The browser's own favicon request (no response event) logs a 404 line; failed requests are counted below.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${origin.url}/admin/console/`);
    // Signed in as the console does it: the token in this tab's sessionStorage.
    await page.evaluate(`sessionStorage.setItem('consoleToken', ${JSON.stringify(TEST_SECRETS.ADMIN_TOKEN)})`);
    await page.click('a[href="/admin/api-reference/"]');
    // Parsing the bundle and rendering ~40 operations takes seconds on a busy two-core box.
    await page.waitForSelector('.opblock', { state: 'attached', timeout: 60_000 });
    await page.getByText('The live switches: state, rates, sold-out threshold, eligibility').waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(30);
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
  }
}, 120_000);
