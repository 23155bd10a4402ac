/**
 * `npm start`: the whole stack on this machine (docs/design.md §7). Redis and MariaDB up (scripts/services.sh),
 * migrations applied, the origin (HTTP + consumers + jobs, as `npm run origin`) and the edge (wrangler
 * dev, as `npm run edge`, off the network) as child processes, then a demo activity that opens a little
 * later. Prints the sale page URL with a ready user token, and the metrics URL. Ctrl-C / SIGTERM stops
 * both children's whole process groups (wrangler's workerd included) and waits until they are gone.
 *
 * package.json runs it with `exec`, so a SIGTERM sent to npm reaches this process (a plain `sh -c`
 * would die of it and leave everything running).
 *
 * Environment (all optional): PORT (origin, 3000), EDGE_PORT (8787), REDIS_URL, MYSQL_URL, the secrets
 * of docs/design.md §9 (dev defaults otherwise, the same for origin and edge), DEMO_OPENS_IN_SECONDS (30),
 * DEMO_STOCK (10), DEMO_USER (42), START_SKIP_SERVICES=1 (Redis/MySQL are managed elsewhere),
 * START_PROMETHEUS (`auto`: run Prometheus beside the stack when it is installed; `1`: required;
 * `0`: not), PROMETHEUS_PORT (9090). Prometheus scrapes the origin with the repo's rules
 * (ops/prometheus) and its alerts page URL is printed (docs/watching-a-sale.md).
 *
 * The demo sale belongs to this run: on Ctrl-C it is stopped (MySQL keeps its orders as history) and
 * its Redis keys and registry entry are removed, so a Redis shared with other stacks keeps no
 * leftovers and the next run's consumers do not look after it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type OriginConfig } from '../origin/platform/config.js';
import { DEV_SECRETS } from '../origin/platform/secret-rules.js';
import { migrate } from '../origin/platform/db/migrate.js';
import { createLogger } from '../origin/platform/logger.js';
import { RedisStore, type Sale } from '../origin/redis/redis-store.js';
import { EDGE_DEV_DEFAULTS } from './dev-defaults.js';
import { prometheusConfig } from './prometheus-config.js';
import { mintUserToken, userTokenSecret } from './token.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOG_DIR = join(ROOT, 'tmp', 'start');
const env = process.env;

const ORIGIN_PORT = Number(env.PORT || 3000);
const EDGE_PORT = Number(env.EDGE_PORT || 8787);
const ORIGIN_URL = `http://127.0.0.1:${ORIGIN_PORT}`;
const EDGE_URL = `http://127.0.0.1:${EDGE_PORT}`;
const ADMIN_TOKEN = env.ADMIN_TOKEN || DEV_SECRETS.ADMIN_TOKEN;
/** One value for both sides, or the origin refuses every edge call. */
const EDGE_ORIGIN_SECRET = env.EDGE_ORIGIN_SECRET || EDGE_DEV_DEFAULTS.EDGE_ORIGIN_SECRET;
const DEMO_OPENS_IN_SECONDS = Number(env.DEMO_OPENS_IN_SECONDS || 30);
const DEMO_STOCK = Number(env.DEMO_STOCK || 10);
const DEMO_USER = env.DEMO_USER || '42';
const START_PROMETHEUS = env.START_PROMETHEUS || 'auto';
const PROMETHEUS_PORT = Number(env.PROMETHEUS_PORT || 9090);
const PROMETHEUS_PATH = env.PROMETHEUS_PATH || '/usr/bin/prometheus';

/** How long each part may take to come up; wrangler's first start bundles the Worker. */
const ORIGIN_READY_TIMEOUT_MS = 30_000;
const EDGE_READY_TIMEOUT_MS = 120_000;
/** After SIGTERM, a process group gets this long (the origin drains within SHUTDOWN_GRACE_MS, 10 s). */
const STOP_GRACE_MS = 15_000;

interface Part {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<void>;
}

const parts: Part[] = [];
let stopping: Promise<never> | null = null;
let config: OriginConfig | undefined;
/** This run's demo sale, once created: retired on the way out. */
let demoSale: Sale | undefined;
/** How long the stop call to the origin may take before we go on shutting down. */
const DEMO_STOP_TIMEOUT_MS = 3_000;

function say(line: string) {
  console.log(`[start] ${line}`);
}

function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/**
 * A child in its own process group (detached), output to tmp/start/<name>.log: a TypeScript entry
 * run with tsx, or `[command, args]`.
 */
function startPart(name: string, entry: string | [string, string[]], childEnv: NodeJS.ProcessEnv): Part {
  mkdirSync(LOG_DIR, { recursive: true });
  const log = join(LOG_DIR, `${name}.log`);
  const fd = openSync(log, 'w');
  const [command, args] = typeof entry === 'string' ? [process.execPath, ['--import', 'tsx', entry]] : entry;
  const child = spawn(command, args, {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const part = { name, child, log, exited };
  parts.push(part);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(
      `[start] ${name} exited unexpectedly (${signal ?? `code ${code}`}); last lines of ${relative(ROOT, log)}:`,
    );
    console.error(tail(log));
    void stopAll(1);
  });
  return part;
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* already gone */
  }
}

async function waitGroupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** SIGTERM to every part's process group, SIGKILL to any still there after the grace period. */
function stopAll(code: number): Promise<never> {
  stopping ??= (async () => {
    // While the origin is still up: the switch to stopped goes through it (MySQL + edge push).
    if (demoSale) await stopDemoSale(demoSale);
    if (parts.length) say('stopping the edge and the origin…');
    await Promise.all(
      parts.map(async ({ name, child }) => {
        const pgid = child.pid;
        if (pgid === undefined) return;
        signalGroup(pgid, 'SIGTERM');
        if (!(await waitGroupGone(pgid, STOP_GRACE_MS))) {
          say(`${name} did not stop within ${STOP_GRACE_MS} ms; killing it`);
          signalGroup(pgid, 'SIGKILL');
          await waitGroupGone(pgid, 5_000);
        }
      }),
    );
    if (demoSale && config) await forgetDemoSale(config, demoSale);
    say('stopped');
    process.exit(code);
  })();
  return stopping;
}

async function waitReady(part: Part, url: string, timeoutMs: number, headers: Record<string, string> = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (stopping) await stopping;
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      console.error(
        `[start] ${part.name} not ready at ${url} after ${timeoutMs} ms; last lines of ${relative(ROOT, part.log)}:`,
      );
      console.error(tail(part.log));
      await stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function admin(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<any> {
  const res = await fetch(ORIGIN_URL + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function stopDemoSale(sale: Sale) {
  try {
    await admin('PATCH', `/admin/activities/${sale.activityId}`, { state: 'stopped' }, DEMO_STOP_TIMEOUT_MS);
  } catch (err) {
    say(`could not stop the demo sale ${sale.activityId}: ${(err as Error).message}`);
  }
}

/** Removes the demo sale's Redis keys and registry entry (through the RedisStore, like the origin). */
async function forgetDemoSale(c: OriginConfig, sale: Sale) {
  let store: RedisStore | undefined;
  try {
    store = await RedisStore.connect({
      redis: { url: c.REDIS_URL, clusterNodes: c.REDIS_CLUSTER_NODES?.split(',') },
      keyPrefix: c.REDIS_KEY_PREFIX,
      requestTimeoutMs: c.REDIS_COMMAND_TIMEOUT_MS,
      opsTimeoutMs: c.REDIS_OPS_TIMEOUT_MS,
      breaker: { failureThreshold: c.REDIS_BREAKER_FAILURES, openMs: c.REDIS_BREAKER_OPEN_MS },
      log: createLogger('silent'),
    });
    await store.registry.expire(sale, 1);
    say(`demo sale ${sale.activityId} stopped; its Redis keys removed`);
  } catch (err) {
    say(`could not remove the demo sale's Redis keys: ${(err as Error).message}`);
  } finally {
    await store?.close();
  }
}

/** A fresh activity per run (id = the current ms), opening DEMO_OPENS_IN_SECONDS from now. */
async function createDemoActivity() {
  const now = Date.now();
  const activityId = String(now);
  const startsAt = new Date(now + DEMO_OPENS_IN_SECONDS * 1000);
  await admin('POST', '/admin/activities', {
    activityId,
    skuId: '1001',
    title: 'Demo flash sale',
    stock: DEMO_STOCK,
    startsAt: startsAt.toISOString(),
    endsAt: new Date(now + 3_600_000).toISOString(),
    description: 'Wireless noise-cancelling headphones, 30 h battery. Demo product.',
    priceCents: 4_999,
    currency: 'EUR',
    imageUrl: '/assets/demo-product.v1.svg',
  });
  demoSale = { activityId, skuId: '1001', buckets: 1 };
  const warmed = await admin('POST', `/admin/activities/${activityId}/warmup`);
  return { activityId, startsAt, stock: warmed.stock as number };
}

const PROMETHEUS_READY_TIMEOUT_MS = 30_000;
/** Why Prometheus is not running beside the stack, for the summary. */
let prometheusSkipped = 'off (START_PROMETHEUS=0)';

/**
 * Prometheus beside the stack (START_PROMETHEUS): the repo's config and rules, scraping this
 * origin, its data under tmp/start/prometheus (fresh each run). Skipped with a reason when it is not
 * installed (scripts/prometheus.sh installs it) or its port is taken, unless START_PROMETHEUS=1.
 */
async function startPrometheus(c: OriginConfig, metricsUrl: string) {
  if (START_PROMETHEUS === '0') return null;
  const skip = async (why: string) => {
    if (START_PROMETHEUS === '1') {
      console.error(`[start] START_PROMETHEUS=1 but ${why}`);
      await stopAll(1);
    }
    prometheusSkipped = `not started: ${why}`;
    return null;
  };
  if (!existsSync(PROMETHEUS_PATH))
    return skip(`no ${PROMETHEUS_PATH} (bash scripts/prometheus.sh installs Debian's package)`);
  if (await portTaken(PROMETHEUS_PORT)) return skip(`port ${PROMETHEUS_PORT} is in use (set PROMETHEUS_PORT)`);
  const dir = join(LOG_DIR, 'prometheus');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let tokenFile: string | undefined;
  if (c.METRICS_TOKEN) {
    tokenFile = join(dir, 'metrics-token');
    writeFileSync(tokenFile, c.METRICS_TOKEN, { mode: 0o600 });
  }
  writeFileSync(join(dir, 'prometheus.yml'), prometheusConfig({ target: new URL(metricsUrl).host, tokenFile }));
  const url = `http://127.0.0.1:${PROMETHEUS_PORT}`;
  const part = startPart(
    'prometheus',
    [
      PROMETHEUS_PATH,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${PROMETHEUS_PORT}`,
      ],
    ],
    env,
  );
  return { part, url };
}

/** Debian's build serves the classic UI at /classic/alerts; an upstream build the React one at /alerts. */
async function alertsPage(url: string): Promise<string> {
  const classic = await fetch(`${url}/classic/alerts`).then(
    (r) => r.ok,
    () => false,
  );
  return `${url}${classic ? '/classic/alerts' : '/alerts'}`;
}

async function main() {
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  // Whoever started us (npm, a shell) died without a signal for us: take the stack down with it.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void stopAll(0), 1_000).unref();

  for (const [name, port] of [
    ['origin', ORIGIN_PORT],
    ['edge', EDGE_PORT],
  ] as const) {
    if (await portTaken(port)) {
      console.error(
        `[start] port ${port} (${name}) is already in use — another \`npm start\`? Set ${name === 'origin' ? 'PORT' : 'EDGE_PORT'} to use another.`,
      );
      process.exit(1);
    }
  }

  if (env.START_SKIP_SERVICES !== '1') {
    const services = spawnSync('bash', [join(ROOT, 'scripts/services.sh')], { stdio: 'inherit' });
    if (services.status !== 0) {
      console.error('[start] scripts/services.sh failed: Redis and MariaDB are needed');
      process.exit(1);
    }
  }

  config = loadConfig({ ...env, PORT: String(ORIGIN_PORT), EDGE_URL: EDGE_URL, ADMIN_TOKEN, EDGE_ORIGIN_SECRET });
  const migrated = await migrate(config.MYSQL_URL);
  say(
    `migrated ${migrated.database}: applied ${migrated.applied.length ? migrated.applied.join(', ') : 'nothing new'}`,
  );

  const origin = startPart('origin', 'origin/main.ts', {
    ...env,
    PORT: String(ORIGIN_PORT),
    EDGE_URL,
    ADMIN_TOKEN,
    EDGE_ORIGIN_SECRET,
  });
  const edge = startPart('edge', 'scripts/edge-dev.ts', {
    ...env,
    EDGE_PORT: String(EDGE_PORT),
    ORIGIN_URL,
    EDGE_ORIGIN_SECRET,
    USER_TOKEN_SECRET: userTokenSecret(),
  });
  say(`starting the origin on ${ORIGIN_URL} and the edge on ${EDGE_URL} (logs in ${relative(ROOT, LOG_DIR)}/)`);
  // /healthz and /metrics follow METRICS_PORT / METRICS_TOKEN (docs/operations.md: exposing only the payment webhook).
  const metricsUrl =
    config.METRICS_PORT === undefined ? ORIGIN_URL : `http://${config.METRICS_HOST}:${config.METRICS_PORT}`;
  const metricsAuth: Record<string, string> = config.METRICS_TOKEN
    ? { authorization: `Bearer ${config.METRICS_TOKEN}` }
    : {};
  const prometheus = await startPrometheus(config, metricsUrl);
  await Promise.all([
    waitReady(origin, `${metricsUrl}/healthz`, ORIGIN_READY_TIMEOUT_MS, metricsAuth),
    waitReady(edge, `${EDGE_URL}/`, EDGE_READY_TIMEOUT_MS),
    prometheus && waitReady(prometheus.part, `${prometheus.url}/-/ready`, PROMETHEUS_READY_TIMEOUT_MS),
  ]);
  const alertsUrl = prometheus && (await alertsPage(prometheus.url));

  let demo;
  try {
    demo = await createDemoActivity();
  } catch (err) {
    console.error(`[start] could not create the demo activity: ${(err as Error).message}`);
    return stopAll(1);
  }
  const adminHint = env.ADMIN_TOKEN ? '$ADMIN_TOKEN' : DEV_SECRETS.ADMIN_TOKEN;
  console.log(`
Flash-sale stack is up. Demo activity ${demo.activityId}: ${demo.stock} units, opens at ${demo.startsAt.toISOString()} (in ${DEMO_OPENS_IN_SECONDS} s).

${await userLines(demo.activityId)}
  Activity (public API):      ${EDGE_URL}/api/activities/${demo.activityId}
  Metrics (origin):           ${metricsUrl}/metrics${config.METRICS_TOKEN ? '   (Authorization: Bearer $METRICS_TOKEN)' : ''}
  ${alertsUrl ? `Prometheus (alerts):        ${alertsUrl}   (rules: ops/prometheus; docs/watching-a-sale.md)` : `Prometheus:                 ${prometheusSkipped}`}
  Admin API (origin):         curl -H 'authorization: Bearer ${adminHint}' ${ORIGIN_URL}/admin/activities/${demo.activityId}
  Operator console (origin):  ${ORIGIN_URL}/admin/console/#/sale/${demo.activityId}   (sign in with ${adminHint})
  Logs:                       ${relative(ROOT, origin.log)}, ${relative(ROOT, edge.log)}

${secretsTable()}
Ctrl-C stops everything (and retires the demo sale).
`);
}

/**
 * The sale page with a ready user token, only while USER_TOKEN_SECRET is the public dev default: a
 * token signed with a real secret is a credential (good for JWT_MAX_LIFETIME_SECONDS), and a
 * terminal's scroll-back or a CI log is no place for it. With a real secret, how to mint one.
 */
async function userLines(activityId: string): Promise<string> {
  const page = `${EDGE_URL}/a/${activityId}`;
  if (userTokenSecret() !== EDGE_DEV_DEFAULTS.USER_TOKEN_SECRET)
    return `  Sale page:                  ${page}?token=<a user token>
  User token:                 npm run token -- --user ${DEMO_USER}   (signed with your USER_TOKEN_SECRET; not printed here)`;
  const token = await mintUserToken(DEMO_USER);
  return `  Sale page (user ${DEMO_USER}):  ${page}?token=${token}
  User token (user ${DEMO_USER}): ${token}
      another user:           npm run token -- --user 43   (then open the page with ?token=<it>)`;
}

/** What to sign with against this stack: the dev defaults are public, so they are printed; real ones are not. */
function secretsTable(): string {
  const rows: [string, string | undefined, string][] = [
    ['ADMIN_TOKEN', env.ADMIN_TOKEN, DEV_SECRETS.ADMIN_TOKEN],
    ['PAYMENT_WEBHOOK_SECRET', env.PAYMENT_WEBHOOK_SECRET, DEV_SECRETS.PAYMENT_WEBHOOK_SECRET],
    ['EDGE_ORIGIN_SECRET', env.EDGE_ORIGIN_SECRET, EDGE_DEV_DEFAULTS.EDGE_ORIGIN_SECRET],
    ['USER_TOKEN_SECRET', env.USER_TOKEN_SECRET, EDGE_DEV_DEFAULTS.USER_TOKEN_SECRET],
    ['TICKET_KEYS', env.TICKET_KEYS, EDGE_DEV_DEFAULTS.TICKET_KEYS],
  ];
  const lines = rows.map(([name, set, dev]) => `  ${name.padEnd(24)}${set ? '(from your environment)' : dev}`);
  return `Secrets (dev defaults unless set):\n${lines.join('\n')}\n`;
}

main().catch((err) => {
  console.error(`[start] failed: ${(err as Error).stack ?? err}`);
  void stopAll(1);
});
