/**
 * The operator console (origin/console/, docs/console.md) in headless Chromium against a real edge
 * (workerd via Miniflare) and a real origin (Redis, MariaDB, settlement). Every action is clicked in
 * the console and confirmed in its dialog; what it changed is checked on the real edge and in MySQL.
 * The console runs under its real strict CSP (no bypass): conditions are waited on by selector.
 * Screenshots go to test-artifacts/console/ (git-ignored).
 *
 * Chromium is Debian's (`scripts/browser.sh`; CHROMIUM_PATH overrides), driven by playwright-core.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sign } from 'hono/jwt';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ACTIVITY_REGISTRY_KEY } from '../../origin/redis/keys.js';
import { launchBrowser } from '../helpers/browser.js';
import type { RunningEdge } from '../helpers/edge.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { uniqueId } from '../helpers/ids.js';
import { pay } from '../helpers/lifecycle.js';
import { TEST_SECRETS, waitFor, type TestOrigin } from '../helpers/origin.js';
import { startTestStack } from '../helpers/stack.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
/** The operator signed in by default: one of ADMIN_TOKENS (32 characters, the floor off loopback). */
const OPERATOR = 'alice.ops';
const OPERATOR_TOKEN = 'alice-ops-token-0123456789abcdef';

let origin: TestOrigin;
let edge: RunningEdge;
let browser: Browser;
const contexts: BrowserContext[] = [];
const created: { activityId: string; skuId: string }[] = [];
const logLines: any[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line));
    done();
  },
});

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ edge, origin } = await startTestStack({
    // The scheduled warm-up picks a new sale up within a second of its creation.
    // A reservation settlement cannot write is dead-lettered at its first failure (the dead-letter test).
    originEnv: {
      WARMUP_LEAD_SECONDS: '60',
      WARMUP_VERIFY_SECONDS: '0',
      WARMUP_SCAN_MS: '200',
      SETTLE_MAX_DELIVERIES: '1',
      // The shared ADMIN_TOKEN (TEST_SECRETS, `admin`) stays beside it: the setup calls use it.
      ADMIN_TOKENS: `${OPERATOR}:${OPERATOR_TOKEN}`,
    },
    originLog: pino({ level: 'info' }, sink),
  }));
  browser = await launchBrowser('the console test');
});

async function closeContexts() {
  for (const c of contexts.splice(0)) await c.close().catch(() => {});
}
afterEach(closeContexts);

afterAll(async () => {
  await closeContexts();
  await browser?.close();
  if (origin) {
    for (const a of created) {
      const keys = await origin.redis.keys(`sk:{${a.activityId}:${a.skuId}}:*`);
      if (keys.length) await origin.redis.del(...keys);
      await origin.redis.hdel(ACTIVITY_REGISTRY_KEY, a.activityId);
    }
  }
  await edge?.stop();
  await origin?.stop();
});

/** The sale row's shadow flag in MySQL (0 or 1). */
async function shadowFlag(activityId: string): Promise<number> {
  const [rows] = (await origin.db.pool.query('SELECT shadow FROM seckill_activity WHERE id = ?', [activityId])) as any;
  return Number(rows[0].shadow);
}

/** A console tab (real CSP) at `width`; page errors and CSP violations are collected. */
async function openConsole(opts: { width?: number; height?: number } = {}) {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 },
    locale: 'en-GB',
  });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 40[0-9]/.test(m.text())) errors.push(m.text());
  });
  await page.goto(`${origin.url}/admin/console/`);
  return { page, errors };
}

/** Types the token and presses Enter: the token is all the prompt asks for. */
async function signIn(page: Page, token = OPERATOR_TOKEN) {
  await page.waitForSelector('#login:not([hidden])');
  await page.fill('#login-token', token);
  await page.press('#login-token', 'Enter');
}

/** Clicks `selector`, then Confirm in the dialog. */
async function confirmClick(page: Page, selector: string) {
  await page.click(selector);
  await page.waitForSelector('#confirm[open]');
  await page.click('#confirm-ok');
  await page.waitForSelector('#confirm:not([open])', { state: 'attached' });
}

/**
 * Until `expression` (evaluated in the page over CDP, which the page's CSP does not govern, unlike
 * waitForFunction's string predicates) is truthy.
 */
const until = (page: Page, expression: string, timeoutMs = 5_000) =>
  waitFor(
    () => page.evaluate(expression),
    (v) => Boolean(v),
    timeoutMs,
  );

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
const text = (page: Page, selector: string) => page.locator(selector).innerText();
const tokenFor = (userId: string) =>
  sign({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 }, TEST_EDGE_SECRETS.USER_TOKEN_SECRET, 'HS256');
const publicActivity = async (activityId: string) =>
  (await (await fetch(`${edge.url}/api/activities/${activityId}`)).json()) as {
    state: string;
    version: number;
    stockHint?: string;
  };

/** A real purchase through the edge: ticket, then purchase (202 queued). */
async function buy(activityId: string, userId: string, quantity = 1) {
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
  expect(p.status, await p.clone().text()).toBe(202);
}

/** An open, warmed sale made through the admin API (for the tests that start from a running sale). */
async function openSale(over: Record<string, unknown> = {}) {
  const activityId = uniqueId();
  const skuId = uniqueId();
  const res = await origin.admin('POST', '/admin/activities', {
    activityId,
    skuId,
    title: 'Console test sale',
    stock: 5,
    startsAt: new Date(Date.now() - 1_000).toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    ...over,
  });
  expect(res.status).toBe(201);
  created.push({ activityId, skuId });
  expect((await origin.admin('POST', `/admin/activities/${activityId}/warmup`)).status).toBe(200);
  return activityId;
}

const orderNos = async (activityId: string) => {
  const [found] = (await origin.db.pool.query('SELECT order_no FROM seckill_order WHERE activity_id = ? ORDER BY id', [
    activityId,
  ])) as any;
  return (found as { order_no: string }[]).map((r) => r.order_no);
};

it('a visit without the token gets the login prompt and no data; a wrong token is refused and brings the prompt back', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  const requests: string[] = [];
  const violations: string[] = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  page.on('console', (m) => {
    if (/Content Security Policy/.test(m.text())) violations.push(m.text());
  });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${origin.url}/admin/console/`);
  await page.waitForSelector('#login:not([hidden])');
  expect(await page.locator('#sales-view').isHidden()).toBe(true);
  expect(await page.locator('#sale-view').isHidden()).toBe(true);
  // The shell and its modules only: not one data call.
  expect(requests.every((p) => /^\/admin\/console\/([a-z-]+\.(js|css))?$/.test(p))).toBe(true);
  expect(requests.filter((p) => p.includes('/api/'))).toEqual([]);
  // Keyboard: the token field has focus on arrival.
  expect(await page.evaluate('document.activeElement.id')).toBe('login-token');
  await page.screenshot({ path: join(ARTIFACTS, '1-login.png') });

  // A wrong token: the origin refuses it (401), the prompt comes back with its message, no rows drawn.
  await signIn(page, 'not-the-token-0123');
  await page.waitForSelector('#login:not([hidden])');
  await until(page, "document.getElementById('login-error').textContent.length > 0");
  expect(await text(page, '#login-error')).toBe('admin token is not valid');
  expect(await page.locator('#sales tbody tr').count()).toBe(0);
  expect(await page.evaluate('sessionStorage.getItem("consoleToken")')).toBeNull();
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
});

it('create a sale from the form (the API’s messages inline first), then watch it open and sell', async () => {
  const { page, errors } = await openConsole();
  await signIn(page);
  await page.waitForSelector('#create-form button[type=submit]');
  const activityId = uniqueId();
  const skuId = uniqueId();

  // What the API refuses, the form refuses, each message beside its field.
  await page.fill('#f-activityId', activityId);
  await page.fill('#f-skuId', skuId);
  await page.fill('#f-stock', '0');
  await page.fill('#f-initialRelease', '3');
  await page.click('#create-form button[type=submit]');
  await page.waitForSelector('#f-stock[aria-invalid=true]');
  expect(await text(page, '#e-stock')).toBe('stock must be at least 1: a sale with nothing to sell is refused');
  expect(await text(page, '#e-title')).not.toBe('');
  expect(await page.getAttribute('#f-title', 'aria-invalid')).toBe('true');
  expect(await page.evaluate('document.activeElement.id')).toBe('f-title'); // the first refused field
  await shot(page, '2-form-refused');
  const [none] = (await origin.db.pool.query('SELECT COUNT(*) AS n FROM seckill_activity WHERE id = ?', [
    activityId,
  ])) as any;
  expect(Number(none[0].n)).toBe(0);

  // Then a good sale: opens in 20 s (time to see it upcoming on a loaded machine), 5 units, 3 of them on sale at first (initialRelease kept from above).
  const startsAt = new Date(Date.now() + 20_000).toISOString();
  await page.fill('#f-title', 'Console-made sale');
  await page.fill('#f-stock', '5');
  await page.fill('#f-startsAt', startsAt);
  await page.fill('#f-endsAt', new Date(Date.now() + 3_600_000).toISOString());
  await page.fill('#f-maxPerUser', '2');
  await page.selectOption('#f-overflow', 'queue');
  await page.click('#create-form button[type=submit]');
  await page.waitForSelector('#open-created');
  created.push({ activityId, skuId });
  expect(await page.locator('#f-stock[aria-invalid]').count()).toBe(0);
  const row = (await (await origin.admin('GET', `/admin/activities/${activityId}`)).json()) as any;
  const config = row.config;
  expect(row).toMatchObject({
    config: { title: 'Console-made sale', maxPerUser: 2, overflow: 'queue' },
    state: 'open',
  });
  // In the sales list at once.
  await page.waitForSelector(`#sales tr[data-activity="${activityId}"]`);

  await page.click('#open-created');
  await page.waitForSelector('#sale-public-state[data-public="upcoming"]');
  expect(await text(page, '#countdown-label')).toBe('Starts in');
  await shot(page, '3-upcoming');
  // The scheduled warm-up loads it; the console shows the verification, then the opening.
  await page.waitForSelector('#warmup-status[data-ok="true"]', { timeout: 40_000 });
  await page.waitForSelector('#sale-public-state[data-public="open"]', { timeout: 40_000 });
  expect(await text(page, '#countdown-label')).toBe('Ends in');
  await page.waitForSelector('#edge-applied[data-applied="true"]');

  // The funnel counts this origin process's reservations (all sales): two more after two purchases.
  const reservedCell = `document.querySelector('#funnel tr[data-step="reserved"] td:last-child').textContent`;
  const reservedBefore = Number(await page.evaluate(reservedCell));
  await buy(activityId, '9100001', 2);
  await buy(activityId, '9100002', 1);
  // Sold out: reserved in the funnel, two orders settled, units left and the buckets follow.
  await until(
    page,
    `${reservedCell} === '${reservedBefore + 2}' &&
     document.getElementById('stock-figures').textContent.includes('0 of 3 on sale')`,
    10_000,
  );
  expect(await text(page, '#buckets tbody')).toBe('0\t0');
  await page.waitForSelector('#sale-public-state[data-public="sold_out"]');
  await waitFor(
    async () => (await orderNos(activityId)).length,
    (n) => n === 2,
    10_000,
  );
  await page.waitForSelector('#rec-status[data-ok="true"]');
  expect(await text(page, '#signals')).toContain('Queue backlog');
  // A queue sale's waiting line is the edge's own count (its signed waiting-room figures): nobody
  // waits. Each read of the edge is bounded by EDGE_PUSH_TIMEOUT_MS; on a loaded machine one may run
  // out (the console then shows n/a for that second), so the next reads are waited for.
  const line = await waitFor(
    async () =>
      ((await (await origin.admin('GET', `/admin/console/api/sales/${activityId}/live`)).json()) as any).waitingLine,
    (n) => n !== null,
    5_000,
  );
  expect(line).toBe(0);
  await until(page, `document.getElementById('stock-figures').innerText.includes('Waiting line\\n0')`);
  await page.click('a[href="#/sales"]');
  await until(
    page,
    `(() => { const r = document.querySelector('#sales tr[data-activity="${activityId}"]');
       return r && [...r.cells].map((c) => c.textContent).slice(1).join('|') === 'open|sold_out|0|2|2|0|0'; })()`,
  );
  await shot(page, '4-sales-list');
  // The box left unticked: a real sale (its config carries no shadow flag, its row says 0).
  expect(config).not.toHaveProperty('shadow');
  expect(await shadowFlag(activityId)).toBe(0);

  // The same form with the shadow box ticked makes a shadow sale, marked as one in the list.
  const shadowId = uniqueId();
  const shadowSku = uniqueId();
  await page.fill('#f-activityId', shadowId);
  await page.fill('#f-skuId', shadowSku);
  await page.fill('#f-title', 'Console-made rehearsal');
  await page.fill('#f-startsAt', new Date(Date.now() + 60_000).toISOString());
  await page.check('#f-shadow');
  await page.click('#create-form button[type=submit]');
  await page.waitForSelector(`#open-created[href="#/sale/${shadowId}"]`);
  created.push({ activityId: shadowId, skuId: shadowSku });
  const shadowRow = (await (await origin.admin('GET', `/admin/activities/${shadowId}`)).json()) as any;
  expect(shadowRow.config).toMatchObject({ title: 'Console-made rehearsal', shadow: true });
  expect(await shadowFlag(shadowId)).toBe(1);
  await until(
    page,
    `document.querySelector('#sales tr[data-activity="${shadowId}"] th')?.textContent === '[SHADOW] Console-made rehearsal (${shadowId})'`,
  );
  expect(errors).toEqual([]);
});

it('pause from the console: the public page says paused, the console shows the edge applied it, the actor is recorded; reopen, rates (by keyboard), threshold, eligibility, deny and allow', async () => {
  const activityId = await openSale();
  const buyer = await browser.newContext({ viewport: { width: 640, height: 600 }, locale: 'en-US' });
  contexts.push(buyer);
  const salePage = await buyer.newPage();
  await salePage.goto(`${edge.url}/a/${activityId}?token=${await tokenFor('9200001')}`);
  await until(salePage, "!document.getElementById('buy').disabled");

  const { page, errors } = await openConsole();
  const claimedActors: string[] = [];
  page.on('request', (r) => {
    const claimed = r.headers()['x-admin-actor'];
    if (claimed !== undefined) claimedActors.push(claimed);
  });
  await signIn(page);
  // The origin named the token's operator; the page shows that name, nothing typed.
  await page.waitForSelector('#who:not([hidden])');
  expect(await text(page, '#who')).toBe(`Signed in as ${OPERATOR} · Sign out`);
  await page.goto(`${origin.url}/admin/console/#/sale/${activityId}`);
  await page.waitForSelector('#edge-applied[data-applied="true"]');
  const before = Number(await page.getAttribute('#edge-applied', 'data-version'));

  await page.click('#sw-pause');
  await page.waitForSelector('#confirm[open]');
  expect(await text(page, '#confirm-text')).toBe('Pause the sale?');
  const clicked = Date.now();
  await page.click('#confirm-ok');
  // The public answer every sale page reads turns paused (the time it took is logged below; speed is
  // for benchmarks to measure, not a test).
  const paused = await waitFor(
    () => publicActivity(activityId),
    (a) => a.state === 'paused',
    30_000,
    20,
  );
  const pausedAfterMs = Date.now() - clicked;
  // The console says the edge applied the new version.
  await page.waitForSelector(`#edge-applied[data-version="${paused.version}"][data-applied="true"]`);
  expect(paused.version).toBe(before + 1);
  expect(await text(page, '#edge-applied')).toMatch(
    /^Edge applied version \d+ \(paused\), \d+\.\d s after “Pause the sale”\.$/,
  );
  expect(await text(page, '#action-result')).toMatch(new RegExp(`^Pause the sale: done by ${OPERATOR} at`));
  await page.waitForSelector('#sale-public-state[data-public="paused"]');
  // The buyer's page, read again, says so.
  await salePage.reload();
  await salePage.waitForSelector('#status[data-kind="paused"]');
  expect(await salePage.locator('#status').innerText()).toBe('The sale is paused; it may resume shortly.');
  await shot(page, '5-paused');
  // Recorded with the token's operator as actor; the console claims no actor of its own.
  const change = logLines.find((l) => l.msg === 'activity changed' && l.activityId === activityId);
  expect(change).toMatchObject({ actor: OPERATOR, changes: { state: { from: 'open', to: 'paused' } } });
  console.log(`pause → public answer paused after ${pausedAfterMs} ms`);

  // Reopen and the rates, by keyboard: Tab to the field, type, Enter on Apply.
  await confirmClick(page, '#sw-reopen');
  await page.waitForSelector('#sale-public-state[data-public="open"]');
  await page.focus('#sw-user-rate');
  await page.keyboard.type('3');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#confirm[open]');
  await page.keyboard.press('Tab'); // Cancel has focus first; Tab to Confirm
  await page.keyboard.press('Enter');
  await until(page, "document.getElementById('now-user-rate').textContent === 'now 3/s'");
  // A refused value shows the API's message and changes nothing.
  await page.fill('#sw-admission-rate', '0');
  await confirmClick(page, '#sw-admission-rate-apply');
  await page.waitForSelector('#action-result[data-kind="error"]');
  expect(await text(page, '#action-result')).toMatch(/refused \(bad_request\): admissionRatePerSec: /);
  const cfg = ((await (await origin.admin('GET', `/admin/activities/${activityId}`)).json()) as any).config;
  expect([cfg.userRatePerSec, cfg.admissionRatePerSec]).toEqual([3, 5000]);

  // Sold-out threshold, eligibility on and off: each confirmed, each in MySQL's config.
  await page.fill('#sw-threshold', '1');
  await confirmClick(page, '#sw-threshold-apply');
  await until(page, "document.getElementById('now-threshold').textContent === 'now 1'");
  await page.fill('#sw-claim', 'tier');
  await page.fill('#sw-values', 'gold, silver');
  await confirmClick(page, '#sw-eligibility-on');
  await until(page, "document.getElementById('now-eligibility').textContent === 'now: tier ∈ {gold, silver}'");
  const members = ((await (await origin.admin('GET', `/admin/activities/${activityId}`)).json()) as any).config;
  expect([members.soldOutThreshold, members.eligibility]).toEqual([1, { claim: 'tier', values: ['gold', 'silver'] }]);
  await confirmClick(page, '#sw-eligibility-off');
  await until(page, "document.getElementById('now-eligibility').textContent === 'now: off'");

  // Deny a user: the edge refuses their ticket (403 denied); allow: it issues one again.
  const denied = '9200009';
  const ticket = async () =>
    (
      await fetch(`${edge.url}/api/activities/${activityId}/tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await tokenFor(denied)}` },
      })
    ).status;
  await page.fill('#sw-user', denied);
  await confirmClick(page, '#sw-deny');
  await until(
    page,
    `document.getElementById('action-result').textContent.startsWith('Deny user ${denied}: done by ${OPERATOR}')`,
  );
  expect(await waitFor(ticket, (st) => st === 403, 3_000)).toBe(403);
  const [row] = (await origin.db.pool.query('SELECT denied, actor FROM seckill_deny_list WHERE user_id = ?', [
    denied,
  ])) as any;
  expect(row[0]).toEqual({ denied: 1, actor: OPERATOR });
  await confirmClick(page, '#sw-allow');
  expect(await waitFor(ticket, (st) => st === 200, 3_000)).toBe(200);
  expect(claimedActors).toEqual([]);
  expect(logLines.filter((l) => l.claimedActor !== undefined)).toEqual([]);
  expect(errors).toEqual([]);
});

it('signed in with the shared ADMIN_TOKEN the console shows and records `admin`, also after a reload', async () => {
  const activityId = await openSale();
  const { page, errors } = await openConsole();
  await signIn(page, TEST_SECRETS.ADMIN_TOKEN);
  await page.waitForSelector('#who:not([hidden])');
  expect(await text(page, '#who-name')).toBe('admin');
  await page.goto(`${origin.url}/admin/console/#/sale/${activityId}`);
  await page.waitForSelector('#sale-public-state[data-public="open"]');
  // A reload forgets the name (it is kept in memory only) and asks the origin again.
  await page.reload();
  await page.waitForSelector('#sale-public-state[data-public="open"]');
  expect(await text(page, '#who-name')).toBe('admin');

  const denied = '9250001';
  await page.fill('#sw-user', denied);
  await confirmClick(page, '#sw-deny');
  await until(
    page,
    `document.getElementById('action-result').textContent.startsWith('Deny user ${denied}: done by admin at')`,
  );
  const [row] = (await origin.db.pool.query('SELECT denied, actor FROM seckill_deny_list WHERE user_id = ?', [
    denied,
  ])) as any;
  expect(row[0]).toEqual({ denied: 1, actor: 'admin' });
  expect(errors).toEqual([]);
});

it('release a tranche from the console, and the stock hint moves', async () => {
  // 20 units, 10 on sale; 9 sold leaves 1 of 10 ("few"); releasing 10 makes 11 of 20 ("plenty").
  const activityId = await openSale({ stock: 20, initialRelease: 10, maxPerUser: 10 });
  await buy(activityId, '9300001', 9);
  const { page, errors } = await openConsole({ width: 1024, height: 1366 }); // a tablet, upright
  await signIn(page);
  await page.goto(`${origin.url}/admin/console/#/sale/${activityId}`);
  await page.waitForSelector('#edge-applied[data-stock-hint="few"]', { timeout: 10_000 });
  expect(await text(page, '#now-held-back')).toBe('10 held back');

  await page.fill('#sw-release', '10');
  await confirmClick(page, '#sw-release-apply');
  await page.waitForSelector('#edge-applied[data-stock-hint="plenty"]', { timeout: 5_000 });
  expect((await publicActivity(activityId)).stockHint).toBe('plenty');
  await until(page, "document.getElementById('now-held-back').textContent === '0 held back'");
  expect(await text(page, '#stock-figures')).toContain('11 of 20 on sale');
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1024);
  await shot(page, '6-tablet-released');
  expect(errors).toEqual([]);
});

it('stop the sale, read the report, and the cleanup checklist ticks item by item as each is verified', async () => {
  const activityId = await openSale({ stock: 3 });
  await buy(activityId, '9400001');
  const [orderNo] = await waitFor(
    () => orderNos(activityId),
    (o) => o.length === 1,
    10_000,
  );
  const { page, errors } = await openConsole();
  await signIn(page);
  await page.goto(`${origin.url}/admin/console/#/sale/${activityId}`);
  await page.waitForSelector('#sale-public-state[data-public="open"]');

  await page.click('#sw-stop');
  await page.waitForSelector('#confirm[open]');
  // Escape cancels: nothing changes.
  await page.keyboard.press('Escape');
  await page.waitForSelector('#confirm:not([open])', { state: 'attached' });
  expect((await publicActivity(activityId)).state).toBe('open');
  await confirmClick(page, '#sw-stop');
  await page.waitForSelector('#sale-public-state[data-public="ended"]');
  await waitFor(
    async () => (await publicActivity(activityId)).state,
    (s) => s === 'ended',
    2_000,
  );

  // Stopped with an order awaiting payment: not settled, nothing cleaned yet.
  await page.waitForSelector('#checklist li[data-item="ended"][data-ok="true"]');
  await page.waitForSelector('#checklist li[data-item="settled"][data-ok="false"]');
  expect(await page.isChecked('#check-ended')).toBe(true);
  expect(await page.isChecked('#check-settled')).toBe(false);
  await page.waitForSelector('#checklist li[data-item="rate_rules_removed"][data-ok="true"]');
  expect(await page.isChecked('#check-warmup_removed')).toBe(false);
  expect(await page.isChecked('#check-redis_keys_expire')).toBe(false);
  // Cleanup now is refused with the origin's reason.
  await confirmClick(page, '#run-cleanup');
  await page.waitForSelector('#action-result[data-kind="error"]');
  expect(await text(page, '#action-result')).toContain('1 orders still wait for payment or timeout');

  expect((await pay(origin, orderNo!)).status).toBe(200);
  await page.waitForSelector('#checklist li[data-item="settled"][data-ok="true"]');
  await page.click('#read-report');
  await page.waitForSelector('#report-figures');
  const report = await text(page, '#report-figures');
  expect(report).toContain('clean');
  expect(report).toContain('1 (1 paid, 0 awaiting payment, 0 timed out)');
  await shot(page, '7-report');

  await confirmClick(page, '#run-cleanup');
  await page.waitForSelector('#checklist[data-done="true"]', { timeout: 5_000 });
  for (const id of ['ended', 'settled', 'reconciled', 'warmup_removed', 'redis_keys_expire', 'rate_rules_removed'])
    expect(await page.isChecked(`#check-${id}`)).toBe(true);
  // Verified against the real state: every key of the sale expires, the registry forgot it.
  const keys = await origin.redis.keys(`sk:{${activityId}:*`);
  expect(keys.length).toBeGreaterThan(0);
  for (const key of keys) expect(await origin.redis.ttl(key)).toBeGreaterThan(0);
  expect(await origin.redis.hexists(ACTIVITY_REGISTRY_KEY, activityId)).toBe(0);
  await shot(page, '8-cleaned-up');
  expect(errors).toEqual([]);
});

it('dead letters: Retry re-queues one into an order, Compensate gives one up; a parked order event is sent again', async () => {
  const activityId = await openSale({ stock: 3 });
  // Two units vanish from MySQL: two of three reservations cannot settle and become dead letters.
  await origin.db.pool.query('UPDATE seckill_stock SET available = 1 WHERE activity_id = ?', [activityId]);
  for (const user of ['9500001', '9500002', '9500003']) await buy(activityId, user);
  const deadCount = async () => {
    const [r] = (await origin.db.pool.query('SELECT COUNT(*) AS n FROM seckill_dead_letter WHERE activity_id = ?', [
      activityId,
    ])) as any;
    return Number(r[0].n);
  };
  await waitFor(deadCount, (n) => n === 2, 15_000);
  // A parked order event of this sale (stood in: this stack sends no order events, so none can park).
  const orderNo = (await orderNos(activityId))[0]!;
  const eventId = `${orderNo}:order.paid`;
  await origin.db.pool.query(
    `INSERT INTO order_event_outbox (event_id, type, order_no, activity_id, user_id, quantity, status, attempts, last_error)
     VALUES (?, 'order.paid', ?, ?, 9500001, 1, 2, 10, 'connect ECONNREFUSED')`,
    [eventId, orderNo, activityId],
  );

  const { page, errors } = await openConsole();
  await signIn(page);
  await page.goto(`${origin.url}/admin/console/#/sale/${activityId}`);
  await page.waitForSelector('#dead-letters tbody tr:nth-child(2)');
  const statuses = () => page.locator('#dead-letters tbody td:nth-child(5)').allInnerTexts();
  expect(await statuses()).toEqual(['open', 'open']);
  await page.waitForSelector(`#parked tbody th:text("${eventId}")`);
  await shot(page, '9-dead-letters');

  // The operator restores the missing units, then retries the first: it settles into an order.
  await origin.db.pool.query('UPDATE seckill_stock SET available = available + 2 WHERE activity_id = ?', [activityId]);
  await confirmClick(page, '#dead-letters tbody tr:nth-child(1) button:text("Retry")');
  await waitFor(
    async () => (await orderNos(activityId)).length,
    (n) => n === 2,
    10_000,
  );
  await waitFor(statuses, (s) => s[0] === 'retried', 5_000);
  // Compensate the second: given up, its units were already back in Redis.
  await confirmClick(page, '#dead-letters tbody tr:nth-child(2) button:text("Compensate (give up)")');
  await waitFor(statuses, (s) => s[1] === 'given_up', 5_000);
  expect(await page.locator('#dead-letters tbody tr:nth-child(2) button:text("Retry")').isDisabled()).toBe(true);
  await page.waitForSelector('#rec-status[data-ok="true"]');

  await confirmClick(page, `#parked tbody tr:has(th:text("${eventId}")) button`);
  await waitFor(
    async () => {
      const [r] = (await origin.db.pool.query('SELECT status, attempts FROM order_event_outbox WHERE event_id = ?', [
        eventId,
      ])) as any;
      return r[0];
    },
    (r) => r.status === 0 && r.attempts === 0,
    5_000,
  );
  await page.waitForSelector(`#parked tbody td:text("None.")`);
  await origin.db.pool.query('DELETE FROM order_event_outbox WHERE event_id = ?', [eventId]);
  expect(errors).toEqual([]);
});
