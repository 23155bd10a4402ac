/**
 * Origin configuration: parsed and validated once at start from the environment (docs/design.md §9), then
 * passed down. Every timeout and retry limit lives here with its default.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  DEV_SECRETS,
  isLoopbackHost,
  MIN_PRODUCTION_SECRET_LENGTH,
  parseOperators,
  SECRET_NAMES,
  SHARED_ADMIN_NAME,
  type AdminOperator,
} from './secret-rules.js';

/** What REDIS_KEY_PREFIX may hold: no braces (they would move the hash tag), no spaces. */
export const KEY_PREFIX_PATTERN = /^[A-Za-z0-9_.:-]{0,64}$/;

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

const envSchema = z.object({
  /** `production` refuses to start with a dev default secret. */
  NODE_ENV: z.string().default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: int(3000, 0),
  /** `1` lets dev defaults (public secrets, open /metrics) through on a non-loopback HOST outside production. */
  ALLOW_DEV_SECRETS: z.enum(['0', '1']).default('0'),
  /** Bearer token for /metrics and /healthz; unset = open (allowed only where dev defaults are). */
  METRICS_TOKEN: z.string().min(16).optional(),
  /** Serve /metrics and /healthz on their own listener (METRICS_HOST:METRICS_PORT) instead of HOST:PORT. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  METRICS_HOST: z.string().default('127.0.0.1'),
  /** Failed authentications (admin, metrics, payment webhook, edge signature) are all counted; the
   * log gets the first of a route at once, then at most one line per route this often. */
  AUTH_FAILURE_LOG_INTERVAL_MS: int(10_000, 0),
  /** What /metrics reads at scrape time (Redis INFO and SLOWLOG per node, MySQL status, the edge's
   * figures) gives up after this long; the last values stay and the failure is counted. */
  METRICS_READ_TIMEOUT_MS: int(500, 10),
  /** Those scrape-time reads are reused for this long, so several scrapers cost one read. */
  METRICS_CACHE_MS: int(1_000, 0),
  /** The operator console's charts (docs/console.md): points kept per sale at 1 s, and again at most
   * as many coarser ones for the older part of the run (origin/watch/sale-series.ts). */
  CONSOLE_SERIES_POINTS: int(600, 60),
  /** Sales whose series are kept at most (the one that ended first is dropped). */
  CONSOLE_SERIES_SALES: int(20, 1),
  /** A sale's series start this long before its start. */
  CONSOLE_SERIES_LEAD_SECONDS: int(600, 0),
  /** The window the console's success-rate and backlog banners are judged over (the alert rules' 30 s). */
  CONSOLE_ALERT_WINDOW_SECONDS: int(30, 1),
  /** Where docs/ is published (e.g. https://github.com/<owner>/<repo>/blob/main); set, the console's
   * alert banners link their docs section there, unset they name the file and section. */
  CONSOLE_DOCS_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** A reserve answer slower than this counts as `timeout` in seckill_order_answers_total: the edge
   * gave up on it at its ORIGIN_TIMEOUT_MS (800 ms by default), so the buyer never saw it. */
  RESERVE_ANSWER_DEADLINE_MS: int(800, 1),
  /** Request bodies above this many bytes are refused with 413 before any signature or token check. */
  MAX_BODY_BYTES: int(16 * 1024, 1),
  /** A request whose headers have not all arrived this long after its first byte is answered 408 and its
   * connection closed (Node's `headersTimeout`; Node's own default is 60 s). */
  HEADERS_TIMEOUT_MS: int(10_000, 100),
  /** A request's body must have fully arrived this long after the body read starts, else 408
   * `request_timeout` (JSON) and the connection is closed: a client that declares 1,000 bytes and
   * sends 1 is not held. Like the edge's BODY_READ_TIMEOUT_MS; bodies here are at most MAX_BODY_BYTES. */
  BODY_TIMEOUT_MS: int(2_000, 10),
  /** Backstop for the whole request (headers + body) as Node counts it (`requestTimeout`; Node's own
   * default is 300 s): answered with Node's bare 408 and a closed connection. Must exceed the two above. */
  REQUEST_TIMEOUT_MS: int(30_000, 100),
  /** An idle keep-alive connection is closed after this long. The edge keeps connections open: keep it
   * longer than the edge's (or a load balancer's) idle timeout, or they race and a request meets a reset. */
  KEEP_ALIVE_TIMEOUT_MS: int(65_000, 1_000),
  /** Open connections per listener; a connection beyond it is closed at once (Node's `maxConnections`).
   * Each holds a file descriptor and buffers: keep it under the process's open-file limit (`ulimit -n`). */
  MAX_CONNECTIONS: int(4_096, 1),
  /** How often Node looks for requests past HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS (its
   * `connectionsCheckingInterval`; Node's default is 30 s, which would let a timeout run 30 s late). */
  TIMEOUT_CHECK_MS: int(1_000, 10),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  /** `host:port,host:port,…` of Redis Cluster masters: when set, the origin uses the cluster, not REDIS_URL. */
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, 'must be host:port[,host:port…]')
    .optional(),
  /** Borrowing stock from other buckets: a request waits at most this long for its own borrow in flight. */
  BORROW_WAIT_MS: int(500, 10),
  /** A borrow left half-done this long (its process died) counts as stranded: recover gives its units back. */
  BORROW_STALE_MS: int(10_000, 100),
  /** Put in front of every Redis key, the registry and the pub/sub channel: stacks sharing a Redis stay apart. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(KEY_PREFIX_PATTERN, 'letters, digits and _ . : - only (at most 64; no braces)')
    .default(''),
  MYSQL_URL: z
    .string()
    .regex(/^mysql:\/\//, 'must be a mysql:// URL')
    .default('mysql://root@127.0.0.1:3306/seckill'),
  /** The shared admin token (changes are recorded as made by `admin`); defaults to the dev secret
   * only when ADMIN_TOKENS is not set either. */
  ADMIN_TOKEN: z.string().min(8).optional(),
  /** Per-operator admin tokens, `alice:<token>,bob:<token>`: each change records the operator's name
   * as its actor. Beside ADMIN_TOKEN or instead of it. */
  ADMIN_TOKENS: z.string().optional(),
  EDGE_ORIGIN_SECRET: z.string().min(16).default(DEV_SECRETS.EDGE_ORIGIN_SECRET),
  PAYMENT_WEBHOOK_SECRET: z.string().min(16).default(DEV_SECRETS.PAYMENT_WEBHOOK_SECRET),
  /**
   * Key of every lottery's seed: seed = HMAC(DRAW_SECRET, activity id and a random nonce
   * kept in MySQL). Only its commitment is stored until the reveal, so MySQL alone cannot tell a draw's
   * outcome. Changing it strands the seeds of lotteries not yet drawn (their draws refuse to run).
   */
  DRAW_SECRET: z.string().min(16).default(DEV_SECRETS.DRAW_SECRET),
  /** Where admin changes and sold-out transitions are pushed (docs/design.md §9); unset = no edge. */
  EDGE_URL: z.url().optional(),
  /** What this process runs: HTTP API, settlement consumers, or both. */
  ORIGIN_ROLE: z.enum(['all', 'http', 'consumers']).default('all'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  /** Redis command timeout: a slower answer is treated as Redis down (503 unavailable). */
  REDIS_COMMAND_TIMEOUT_MS: int(100, 10),
  /** Redis command timeout for admin calls, jobs and settlement side work (not the request path). */
  REDIS_OPS_TIMEOUT_MS: int(5_000, 100),
  /** Consecutive Redis failures that open the circuit breaker (then 503 without calling Redis). */
  REDIS_BREAKER_FAILURES: int(20, 1),
  /** How long the open breaker refuses before probing Redis again. */
  REDIS_BREAKER_OPEN_MS: int(1_000, 10),
  /** Reserve calls in progress at once; beyond it answer 503 `busy` at once (load shedding keeps the
   * event loop responsive, so Redis replies are not mistaken for timeouts under a burst). */
  RESERVE_MAX_IN_FLIGHT: int(64, 1),
  /** Status reads (reservation / activity lookups of the edge) in progress at once; beyond it 503 `busy`. */
  STATUS_MAX_IN_FLIGHT: int(64, 1),
  /** A MySQL transaction slower than this is counted and logged as slow. */
  DB_SLOW_TX_MS: int(200, 1),
  /** MySQL pool size shared by HTTP and consumers. */
  MYSQL_POOL_SIZE: int(10, 1),
  /** Prepared statements each MySQL connection keeps (LRU). Pool size × this × processes must stay
   * under the server's `max_prepared_stmt_count` (16,382 by default). */
  MYSQL_PREPARED_STATEMENTS: int(128, 16),
  /** Edge pushes time out after this long; a failed push is logged, the edge's own refresh catches up. */
  EDGE_PUSH_TIMEOUT_MS: int(1000, 50),
  /** The list of live activities is pushed to the edge at start and this often (edge: unknown ids → 404). */
  EDGE_LIVE_LIST_PUSH_MS: int(10_000, 100),
  /** An activity stays on the edge's live list this long after its end (holders still poll and pay). */
  EDGE_LIVE_AFTER_END_SECONDS: int(86_400, 0),

  /** Consumers per activity in this process (each its own Redis connection and consumer name). */
  SETTLE_WORKERS: int(2, 1),
  /** Most Stream entries read per XREADGROUP and settled per transaction; a read returns what is
   * waiting, so batches follow the backlog up to this (bench/settle.ts: 100 → 500 doubled orders/s). */
  SETTLE_BATCH_SIZE: int(500, 1),
  /** How long XREADGROUP blocks waiting for new entries (also bounds how fast stop() returns). */
  SETTLE_BLOCK_MS: int(500, 10),
  /** After a batch smaller than SETTLE_BATCH_SIZE (the Stream had no more waiting), a consumer waits
   * this long before its next read, so a trickle is settled a few dozen per transaction instead of
   * one or two (0: read again at once). Adds at most this much to an order's settlement delay. */
  SETTLE_LINGER_MS: int(50, 0),
  /** Pending entries idle longer than this are reclaimed (XAUTOCLAIM) by any consumer. */
  SETTLE_CLAIM_IDLE_MS: int(30_000, 10),
  /** After this many deliveries an entry becomes a dead letter and its unit is compensated. */
  SETTLE_MAX_DELIVERIES: int(5, 1),
  /** How often consumers look for new activities to settle. */
  SETTLE_DISCOVERY_MS: int(2_000, 50),
  /** Pause after a failed settlement round before trying again. */
  SETTLE_RETRY_BACKOFF_MS: int(200, 0),
  /** Payment webhooks whose x-payment-timestamp is further than this from now are refused (401). */
  PAYMENT_SIGNATURE_MAX_AGE_MS: int(300_000, 1_000),
  /** A lifecycle transaction that lost a deadlock is retried this many times before failing. */
  LIFECYCLE_TX_RETRIES: int(3, 0),
  /** How often the timeout job looks for PENDING orders past expire_at (again at once after a full batch). */
  TIMEOUT_SCAN_MS: int(2_000, 10),
  /** Orders timed out per transaction (the LIMIT of the idx_status_expire scan). */
  TIMEOUT_BATCH_SIZE: int(500, 1),
  /** How often the outbox worker looks for refills not yet applied to Redis (it is also woken after a timeout). */
  OUTBOX_POLL_MS: int(500, 10),
  /** Outbox rows claimed per round. */
  OUTBOX_BATCH_SIZE: int(200, 1),
  /** A claimed outbox row not marked done within this long is claimed again (its worker died). */
  OUTBOX_CLAIM_LEASE_MS: int(10_000, 100),
  /** Downstream order events (docs/design.md §10) are POSTed here (http or https); unset = no events are written at all. */
  ORDER_EVENTS_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /**
   * Where a shadow sale's order events go (docs/rehearsal.md: the rehearsal's own receiver); unset =
   * a shadow sale's events are not written at all. Never ORDER_EVENTS_URL: a rehearsal's orders
   * never reach the real receiver. Same delivery settings and secret as ORDER_EVENTS_URL.
   */
  SHADOW_ORDER_EVENTS_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** HMAC-SHA256 key of `x-event-signature`; required when ORDER_EVENTS_URL or SHADOW_ORDER_EVENTS_URL is set. */
  ORDER_EVENTS_SECRET: z.string().min(16).optional(),
  /** Delivery tries of one event before it is parked (admin lists and retries parked events). */
  ORDER_EVENTS_MAX_ATTEMPTS: int(10, 1),
  /** Backoff after the first failed try; doubles per try (with jitter) up to ORDER_EVENTS_BACKOFF_MAX_MS. */
  ORDER_EVENTS_BACKOFF_MS: int(1_000, 1),
  ORDER_EVENTS_BACKOFF_MAX_MS: int(300_000, 1),
  /** One POST to ORDER_EVENTS_URL gives up after this long (a failed try). */
  ORDER_EVENTS_TIMEOUT_MS: int(5_000, 10),
  /** A claimed event not marked within this long is claimed again (its worker died); > the timeout. */
  ORDER_EVENTS_LEASE_MS: int(30_000, 100),
  /** How often the order-event worker looks for due events (at once again after a full batch). */
  ORDER_EVENTS_POLL_MS: int(500, 10),
  /** Events claimed per round. */
  ORDER_EVENTS_BATCH_SIZE: int(100, 1),
  /** POSTs in flight at once per worker. */
  ORDER_EVENTS_CONCURRENCY: int(8, 1),
  /**
   * Settlement first: while this process's settlement consumers are behind (one read a whole
   * SETTLE_BATCH_SIZE batch within the last ORDER_EVENTS_POLL_MS), the order-event worker waits, at
   * most this long in a row before it delivers a round anyway. 0 = never waits.
   */
  ORDER_EVENTS_YIELD_MS: int(10_000, 0),
  /** How often every warmed activity is reconciled (alert metric + log line on mismatch). */
  RECONCILE_INTERVAL_MS: int(60_000, 100),
  /** A mismatch found by the periodic reconciliation is re-checked this many times in all ... */
  RECONCILE_CONFIRM_RUNS: int(3, 1),
  /** ... this far apart, and alarms only if the same check failed every time (live figures move). */
  RECONCILE_CONFIRM_DELAY_MS: int(2_000, 0),
  /**
   * Reconciliation reads Redis, then MySQL (one consistent snapshot), then Redis's fingerprint again:
   * a Redis-side check that fails while Redis moved during the MySQL read is read again, at most this
   * many readings in all; if Redis never held still, the run is "unstable, skipped", not an alarm.
   */
  RECONCILE_READ_ATTEMPTS: int(5, 1),
  /** After cleanup, a sale's Redis keys live this long (seconds) before Redis expires them. */
  CLEANUP_RETENTION_SECONDS: int(86_400, 1),
  /** How often lottery activities are checked for a closed window whose draw is due (docs/design.md §10). */
  DRAW_POLL_MS: int(250, 10),
  /** The draw's lease on its MySQL record: a draw whose origin died is resumed after this long. */
  DRAW_LEASE_MS: int(10_000, 500),
  /** Winners per call of lua/draw-reserve-6.lua (decided in draw order: the outcome is that of one by one). */
  DRAW_RESERVE_BATCH: int(500, 1),
  /** Entries per Redis read (lua/entry-page-1.lua) when the draw passes over the closed entrant list. */
  DRAW_READ_PAGE: int(10_000, 100),
  /** Pages of the entrant list the draw asks Redis for ahead of the one it is hashing. */
  DRAW_READ_IN_FLIGHT: int(4, 1),
  /**
   * Worker threads hashing pages of the entrant list beside the main thread while the draw passes over
   * it (origin/lottery/draw-hash-threads.ts); default the cores less one, at least 1; 0: the main
   * thread alone. The outcome is the same whatever the number.
   */
  DRAW_HASH_WORKERS: int(Math.max(1, availableParallelism() - 1), 0),
  /**
   * How long a hashing worker may take to answer one request (a page of DRAW_READ_PAGE entrants, or
   * its kept candidates) before the pass fails and the draw is retried: a hung worker never holds a
   * draw. A page takes tens of milliseconds.
   */
  DRAW_HASH_ANSWER_MS: int(30_000, 100),
  /** Rows per INSERT when the entrant list is published to MySQL. */
  DRAW_PUBLISH_BATCH: int(1_000, 1),
  /** Most entrants one page of the public entrant list may hold (the edge bounds it too). */
  DRAW_ENTRANTS_PAGE_MAX: int(1_000, 1),
  /** Graceful stop: in-flight work gets this long before the process exits anyway. */
  SHUTDOWN_GRACE_MS: int(10_000, 0),
  /** A repeat purchase looks up its reservation's current status (MySQL) for at most this long, else answers `queued`. */
  REPEAT_STATUS_TIMEOUT_MS: int(100, 1),
  /** The origin warms an activity by itself this long before its start (docs/design.md §10). */
  WARMUP_LEAD_SECONDS: int(600, 1),
  /** ... and verifies Redis against MySQL this long before its start; a mismatch pauses the sale. */
  WARMUP_VERIFY_SECONDS: int(60, 0),
  /** How often the warm-up job looks for activities due for warm-up or verification. */
  WARMUP_SCAN_MS: int(1_000, 50),
  /** A warm-up step claimed by an origin that did not finish it within this long is claimed again. */
  WARMUP_CLAIM_LEASE_MS: int(30_000, 100),
  /** Deny-list changes the edge has not confirmed are pushed again this often (in batches of DENY_PUSH_BATCH). */
  DENY_PUSH_RETRY_MS: int(2_000, 100),
  DENY_PUSH_BATCH: z.coerce.number().int().min(1).max(1_000).default(500),
  /** A reservation is answered 202 only after `WAIT` saw it on this many replicas (0 = do not wait). */
  REDIS_WAIT_REPLICAS: int(0, 0),
  /** How long `WAIT` waits for the replicas; unconfirmed by then → 503 `unavailable`. */
  REDIS_WAIT_TIMEOUT_MS: int(50, 1),
  /**
   * A replica counts as in sync with its primary when INFO replication shows it `state=online` with
   * `lag` (seconds since its last acknowledgement; replicas acknowledge every second) at most this.
   * Warm-up and the failover watch count them per bucket against REDIS_WAIT_REPLICAS.
   */
  REDIS_REPLICA_MAX_LAG_SECONDS: int(2, 0),
  /** How often the failover watch asks which Redis primary serves each warmed sale. */
  FAILOVER_POLL_MS: int(500, 20),
  /** How long a recovery waits for the sale's MySQL recovery lock while another process recovers it. */
  RECOVER_LOCK_WAIT_MS: int(10_000, 0),
});

/** Every setting's name (docs/configuration.md must list each: test/docs/docs.test.ts). */
export const CONFIG_NAMES = Object.keys(envSchema.shape);

export type OriginConfig = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  // Empty strings mean "not set": fall back to the default instead of failing on "".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid origin configuration — ${issues}`);
  }
  const { ADMIN_TOKEN, ...rest } = parsed.data;
  const fail = (name: string, why: string) => {
    throw new ConfigError(`invalid origin configuration — ${name}: ${why}`);
  };
  const operators = rest.ADMIN_TOKENS === undefined ? [] : parseOperators(rest.ADMIN_TOKENS);
  if (typeof operators === 'string') fail('ADMIN_TOKENS', operators);
  const c = {
    ...rest,
    ADMIN_TOKEN: ADMIN_TOKEN ?? (rest.ADMIN_TOKENS === undefined ? DEV_SECRETS.ADMIN_TOKEN : undefined),
  };
  /** Who may call the admin API: the shared token as `admin`, and every named operator. */
  const ADMIN_OPERATORS: readonly AdminOperator[] = [
    ...(c.ADMIN_TOKEN === undefined ? [] : [{ name: SHARED_ADMIN_NAME, token: c.ADMIN_TOKEN }]),
    ...(operators as AdminOperator[]),
  ];
  const production = c.NODE_ENV === 'production';
  // Dev defaults are public (they are in this repository): only a loopback-bound dev origin may use
  // them, unless the operator says otherwise outside production.
  const devDefaultsAllowed = !production && (isLoopbackHost(c.HOST) || c.ALLOW_DEV_SECRETS === '1');
  const where = production ? 'in production' : `when HOST=${c.HOST} is not loopback (or set ALLOW_DEV_SECRETS=1)`;
  for (const [name, value] of Object.entries(DEV_SECRETS)) {
    if (c[name as keyof typeof DEV_SECRETS] === value && !devDefaultsAllowed)
      fail(name, `is the public dev default; set a real secret ${where}`);
  }
  if (c.ORDER_EVENTS_URL && !c.ORDER_EVENTS_SECRET)
    fail('ORDER_EVENTS_SECRET', 'required when ORDER_EVENTS_URL is set');
  if (c.SHADOW_ORDER_EVENTS_URL && !c.ORDER_EVENTS_SECRET)
    fail('ORDER_EVENTS_SECRET', 'required when SHADOW_ORDER_EVENTS_URL is set');
  if (c.SHADOW_ORDER_EVENTS_URL && c.SHADOW_ORDER_EVENTS_URL === c.ORDER_EVENTS_URL)
    fail('SHADOW_ORDER_EVENTS_URL', "must not be ORDER_EVENTS_URL: a rehearsal's events never reach the real receiver");
  if (c.REQUEST_TIMEOUT_MS <= Math.max(c.HEADERS_TIMEOUT_MS, c.BODY_TIMEOUT_MS))
    fail('REQUEST_TIMEOUT_MS', 'must exceed HEADERS_TIMEOUT_MS and BODY_TIMEOUT_MS (it is the backstop of both)');
  if (c.ORDER_EVENTS_TIMEOUT_MS >= c.ORDER_EVENTS_LEASE_MS)
    fail('ORDER_EVENTS_LEASE_MS', 'must exceed ORDER_EVENTS_TIMEOUT_MS (a live delivery must not be claimed twice)');
  // Real secrets are required wherever dev defaults are refused: an 8-character admin token on
  // 0.0.0.0 is as guessable outside production as in it.
  if (!devDefaultsAllowed) {
    const short = (value: string | undefined) => value !== undefined && value.length < MIN_PRODUCTION_SECRET_LENGTH;
    const floor = `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters ${where}`;
    for (const name of SECRET_NAMES) if (short(c[name])) fail(name, floor);
    for (const o of operators as AdminOperator[])
      if (short(o.token)) fail('ADMIN_TOKENS', `${o.name}'s token ${floor}`);
  }
  // /metrics and /healthz beside the public payment webhook need a token or their own listener.
  if (!devDefaultsAllowed && c.METRICS_TOKEN === undefined && c.METRICS_PORT === undefined)
    fail('METRICS_TOKEN', `set it (or METRICS_PORT for a separate listener) ${where}`);
  // ... and their own listener on a non-loopback address is as open: it needs the token too.
  const openMetricsAllowed = !production && c.ALLOW_DEV_SECRETS === '1';
  if (
    c.METRICS_PORT !== undefined &&
    !isLoopbackHost(c.METRICS_HOST) &&
    c.METRICS_TOKEN === undefined &&
    !openMetricsAllowed
  )
    fail(
      'METRICS_TOKEN',
      `required when METRICS_HOST=${c.METRICS_HOST} is not loopback${production ? '' : ' (or set ALLOW_DEV_SECRETS=1)'}`,
    );
  return { ...c, ADMIN_OPERATORS };
}
