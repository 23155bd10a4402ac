/**
 * Watching a sale with a real Prometheus (docs/watching-a-sale.md): Debian's Prometheus runs with
 * the repo's config and rules against a live stack — edge, origin on a Redis of its own, order events
 * delivered — under a steady stream of purchases, on a shorter clock: scrape and evaluation every 1 s
 * instead of 5 s, and every window and `for:` of the shipped rules divided by TIME_DIVISOR (30 s →
 * 10 s; the shipped times themselves are proved by promtool, test/ops/alert-rules.test.ts). Two faults:
 * - consumers stopped: the reservation backlog grows → BacklogGrowing pending, then firing after
 *   its `for:`; consumers back → it resolves;
 * - Redis refusing writes (CLIENT PAUSE WRITE): reserve answers time out, then 503 → the success
 *   rate falls → SuccessRateBelowBaseline pending, firing after its `for:`, and the console's
 *   success-rate banner says so in Chromium; Redis back → it resolves.
 * A screenshot of Prometheus' alerts page while each fires goes to test-artifacts/watching-a-sale/.
 * Then the Grafana dashboard: every panel's query names metrics the origin exports and returns data.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signEdgeRequest } from '../../contract/signing.js';
import { Settlement } from '../../origin/settlement/settlement.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';
import { startEventReceiver } from '../helpers/event-receiver.js';
import { TEST_SECRETS, waitFor } from '../helpers/origin.js';
import {
  PROMETHEUS_DIR,
  startPrometheus,
  testPrometheusConfig,
  type RunningPrometheus,
} from '../helpers/prometheus.js';
import { launchBrowser } from '../helpers/browser.js';
import { openConsole, readBanner } from '../helpers/console-page.js';
import { startPersistentRedis, type PersistentRedis } from '../helpers/redis-server.js';
import { startTestStack, type TestStack } from '../helpers/stack.js';
import { purchaseThroughEdge } from '../helpers/watching.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/watching-a-sale/', import.meta.url));
const CONSOLE_ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));
const EVENTS_SECRET = 'watching-events-secret-0123456789';
/** Purchases per second sent to the origin while the test runs (distinct buyers). */
const LOAD_PER_SECOND = 20;
/** Every window and `for:` of the shipped rules is divided by this (30 s → 10 s). */
const TIME_DIVISOR = 3;
/** The `for:` of both alerts under test, on that clock. */
const FOR_SECONDS = 30 / TIME_DIVISOR;
/** Longest wait for an alert's step: a deadline for a hang, far above its window and `for:`. */
const STEP_TIMEOUT_MS = 100_000;

let redisServer: PersistentRedis;
let redis: Redis;
let receiver: Awaited<ReturnType<typeof startEventReceiver>>;
let stack: TestStack;
let prometheus: RunningPrometheus;
let activityId: string;
let load: { stop(): Promise<void>; answers: Map<number, number> };
let settlement: Settlement | null = null;
/** What each fault did, for the report at the end. */
const timeline: Record<string, Record<string, number | string | string[]>> = {};

/** Signed purchases straight to the origin, LOAD_PER_SECOND of them, each by a new buyer. */
function startLoad(originUrl: string, activityId: string) {
  const answers = new Map<number, number>();
  let user = 9_000_000;
  let running = true;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    if (!running) return;
    const userId = String(++user);
    const body = JSON.stringify({ activityId, userId, quantity: 1, requestId: `w-${userId}` });
    const call = (async () => {
      const headers = await signEdgeRequest(TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET, {
        method: 'POST',
        pathWithQuery: '/internal/reserve',
        body,
      });
      const res = await fetch(`${originUrl}/internal/reserve`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      }).catch(() => null);
      await res?.arrayBuffer();
      answers.set(res?.status ?? 0, (answers.get(res?.status ?? 0) ?? 0) + 1);
    })();
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call));
  }, 1000 / LOAD_PER_SECOND);
  return {
    answers,
    async stop() {
      running = false;
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

interface AlertView {
  state: 'pending' | 'firing';
  activeAt: string;
  labels: Record<string, string>;
}

async function alertState(name: string): Promise<AlertView | undefined> {
  const data = await prometheus.api<{ alerts: (AlertView & { labels: { alertname: string } })[] }>('alerts');
  return data.alerts.find((a) => a.labels.alertname === name);
}

/** Fault → pending → firing → (fix) → resolved, with the seconds each step took after the fault. */
async function throughAlert(
  name: string,
  fault: () => Promise<void>,
  fix: () => Promise<void>,
  shot: string,
  whileFiring?: () => Promise<void>,
) {
  // Quiet first: on a loaded machine a hiccup of the healthy stack may hold the alert pending a while.
  await waitFor(
    () => alertState(name),
    (a) => a === undefined,
    STEP_TIMEOUT_MS,
    250,
  );
  const at = Date.now();
  const since = () => Math.round((Date.now() - at) / 100) / 10;
  await fault();
  await waitFor(
    () => alertState(name),
    (a) => a?.state === 'pending',
    STEP_TIMEOUT_MS,
    250,
  );
  const pending = since();
  const firing = await waitFor(
    () => alertState(name),
    (a) => a?.state === 'firing',
    STEP_TIMEOUT_MS,
    250,
  );
  const fired = since();
  const alongside = (await prometheus.api<{ alerts: AlertView[] }>('alerts')).alerts
    .filter((a) => a.state === 'firing' && a.labels.alertname !== name)
    .map((a) => a.labels.alertname!);
  await screenshot(shot, name);
  await whileFiring?.();
  const fixedAt = since();
  await fix();
  await waitFor(
    () => alertState(name),
    (a) => a === undefined,
    STEP_TIMEOUT_MS,
    250,
  );
  const resolved = since();
  timeline[name] = { pending, firing: fired, fixed: fixedAt, resolved, alsoFiring: alongside };
  // The `for:` held between pending and firing (evaluated every second).
  expect(fired - pending).toBeGreaterThanOrEqual(FOR_SECONDS - 1);
  return firing!;
}

/**
 * Prometheus' alerts page with `alertName` open, while it fires. Debian's build serves the classic
 * UI (/classic/alerts: a row per rule, red while firing, details expand on a click); an upstream
 * build serves the React one at /alerts.
 */
async function screenshot(file: string, alertName: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const classic = (await fetch(`${prometheus.url}/classic/alerts`)).ok;
  const browser = await launchBrowser('the alerts screenshot');
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${prometheus.url}${classic ? '/classic/alerts' : '/alerts'}`, { waitUntil: 'networkidle' });
    if (classic) {
      const header = page.locator('tr.alert_header', { hasText: alertName }).first();
      expect(await header.getAttribute('class')).toContain('alert-danger'); // red: firing
      await header.click();
      const details = header.locator('xpath=following-sibling::tr[1]');
      await details.getByText('firing').first().waitFor({ timeout: 10_000 });
    } else {
      await page.getByText(alertName).first().waitFor({ timeout: 10_000 });
    }
    await page.screenshot({ path: join(ARTIFACTS, file), fullPage: true });
  } finally {
    await browser.close();
  }
}

beforeAll(async () => {
  redisServer = await startPersistentRedis('everysec');
  redis = new Redis(redisServer.url);
  receiver = await startEventReceiver(EVENTS_SECRET, () => ({ status: 200 }));
  stack = await startTestStack({
    originEnv: {
      REDIS_URL: redisServer.url,
      ORDER_EVENTS_URL: receiver.url,
      ORDER_EVENTS_SECRET: EVENTS_SECRET,
      RECONCILE_INTERVAL_MS: '2000',
      METRICS_CACHE_MS: '500',
      // The console's banners judge over the alerts' window on this clock.
      CONSOLE_ALERT_WINDOW_SECONDS: String(30 / TIME_DIVISOR),
    },
  });
  const target = new URL(stack.origin.url).host;
  prometheus = await startPrometheus(testPrometheusConfig({ target, intervalSeconds: 1, timeDivisor: TIME_DIVISOR }));
  ({ activityId } = await stack.origin.sale({ stock: 1_000_000 }));
  // A sale with a waiting line, so the edge's waiting-line series has a sale to show.
  await stack.origin.sale({ stock: 10, overflow: 'queue' });
  // A few buyers through the edge, for the edge's figures (clicks, tickets, admissions, refusals).
  await purchaseThroughEdge(stack.edge.url, activityId, ['8100001', '8100002', '8100003']);
  load = startLoad(stack.origin.url, activityId);
}, 120_000);

afterAll(async () => {
  // What the Redis slow log caught during the faults (RedisSlowlogRising fired beside them here).
  const slow = (await redis?.slowlog('GET', 20).catch(() => [])) as [number, number, number, string[]][];
  timeline.slowlog = { entries: slow.length, commands: slow.map(([, , us, args]) => `${args[0]} ${us}us`) };
  await load?.stop();
  await settlement?.stop();
  await prometheus?.stop();
  await stack?.stop();
  await receiver?.close();
  redis?.disconnect();
  await redisServer?.stop();
  if (Object.keys(timeline).length) {
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'timeline.json'), JSON.stringify(timeline, null, 2));
    console.log('watching-a-sale timeline (seconds after the fault):', JSON.stringify(timeline));
  }
});

it('consumers stopped: BacklogGrowing goes pending, fires after its `for:`, resolves once they are back', async () => {
  // Healthy first: Prometheus scrapes the origin and the backlog stays flat.
  await waitFor(
    () => prometheus.api('query?query=seckill:order_success_ratio:rate30s'),
    // Well above the alert line (80 % of the baseline); a stray slow answer on a busy box may dent it.
    (d: any) => d.result.length === 1 && Number(d.result[0].value[1]) >= 0.95,
    60_000,
    500,
  );
  const running = stack.origin.origin;
  const firing = await throughAlert(
    'BacklogGrowing',
    () => running.settlement!.stop(),
    async () => {
      const { db, redis: stock, log, metrics, config } = running.parts;
      settlement = new Settlement({
        db,
        registry: stock.registry,
        streams: stock.streams,
        sales: stock.sales,
        log,
        metrics,
        config,
      });
      await settlement.start();
    },
    'backlog-growing-firing.png',
  );
  expect(firing.labels).toMatchObject({ activity: activityId, severity: 'page' });
  // Only the backlog: every answer was still decided.
  expect(timeline.BacklogGrowing).toBeDefined();
}, 300_000);

it('reserve answers failing: SuccessRateBelowBaseline goes pending, fires after its `for:`, resolves once Redis is back', async () => {
  const firing = await throughAlert(
    'SuccessRateBelowBaseline',
    async () => {
      await redis.client('PAUSE', 300_000, 'WRITE');
    },
    async () => {
      await redis.client('UNPAUSE');
    },
    'success-rate-firing.png',
    // The console says it too, in words, while the alert fires.
    async () => {
      const browser = await launchBrowser('the console banner of a low success rate');
      try {
        const tab = await openConsole(browser, stack.origin.url, TEST_SECRETS.ADMIN_TOKEN, `#/sale/${activityId}`);
        await readBanner(
          tab.page,
          'success_rate',
          /^Critical: Order success rate [\d.]+ % over the last 10 s, below 80 % of the baseline \([\d.]+ %\): buyers get errors or timeouts instead of answers\. Since \d\d:\d\d:\d\d\. Next:/,
          60_000,
        );
        mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
        await tab.page.screenshot({ path: join(CONSOLE_ARTIFACTS, 'banner-success-rate.png'), fullPage: true });
        // The browser logs each read that Redis failed (503 unavailable, as the contract says); no
        // other error.
        console.log(`console errors while Redis refused writes: ${JSON.stringify(tab.errors)}`);
        expect(tab.errors.filter((e) => !/status of 503/.test(e))).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
  expect(firing.labels).toMatchObject({ severity: 'page' });
  // The answers the buyers got while Redis held writes: 503s.
  expect(load.answers.get(503) ?? 0).toBeGreaterThan(0);
}, 300_000);

it('the Grafana dashboard: every query names metrics the origin exports and returns data', async () => {
  const dashboard = JSON.parse(readFileSync(join(PROMETHEUS_DIR, '../grafana/sale-dashboard.json'), 'utf8'));
  const recording = readFileSync(join(PROMETHEUS_DIR, 'recording.yml'), 'utf8');
  const baseline = readFileSync(join(PROMETHEUS_DIR, 'baseline.yml'), 'utf8');
  const exported = await (await fetch(`${stack.origin.url}/metrics`)).text();
  const exportedNames = new Set([...exported.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => m[1]!));
  const isExported = (name: string) =>
    exportedNames.has(name) || exportedNames.has(name.replace(/_(sum|count|bucket)$/, ''));
  const names = (expr: string) =>
    [...expr.matchAll(/\b(seckill[_:][a-z0-9_:]+|nodejs_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
  /** A recording rule's name stands for the metrics its expression reads. */
  const ruleExpr = (name: string) => new RegExp(`record: ${name}\\n\\s+expr: (.+)`).exec(recording + baseline)?.[1];
  const missing: string[] = [];
  const empty: string[] = [];
  const panels = dashboard.panels.filter((p: { type: string }) => p.type !== 'row');
  expect(panels.length).toBe(13);
  // The shadow rehearsal's panel reads only shadow series: empty while no shadow sale runs, as here.
  const shadowPanel = (title: string) => title.startsWith('Shadow rehearsal');
  for (const panel of panels)
    for (const { expr } of panel.targets as { expr: string }[]) {
      for (const name of names(expr)) {
        const sources = name.includes(':') ? names(ruleExpr(name) ?? 'unknown_rule') : [name];
        for (const source of sources)
          if (source.includes(':') ? !ruleExpr(source) : !isExported(source)) missing.push(`${panel.title}: ${source}`);
      }
      const data = await prometheus.api<{ result: unknown[] }>(`query?query=${encodeURIComponent(expr)}`);
      if (data.result.length === 0 && !shadowPanel(panel.title)) empty.push(`${panel.title}: ${expr}`);
    }
  expect(missing).toEqual([]);
  expect(empty).toEqual([]);
});
