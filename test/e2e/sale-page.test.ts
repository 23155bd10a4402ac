/**
 * The sale page (edge/public) in headless Chromium against a real edge (workerd via Miniflare) and a
 * real origin (Redis, MariaDB, settlement consumers). The browser's clock is an hour fast: the page
 * must count down by the server's clock. Screenshots of each state go to test-artifacts/sale-page/
 * (git-ignored). Where the real stack cannot produce an answer on cue (a stock hint the page does not
 * know, waiting-room and lottery answers at chosen moments: docs/design.md §10), a test stands in for that
 * one answer with page.route and says so in its name; everything else is the real edge and origin.
 *
 * Chromium is Debian's (`scripts/browser.sh` installs it; CHROMIUM_PATH overrides the path) driven by
 * playwright-core; no browser is ever downloaded. Without it this file fails — it never skips.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from 'hono/jwt';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { entrantOf, ticketOf } from '../../origin/lottery/draw-rule.js';
import { ACTIVITY_REGISTRY_KEY } from '../../origin/redis/keys.js';
import { scalar } from '../helpers/db.js';
import { launchBrowser } from '../helpers/browser.js';
import type { RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor, type TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

/** How often the sale page re-reads the activity (REFRESH_MS in edge/public/assets/sale.v5.js). */
const PAGE_REFRESH_MS = 10_000;
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/sale-page/', import.meta.url));
/** How far the buyer's own clock is off: an hour fast. */
const CLIENT_CLOCK_SKEW_MS = 3_600_000;
/** The sale opens this long after it is created. */
const OPENS_IN_MS = 5_000;

let origin: TestOrigin;
let edge: RunningEdge;
let browser: Browser;
const contexts: BrowserContext[] = [];
const createdActivities: { activityId: string; skuId: string }[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ edge, origin } = await startTestStack());
  browser = await launchBrowser('the sale-page test');
});

/**
 * Each test's browser profiles end with it: an open page keeps polling the activity, and a stand-in
 * route still fetching when its context closes would reject after the test (playwright: "Request
 * context disposed").
 */
async function closeContexts() {
  for (const c of contexts.splice(0)) {
    for (const p of c.pages()) await p.unrouteAll({ behavior: 'ignoreErrors' }).catch(() => {});
    await c.close().catch(() => {});
  }
}
afterEach(closeContexts);

afterAll(async () => {
  await closeContexts();
  await browser?.close();
  if (origin) {
    for (const a of createdActivities) {
      const keys = await origin.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
      if (keys.length) await origin.redis.del(...keys);
      await origin.redis.hdel(ACTIVITY_REGISTRY_KEY, a.activityId);
    }
  }
  await edge?.stop();
  await origin?.stop();
});

const tokenFor = async (userId: string) =>
  sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256');

const PRODUCT = {
  description: 'Wireless noise-cancelling headphones, 30 h battery.',
  priceCents: 12_999,
  currency: 'EUR',
  imageUrl: '/assets/demo-product.v1.svg',
};

/** A sale with `stock` units that opens `opensInMs` from now (or as `over` says), warmed and pushed to the edge. */
async function upcomingSale(stock: number, over: Record<string, unknown> = {}, opensInMs = OPENS_IN_MS) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  const startsAt = Date.now() + opensInMs;
  const created = await origin.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: 'Studio headphones',
    stock,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 3_600_000).toISOString(),
    ...PRODUCT,
    ...over,
  });
  expect(created.status).toBe(201);
  createdActivities.push({ activityId, skuId });
  expect((await origin.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return { activityId, startsAt };
}

/** A sale that opened a second ago. */
const openSale = (stock: number, over: Record<string, unknown> = {}) =>
  upcomingSale(stock, {
    startsAt: new Date(Date.now() - 1_000).toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    ...over,
  });

/**
 * A fresh browser profile (own localStorage) whose clock is `skewMs` off; page errors are collected.
 * The behaviour tests wait on string conditions (evaluated, so they need `bypassCSP`); the security
 * test opens the page under its real CSP (`strictCsp`) and waits on selectors only.
 */
async function openPage(
  opts: { skewMs?: number; strictCsp?: boolean; width?: number } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 640, height: 520 },
    bypassCSP: !opts.strictCsp,
    locale: 'en-US',
  });
  contexts.push(context);
  // Every text the live region (#status) takes, in order: what a screen reader is told.
  await context.addInitScript(() => {
    const w = globalThis as any;
    w.__announced = [];
    w.document.addEventListener('DOMContentLoaded', () => {
      const el = w.document.getElementById('status');
      if (!el) return;
      new w.MutationObserver(() => w.__announced.push(el.textContent)).observe(el, {
        childList: true,
        characterData: true,
        subtree: true,
      });
      // The moment the buy button first enables, by the browser's unskewed clock (performance's,
      // which the skewed Date below leaves alone): the page's own event, not when a test saw it.
      const buy = w.document.getElementById('buy');
      if (!buy) return;
      new w.MutationObserver(() => {
        if (!buy.disabled) w.__buyEnabledAt ??= w.performance.timeOrigin + w.performance.now();
      }).observe(buy, { attributes: true, attributeFilter: ['disabled'] });
    });
  });
  if (opts.skewMs) {
    await context.addInitScript((skew: number) => {
      const RealDate = Date;
      class SkewedDate extends RealDate {
        constructor(...args: unknown[]) {
          if (args.length === 0) super(RealDate.now() + skew);
          else super(...(args as [string]));
        }
        static override now() {
          return RealDate.now() + skew;
        }
      }
      (globalThis as any).Date = SkewedDate;
    }, opts.skewMs);
  }
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

/** The `/*` block of edge/public/_headers: header name → value. */
function pageHeadersFile(): Record<string, string> {
  const lines = readFileSync(fileURLToPath(new URL('../../edge/public/_headers', import.meta.url)), 'utf8').split('\n');
  const start = lines.indexOf('/*');
  const headers: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    const m = /^\s+([A-Za-z-]+):\s*(.+)$/.exec(line);
    if (!m) break;
    headers[m[1]!] = m[2]!.trim();
  }
  return headers;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
const text = (page: Page, selector: string) => page.locator(selector).innerText();
/** Browser-side conditions, as strings: this project's type-check has no DOM library. */
const BUY_ENABLED = "!document.getElementById('buy').disabled";
const buyEnabled = (page: Page, timeout = 10_000) => page.waitForFunction(BUY_ENABLED, undefined, { timeout });

const announced = (page: Page) => page.evaluate('window.__announced') as Promise<string[]>;
const statusKind = (page: Page, kind: string, timeout = 15_000) =>
  page.waitForSelector(`#status[data-kind="${kind}"]`, { timeout });

function countdownSeconds(shown: string): number {
  const [h, m, s] = shown.split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
}

it('a buyer whose clock is an hour fast: product and rules, countdown by the server clock, opens on time, "ends in", click → queued → order with pay-by time (announced); a reload shows the same order; a second user sees sold out', async () => {
  const buyer = '8100001';
  const { page, errors } = await openPage({ skewMs: CLIENT_CLOCK_SKEW_MS });
  // Long enough a lead that the page is loaded and read before the start even on a starved machine
  // (the checks below are of the page before its sale opens).
  const opensInMs = 15_000;
  const { activityId, startsAt } = await upcomingSale(1, {}, opensInMs);
  // The public activity carries the rule and the product fields the page shows.
  const pub = (await (await fetch(`${edge.url}/api/activities/${activityId}`)).json()) as Record<string, unknown>;
  expect({
    maxPerUser: pub.maxPerUser,
    description: pub.description,
    priceCents: pub.priceCents,
    currency: pub.currency,
    imageUrl: pub.imageUrl,
  }).toEqual({ maxPerUser: 1, ...PRODUCT });

  // The first reservation poll is held back until the queued state has been seen and photographed.
  let releasePoll!: () => void;
  const pollReleased = new Promise<void>((resolve) => (releasePoll = resolve));
  await page.route('**/api/reservations/**', async (route) => {
    await pollReleased;
    await route.continue();
  });

  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor(buyer)}`);
  expect(new URL(page.url()).searchParams.has('token')).toBe(false); // kept out of the address bar

  // Before the start: the browser's clock says the sale opened an hour ago; the page must not believe it.
  const browserClockAhead = (await page.evaluate(() => Date.now())) - Date.now();
  expect(browserClockAhead).toBeGreaterThan(CLIENT_CLOCK_SKEW_MS - 5_000);
  await page.waitForFunction("/^\\d\\d:\\d\\d:\\d\\d$/.test(document.getElementById('countdown').textContent)");
  const shown = countdownSeconds(await text(page, '#countdown'));
  const expected = (startsAt - Date.now()) / 1000;
  expect(Math.abs(shown - expected)).toBeLessThanOrEqual(1.5);
  expect(shown).toBeGreaterThan(0);
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  expect(await page.locator('#state').getAttribute('data-state')).toBe('upcoming');
  expect(await text(page, '#countdown-label')).toBe('Starts in');
  // The product and the rules, from the public activity.
  expect(await text(page, '#title')).toBe('Studio headphones');
  expect(await text(page, '#price')).toBe('€129.99');
  expect(await text(page, '#description')).toBe(PRODUCT.description);
  expect(await page.locator('#product-image').getAttribute('alt')).toBe('Studio headphones');
  await page.waitForFunction("document.getElementById('product-image').naturalWidth > 0");
  const rules = await page.locator('#rules li').allInnerTexts();
  expect(rules[0]).toBe('One per person.');
  expect(rules[1]).toMatch(/^On sale .+ – .+, while stock lasts\.$/);
  expect(await page.locator('#stock-hint').isHidden()).toBe(true); // no stockHint in the answer: nothing shown
  expect(await page.locator('#quantity-field').isHidden()).toBe(true); // one per person: no quantity to choose
  await shot(page, '1-countdown');

  // At the start (server clock) the button enables — not before, and not much after: the page
  // renders every 250 ms, so its own record of the moment lands within a few renders of the start.
  await buyEnabled(page, opensInMs + 5_000);
  const enabledAt = (await page.evaluate('window.__buyEnabledAt')) as number;
  expect(enabledAt).toBeGreaterThanOrEqual(startsAt - 300);
  expect(enabledAt).toBeLessThanOrEqual(startsAt + 1_500);
  // Then it counts down to the end (the sale lasts an hour).
  expect(await text(page, '#countdown-label')).toBe('Ends in');
  expect(countdownSeconds(await text(page, '#countdown'))).toBeGreaterThan(3_590);
  await shot(page, '2-open');

  // Click → queued (the edge answered 202) → ordered once the origin's consumers settled it.
  await page.focus('#buy');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#status[data-kind="queued"]');
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  // The disabled button gave its focus to the status that explains it.
  expect(await page.evaluate('document.activeElement.id')).toBe('status');
  await shot(page, '3-queued');
  releasePoll();
  await page.waitForSelector('#status[data-kind="ordered"]', { timeout: 15_000 });
  const orderNo = await text(page, '#order-no');
  expect(orderNo).toMatch(/^\S+$/);
  const [rows] = (await origin.db.pool.query('SELECT user_id, order_no FROM seckill_order WHERE activity_id = ?', [
    activityId,
  ])) as any;
  expect(rows.map((r: any) => [String(r.user_id), r.order_no])).toEqual([[buyer, orderNo]]);
  // Nothing more to buy: a repeat would only return the same reservation.
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  const payBy = await text(page, '#status');
  expect(payBy).toMatch(/^Order placed! Pay before \d\d:\d\d:\d\d\.$/);
  expect(await page.locator('#order').isVisible()).toBe(true);
  // The live region told each step once, in order.
  expect(await announced(page)).toEqual(['Requesting…', 'You are in the queue…', payBy]);
  expect(await page.locator('#status').getAttribute('aria-live')).toBe('polite');
  await shot(page, '4-ordered');

  // A reload (token now from localStorage) finds the same order through GET /api/activities/:id/reservation.
  await page.unroute('**/api/reservations/**');
  await page.reload();
  await page.waitForSelector('#status[data-kind="ordered"]', { timeout: 15_000 });
  expect(await text(page, '#order-no')).toBe(orderNo);
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  await shot(page, '5-reloaded');

  // A second user, with a correct clock, in the now sold-out sale.
  const other = await openPage();
  await other.page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8100002')}`);
  await other.page.waitForFunction(`document.getElementById('status').dataset.kind === 'sold_out' || ${BUY_ENABLED}`);
  // The edge already knows (the origin pushed the sold-out flag); if not yet, a click finds out.
  if (await other.page.locator('#buy').isEnabled()) await other.page.click('#buy');
  await other.page.waitForSelector('#status[data-kind="sold_out"]');
  expect(await text(other.page, '#status')).toBe('Sold out.');
  expect(await other.page.locator('#buy').isDisabled()).toBe(true);
  expect(await other.page.locator('#order-no').innerText()).toBe('');
  expect(await announced(other.page)).toContain('Sold out.');
  await shot(other.page, '6-sold-out');
  expect(await scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(
    1,
  );

  expect([...errors, ...other.errors]).toEqual([]);
});

it('a click whose answer was lost: clicking again shows the same order, never a second one', async () => {
  const { activityId } = await origin.sale({ stock: 1 });
  const buyer = '8200001';
  const { page, errors } = await openPage();
  // The first purchase reaches the edge and the origin, but its answer never reaches the page.
  let lost = 0;
  await page.route('**/api/activities/*/purchase*', async (route) => {
    if (lost++ > 0) return route.continue();
    const answer = await route.fetch();
    expect(answer.status()).toBe(202);
    await route.abort('connectionreset');
  });
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor(buyer)}`);
  await buyEnabled(page);
  await page.click('#buy');
  await page.waitForSelector('#status[data-kind="try_later"]');
  expect(await text(page, '#order-no')).toBe('');
  await shot(page, '7-answer-lost');

  // The unit is this user's; the edge now says sold_out to tickets, and the page finds the reservation.
  await buyEnabled(page);
  await page.click('#buy');
  await page.waitForSelector('#status[data-kind="ordered"]', { timeout: 15_000 });
  const orderNo = await text(page, '#order-no');
  const [rows] = (await origin.db.pool.query('SELECT user_id, order_no FROM seckill_order WHERE activity_id = ?', [
    activityId,
  ])) as any;
  expect(rows.map((r: any) => [String(r.user_id), r.order_no])).toEqual([[buyer, orderNo]]);
  await shot(page, '8-clicked-again');
  expect(errors).toEqual([]);
});

it('the token in ?token= never leaves the page: no request carries it in its URL or Referer; the page runs under its strict CSP', async () => {
  const { activityId } = await origin.sale({ stock: 5 });
  const token = await tokenFor('8300001');
  const { page, errors } = await openPage({ strictCsp: true });
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  // Every request the page makes after its own navigation (which is the one that carries ?token=).
  const seen: { url: string; referer: string; authorization: string }[] = [];
  page.on('request', (req) => {
    if (req.isNavigationRequest()) return;
    seen.push({ url: req.url(), referer: '', authorization: '' });
    const entry = seen[seen.length - 1]!;
    void req.allHeaders().then((h) => {
      entry.referer = h.referer ?? '';
      entry.authorization = h.authorization ?? '';
    });
  });
  const res = await page.goto(`${edge.url}/a/${activityId}?token=${token}`);
  expect(res!.headers()['referrer-policy']).toBe('no-referrer');
  expect(res!.headers()['x-content-type-options']).toBe('nosniff');
  expect(res!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
  // The Worker's headers are the ones edge/public/_headers gives the asset server, word for word;
  // images from https hosts (product images on a CDN), nothing else widened.
  expect(Object.keys(pageHeadersFile()).sort()).toEqual([
    'Content-Security-Policy',
    'Referrer-Policy',
    'X-Content-Type-Options',
    'X-Frame-Options',
  ]);
  expect(pageHeadersFile()).toEqual(
    Object.fromEntries(Object.keys(pageHeadersFile()).map((name) => [name, res!.headers()[name.toLowerCase()]])),
  );
  expect(res!.headers()['content-security-policy']).toContain("img-src 'self' https:;");
  // The page works under the CSP: it loaded the sale and looked up the buyer's own reservation.
  await page.waitForSelector('#state[data-state="open"]');
  await page.waitForSelector('#buy:not([disabled])');
  await page.click('#buy');
  await page.waitForSelector('#status[data-kind="queued"], #status[data-kind="ordered"]', { timeout: 15_000 });
  await page.waitForTimeout(200); // let the header promises above settle
  expect(new URL(page.url()).searchParams.has('token')).toBe(false);

  const paths = seen.map((r) => new URL(r.url).pathname);
  expect(paths).toEqual(
    expect.arrayContaining([
      '/assets/sale.v3.css',
      '/assets/sale.v5.js',
      '/assets/sale-flow.v1.js',
      `/api/activities/${activityId}/tickets`,
    ]),
  );
  for (const r of seen) {
    expect(r.url).not.toContain(token);
    expect(r.referer).not.toContain(token);
    expect(r.referer).toBe(''); // no-referrer: nothing at all
  }
  // The token is used where it belongs: the Authorization header of API calls.
  expect(seen.some((r) => r.authorization === `Bearer ${token}`)).toBe(true);
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
});

it('a malformed ?activity= never reaches a fetch path', async () => {
  const { page, errors } = await openPage({ strictCsp: true });
  const apiPaths: string[] = [];
  page.on('request', (req) => {
    const path = new URL(req.url()).pathname;
    if (path.startsWith('/api/') || path.startsWith('/internal/')) apiPaths.push(path);
  });
  for (const bad of ['../../internal/activities', '1/tickets', '12%2F..%2Fx', '-1', '0x10', 'abc']) {
    await page.goto(`${edge.url}/?activity=${encodeURIComponent(bad)}`);
    await page.waitForSelector('#status[data-kind="load_error"]');
    expect(await text(page, '#status')).toBe('No such sale.');
  }
  expect(apiPaths).toEqual([]);
  expect(errors).toEqual([]);
});

/** Takes a ticket and buys `quantity` units as `userId`, outside any page (the real edge and origin). */
async function buyOutside(activityId: string, userId: string, quantity: number) {
  const authorization = `Bearer ${await tokenFor(userId)}`;
  const t = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization },
  });
  expect(t.status).toBe(200);
  const { purchaseUrl } = (await t.json()) as { purchaseUrl: string };
  const p = await fetch(`${edge.url}${purchaseUrl}`, {
    method: 'POST',
    headers: { authorization, 'idempotency-key': `k-${userId}`, 'content-type': 'application/json' },
    body: JSON.stringify({ quantity }),
  });
  expect(p.status).toBe(202);
}

/** Until the edge's public activity carries `hint` (the origin pushes when a line is crossed). */
async function edgeHint(activityId: string, hint: string) {
  const shown = await waitFor(
    async () =>
      ((await (await fetch(`${edge.url}/api/activities/${activityId}`)).json()) as { stockHint?: string }).stockHint,
    (h) => h === hint,
    10_000,
  );
  expect(shown).toBe(hint);
}

it('stock hint (real units left): "Plenty left", "Limited stock", "Only a few left", "None left"; a phone at 375 px reads without sideways scrolling', async () => {
  // 20 units: more than 10 left is plenty, 3–10 limited, 1–2 few (contract/activity.ts hintOf).
  const { activityId } = await openSale(20, { maxPerUser: 20 });
  const { page, errors } = await openPage();
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8400001')}`);
  await page.waitForSelector('#stock-hint[data-hint="plenty"]');
  expect(await text(page, '#stock-hint')).toBe('Plenty left');

  await buyOutside(activityId, '8400011', 10);
  await edgeHint(activityId, 'limited');
  await page.reload();
  await page.waitForSelector('#stock-hint[data-hint="limited"]');
  expect(await text(page, '#stock-hint')).toBe('Limited stock');

  await buyOutside(activityId, '8400012', 8);
  await edgeHint(activityId, 'few');
  await page.reload();
  await page.waitForSelector('#stock-hint[data-hint="few"]');
  expect(await text(page, '#stock-hint')).toBe('Only a few left');
  await buyEnabled(page);
  await shot(page, '9-few-left');

  const phone = await openPage({ width: 375 });
  await phone.page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8400002')}`);
  await phone.page.waitForSelector('#stock-hint[data-hint="few"]');
  await buyEnabled(phone.page);
  await phone.page.waitForFunction("document.getElementById('product-image').naturalWidth > 0");
  expect(await phone.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  const button = (await phone.page.locator('#buy').boundingBox())!;
  expect(button.width).toBeGreaterThan(300); // a thumb-sized, full-width button
  expect(button.height).toBeGreaterThanOrEqual(44);
  await shot(phone.page, '10-phone');

  await buyOutside(activityId, '8400013', 2);
  await edgeHint(activityId, 'sold_out');
  await page.reload();
  await page.waitForSelector('#stock-hint[data-hint="sold_out"]');
  expect(await text(page, '#stock-hint')).toBe('None left');
  expect([...errors, ...phone.errors]).toEqual([]);
});

it('a stock hint the page does not know (stood in: the real edge only sends known values) shows nothing', async () => {
  const { activityId } = await openSale(5);
  const { page, errors } = await openPage();
  await page.route(`**/api/activities/${activityId}`, async (route) => {
    const real = await route.fetch();
    await route.fulfill({ response: real, json: { ...(await real.json()), stockHint: '<img src=x>' } });
  });
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8400003')}`);
  await page.waitForSelector('#state[data-state="open"]');
  expect(await page.locator('#stock-hint').isHidden()).toBe(true);
  expect(errors).toEqual([]);
});

it('paused, reopened and ended by the operator: the page follows the sale state (real switches)', async () => {
  const { activityId } = await openSale(5);
  const { page, errors } = await openPage();
  // The page re-reads the activity every 10 s (3 s while paused): the test moves the page's clock
  // past each re-read instead of waiting for it (playwright's clock; the sale runs for an hour).
  await page.clock.install();
  const nextRefresh = () => page.clock.fastForward(PAGE_REFRESH_MS + 1_000);
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8500001')}`);
  await buyEnabled(page);
  expect((await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'paused' })).status).toBe(200);
  await nextRefresh();
  await statusKind(page, 'paused');
  expect(await text(page, '#status')).toBe('The sale is paused; it may resume shortly.');
  expect(await text(page, '#state')).toBe('Paused');
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  await shot(page, '11-paused');

  expect((await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'open' })).status).toBe(200);
  await nextRefresh();
  await buyEnabled(page);
  expect(await text(page, '#status')).toBe('');

  expect((await origin.admin('PATCH', `/admin/activities/${activityId}`, { state: 'stopped' })).status).toBe(200);
  await nextRefresh();
  await statusKind(page, 'ended');
  expect(await text(page, '#status')).toBe('The sale has ended.');
  expect(await text(page, '#countdown-label')).toBe('Ended');
  expect(await page.locator('#buy').isDisabled()).toBe(true);
  await shot(page, '12-ended');
  expect(await announced(page)).toEqual(['The sale is paused; it may resume shortly.', '', 'The sale has ended.']);
  expect(errors).toEqual([]);
});

it('rate-limited (429 + Retry-After from the real user gate): a retry countdown beside the status, announced once, then it buys by itself', async () => {
  // One ticket per 4 s for this user; a ticket taken outside the page uses it up.
  const { activityId } = await openSale(3, { userRatePerSec: 0.25 });
  const token = await tokenFor('8600001');
  const { page, errors } = await openPage();
  await page.goto(`${edge.url}/a/${activityId}?token=${token}`);
  await buyEnabled(page);
  const outside = await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(outside.status).toBe(200);
  await page.click('#buy');
  await statusKind(page, 'rate_limited');
  expect(await text(page, '#status')).toBe('Too many tries; retrying');
  const first = await text(page, '#status-timer');
  expect(first).toMatch(/^in [1-4] s$/);
  await shot(page, '13-rate-limited');
  await page.waitForFunction(
    `(t => t !== ${JSON.stringify(first)} && /^in \\d s$/.test(t))(document.getElementById('status-timer').textContent)`,
  );
  expect(await text(page, '#status')).toBe('Too many tries; retrying'); // the seconds tick, the message stays
  await statusKind(page, 'ordered', 20_000);
  const said = await announced(page);
  expect(said.filter((t) => t === 'Too many tries; retrying')).toHaveLength(1);
  expect(said.at(-1)).toMatch(/^Order placed!/);
  expect(errors).toEqual([]);
});

it('insufficient stock (real 409): 3 asked, 2 left — the quantity is labelled and the page says to ask for fewer', async () => {
  const { activityId } = await openSale(2, { maxPerUser: 3 });
  const { page, errors } = await openPage();
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8700001')}`);
  await buyEnabled(page);
  expect(await page.locator('#rules li').first().innerText()).toBe('At most 3 per person.');
  await page.getByLabel('Quantity').fill('3');
  await page.click('#buy');
  await statusKind(page, 'insufficient_stock');
  expect(await text(page, '#status')).toBe('Not enough left for that many; try a smaller quantity.');
  await buyEnabled(page); // not sold out: a smaller request may still succeed
  await shot(page, '14-insufficient-stock');
  await page.getByLabel('Quantity').fill('2');
  await page.click('#buy');
  await statusKind(page, 'ordered');
  expect(
    await scalar(origin.db.pool, 'SELECT SUM(quantity) FROM seckill_order WHERE activity_id = ?', [activityId]),
  ).toBe(2);
  expect(errors).toEqual([]);
});

it('not eligible (a members-only sale, real edge check) and denied (real deny list): final, the button stays off', async () => {
  const members = await openSale(3, { eligibility: { claim: 'tier', values: ['gold'] } });
  const open = await openSale(3);
  const deniedUser = '8800002';
  const denied = await origin.admin('PUT', `/admin/deny/${deniedUser}`);
  expect(await denied.json()).toEqual({ userId: deniedUser, denied: true, atEdge: true });
  try {
    for (const [activityId, userId, code, textShown, name] of [
      [members.activityId, '8800001', 'not_eligible', 'This sale is for eligible members only.', '15-not-eligible'],
      [open.activityId, deniedUser, 'denied', 'Your account cannot buy in this sale.', '16-denied'],
    ] as const) {
      const { page, errors } = await openPage();
      await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor(userId)}`);
      await buyEnabled(page);
      await page.click('#buy');
      await statusKind(page, code);
      expect(await text(page, '#status')).toBe(textShown);
      expect(await page.locator('#buy').isDisabled()).toBe(true);
      await shot(page, name);
      expect(errors).toEqual([]);
    }
  } finally {
    expect((await origin.admin('DELETE', `/admin/deny/${deniedUser}`)).status).toBe(200);
  }
});

/**
 * The lottery and waiting-room answers (docs/design.md §10) are stood in at the purchase URL and at their
 * poll URLs; the purchase itself is then made for real, so the result is a real reservation and order.
 */
async function standInQueue(page: Page, answers: ((realPurchase: () => Promise<unknown>) => Promise<unknown>)[]) {
  let purchase!: { url: string; headers: Record<string, string>; body: string };
  const realPurchase = async () => {
    const res = await fetch(purchase.url, { method: 'POST', headers: purchase.headers, body: purchase.body });
    return res.json();
  };
  const polls: number[] = [];
  await page.route('**/api/activities/*/purchase*', async (route) => {
    const req = route.request();
    purchase = { url: req.url(), headers: await req.allHeaders(), body: req.postData() ?? '' };
    await route.fulfill({ status: 202, json: await answers[0]!(realPurchase) });
  });
  await page.route(/\/api\/activities\/\d+\/(entries|waiting)\//, async (route) => {
    polls.push(Date.now());
    const next = answers[Math.min(polls.length, answers.length - 1)]!;
    await route.fulfill({ status: 200, json: await next(realPurchase) });
  });
  return polls;
}

it('waiting room (answers stood in): "You are number N in line — about M s", counting down, polled at pollAfterMs, then the order with no retry', async () => {
  const { activityId } = await openSale(3);
  const { page, errors } = await openPage();
  const pollUrl = `/api/activities/${activityId}/waiting/w-8900001`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const polls = await standInQueue(page, [
    async () => ({ status: 'waiting', position: 11, etaSeconds: 30, pollUrl, pollAfterMs: 1000 }),
    async () => ({ status: 'waiting', position: 11, etaSeconds: 29, pollAfterMs: 1000 }),
    async () => {
      await released;
      return { status: 'waiting', position: 2, etaSeconds: 3, pollAfterMs: 1000 };
    },
    async (real) => real(),
  ]);
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('8900001')}`);
  await buyEnabled(page);
  await page.click('#buy');
  await statusKind(page, 'waiting');
  expect(await text(page, '#status')).toBe('You are number 12 in line');
  const line = await text(page, '#status-line');
  expect(line).toMatch(/^You are number 12 in line — about (30|29|28) s$/);
  await page.waitForFunction(`(t => t !== ${JSON.stringify(line)})(document.getElementById('status-line').innerText)`);
  const later = Number(/about (\d+) s/.exec(await text(page, '#status-line'))![1]);
  expect(later).toBeLessThan(Number(/about (\d+) s/.exec(line)![1]));
  await shot(page, '17-waiting');
  release();
  await page.waitForFunction("document.getElementById('status').textContent === 'You are number 3 in line'");
  await statusKind(page, 'ordered');
  // Polls were spaced by pollAfterMs (never faster than 1 s).
  for (let i = 1; i < polls.length; i++) expect(polls[i]! - polls[i - 1]!).toBeGreaterThanOrEqual(900);
  expect(await scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(
    1,
  );
  const said = await announced(page);
  expect(said).toEqual(
    expect.arrayContaining(['You are number 12 in line', 'You are number 3 in line', 'You are in the queue…']),
  );
  expect(said.filter((t) => t === 'You are number 12 in line')).toHaveLength(1); // the ticking is not announced
  expect(errors).toEqual([]);
});

it('lottery (answers stood in): "You\'re in the draw — results at hh:mm:ss", drawing, then the order; a losing entrant sees "not drawn"', async () => {
  const { activityId } = await openSale(3);
  // The page shows the time as the browser's clock will read it: it takes off its estimate of the
  // server − browser offset (here the same clock, so the estimate's error, at most half the round
  // trip of the page's activity read: a few ms idle, more on a loaded machine). The shown second is
  // drawAt's, or a neighbour's when that error passes the half second drawAt stands from each.
  const drawAt = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000 + 500);
  const pollUrl = `/api/activities/${activityId}/entries/e-9000001`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const { page, errors } = await openPage();
  await standInQueue(page, [
    async () => ({ status: 'entered', entryId: 'e-9000001', pollUrl, drawAt: drawAt.toISOString() }),
    async () => ({ status: 'drawing' }),
    async () => {
      await released; // held until the drawing state has been seen
      return { status: 'drawing' };
    },
    async (real) => real(),
  ]);
  await page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('9000001')}`);
  await buyEnabled(page);
  await page.click('#buy');
  await statusKind(page, 'entered');
  // The browser's own time zone (UTC here) and clock.
  const hhmmss = (at: number) =>
    page.evaluate(
      `(d => [d.getHours(), d.getMinutes(), d.getSeconds()].map(n => String(n).padStart(2, '0')).join(':'))(new Date(${at}))`,
    );
  const seconds = await Promise.all([-1_000, 0, 1_000].map((d) => hhmmss(drawAt.getTime() + d)));
  for (const t of seconds) expect(t).toMatch(/^\d\d:\d\d:\d\d$/);
  expect(seconds.map((t) => `You're in the draw — results at ${String(t)}`)).toContain(await text(page, '#status'));
  await shot(page, '18-entered');
  await statusKind(page, 'drawing');
  expect(await text(page, '#status')).toBe('Drawing the winners…');
  await shot(page, '19-drawing');
  release();
  await statusKind(page, 'ordered');
  expect(await scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(
    1,
  );

  const loser = await openPage();
  await standInQueue(loser.page, [
    async () => ({ status: 'entered', entryId: 'e-9000002', pollUrl: pollUrl.replace('e-9000001', 'e-9000002') }),
    async () => ({ status: 'lost' }),
  ]);
  await loser.page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('9000002')}`);
  await buyEnabled(loser.page);
  await loser.page.click('#buy');
  await statusKind(loser.page, 'lost');
  expect(await text(loser.page, '#status')).toBe('Not drawn this time — every unit went to other entrants.');
  expect(await announced(loser.page)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^You're in the draw — results at /),
      'Not drawn this time — every unit went to other entrants.',
    ]),
  );
  await shot(loser.page, '20-lost');
  expect([...errors, ...loser.errors]).toEqual([]);
});

it('lottery through the real draw: two entrants click inside the window, one unit; the revealed seed\'s pick sees the order, the other "not drawn"', async () => {
  const { activityId } = await upcomingSale(1, { admission: 'lottery', lotteryWindowMs: 6_000 });
  const users = ['9100001', '9100002'];
  const pages = await Promise.all(users.map(() => openPage()));
  await Promise.all(
    pages.map(async ({ page }, i) => page.goto(`${edge.url}/a/${activityId}?token=${await tokenFor(users[i]!)}`)),
  );
  await Promise.all(pages.map(({ page }) => buyEnabled(page, 15_000)));
  await Promise.all(pages.map(({ page }) => page.click('#buy')));
  for (const { page } of pages) {
    await statusKind(page, 'entered');
    expect(await text(page, '#status')).toMatch(/^You're in the draw — results at \d\d:\d\d:\d\d$/);
  }
  await shot(pages[0]!.page, '21-entered-real');

  // After the window the origin draws by itself; the public activity then reveals the seed.
  const pub = await waitFor(
    async () => (await (await fetch(`${edge.url}/api/activities/${activityId}`)).json()) as Record<string, any>,
    (p) => typeof p.drawSeed === 'string',
    30_000,
  );
  const ticket = (u: string) => ticketOf(pub.drawSeed, pub.drawEntrantsDigest, entrantOf(pub.drawSeed, u));
  const winner = users.reduce((a, b) => (ticket(a) < ticket(b) ? a : b));
  for (const [i, { page }] of pages.entries()) {
    if (users[i] === winner) {
      await statusKind(page, 'ordered', 30_000);
      await shot(page, '22-drawn-ordered');
    } else {
      await statusKind(page, 'lost', 30_000);
      expect(await text(page, '#status')).toBe('Not drawn this time — every unit went to other entrants.');
      await shot(page, '23-drawn-lost');
    }
  }
  expect(
    await scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ? AND user_id = ?', [
      activityId,
      winner,
    ]),
  ).toBe(1);
  expect(await scalar(origin.db.pool, 'SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?', [activityId])).toBe(
    1,
  );
  expect(pages.flatMap((p) => p.errors)).toEqual([]);
});
