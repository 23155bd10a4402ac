/**
 * The sale page (edge/public) in headless Chromium against a real edge (workerd via Miniflare) and a
 * real origin (Redis, MariaDB, settlement consumers). The browser's clock is an hour fast: the page
 * must count down by the server's clock. Screenshots of each state go to test-artifacts/sale-page/.
 *
 * Chromium is Debian's (`scripts/browser.sh` installs it; CHROMIUM_PATH overrides the path) driven by
 * playwright-core; no browser is ever downloaded. Without it this file fails — it never skips.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from 'hono/jwt';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ACTIVITY_REGISTRY_KEY } from '../../origin/redis/keys.js';
import { scalar } from '../helpers/db.js';
import type { RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { uniqueId } from '../helpers/ids.js';
import { waitFor, type TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The flags these machines need (no sandbox as root, and nothing that reaches for the network). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
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
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: the sale-page test needs a real browser. Run scripts/browser.sh ` +
        `(installs Debian's 'chromium') or set CHROMIUM_PATH.`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ edge, origin } = await startTestStack());
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
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

/** A sale with `stock` units that opens OPENS_IN_MS from now, warmed and pushed to the edge. */
async function upcomingSale(stock: number) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  const startsAt = Date.now() + OPENS_IN_MS;
  const created = await origin.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: `Browser sale ${activityId}`,
    stock,
    startsAt: new Date(startsAt).toISOString(),
    endsAt: new Date(startsAt + 3_600_000).toISOString(),
  });
  expect(created.status).toBe(201);
  createdActivities.push({ activityId, skuId });
  expect((await origin.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return { activityId, startsAt };
}

/**
 * A fresh browser profile (own localStorage) whose clock is `skewMs` off; page errors are collected.
 * The behaviour tests wait on string conditions (evaluated, so they need `bypassCSP`); the security
 * test opens the page under its real CSP (`strictCsp`) and waits on selectors only.
 */
async function openPage(
  opts: { skewMs?: number; strictCsp?: boolean } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 640, height: 520 }, bypassCSP: !opts.strictCsp });
  contexts.push(context);
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

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
const text = (page: Page, selector: string) => page.locator(selector).innerText();
/** Browser-side conditions, as strings: this project's type-check has no DOM library. */
const BUY_ENABLED = "!document.getElementById('buy').disabled";
const buyEnabled = (page: Page, timeout = 10_000) => page.waitForFunction(BUY_ENABLED, undefined, { timeout });

function countdownSeconds(shown: string): number {
  const [h, m, s] = shown.split(':').map(Number);
  return h! * 3600 + m! * 60 + s!;
}

it('a buyer whose clock is an hour fast: countdown by the server clock, opens on time, click → queued → order; a reload shows the same order; a second user sees sold out', async () => {
  const buyer = '8100001';
  const { page, errors } = await openPage({ skewMs: CLIENT_CLOCK_SKEW_MS });
  const { activityId, startsAt } = await upcomingSale(1);

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
  await shot(page, '1-before-start');

  // At the start (server clock) the button enables — not before, and not much after.
  await buyEnabled(page, OPENS_IN_MS + 5_000);
  const enabledAt = Date.now();
  expect(enabledAt).toBeGreaterThanOrEqual(startsAt - 300);
  expect(enabledAt).toBeLessThanOrEqual(startsAt + 1_500);
  // Then it counts down to the end (the sale lasts an hour).
  expect(await text(page, '#countdown-label')).toBe('Ends in');
  expect(countdownSeconds(await text(page, '#countdown'))).toBeGreaterThan(3_590);
  await shot(page, '2-open');

  // Click → queued (the edge answered 202) → ordered once the origin's consumers settled it.
  await page.click('#buy');
  await page.waitForSelector('#status[data-kind="queued"]');
  expect(await page.locator('#buy').isDisabled()).toBe(true);
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
  await shot(other.page, '6-sold-out-second-user');
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
  // The page works under the CSP: it loaded the sale and looked up the buyer's own reservation.
  await page.waitForSelector('#state[data-state="open"]');
  await page.waitForSelector('#buy:not([disabled])');
  await page.click('#buy');
  await page.waitForSelector('#status[data-kind="queued"], #status[data-kind="ordered"]', { timeout: 15_000 });
  await page.waitForTimeout(200); // let the header promises above settle
  expect(new URL(page.url()).searchParams.has('token')).toBe(false);

  const paths = seen.map((r) => new URL(r.url).pathname);
  expect(paths).toEqual(expect.arrayContaining(['/assets/sale.v3.css', '/assets/sale.v5.js', '/assets/sale-flow.v1.js', `/api/activities/${activityId}/tickets`]));
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
