/**
 * The origin's tuning settings (docs/configuration.md): every timeout, limit, interval, batch size and
 * retry count, with its default and its lowest allowed value, grouped by the part that reads it.
 * origin/platform/config.ts parses them with the addresses and secrets and checks the rules between
 * settings.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

/** The HTTP listeners: what a request may carry and take, connections, failed authentications, the graceful stop. */
const listeners = {
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
  /** Failed authentications (admin, metrics, payment webhook, edge signature) are all counted; the
   * log gets the first of a route at once, then at most one line per route this often. */
  AUTH_FAILURE_LOG_INTERVAL_MS: int(10_000, 0),
  /** Payment webhooks whose x-payment-timestamp is further than this from now are refused (401). */
  PAYMENT_SIGNATURE_MAX_AGE_MS: int(300_000, 1_000),
  /** Graceful stop: in-flight work gets this long before the process exits anyway. */
  SHUTDOWN_GRACE_MS: int(10_000, 0),
};

/** What /metrics reads at scrape time, and what the operator console keeps and judges. */
const watching = {
  /** What /metrics reads at scrape time (Redis INFO and SLOWLOG per node, MySQL status, the edge's
   * figures) gives up after this long; the last values stay and the failure is counted. */
  METRICS_READ_TIMEOUT_MS: int(500, 10),
  /** Those scrape-time reads are reused for this long, so several scrapers cost one read. */
  METRICS_CACHE_MS: int(1_000, 0),
  /** A reserve answer slower than this counts as `timeout` in seckill_order_answers_total: the edge
   * gave up on it at its ORIGIN_TIMEOUT_MS (800 ms by default), so the buyer never saw it. */
  RESERVE_ANSWER_DEADLINE_MS: int(800, 1),
  /** The operator console's charts (docs/console.md): points kept per sale at 1 s, and again at most
   * as many coarser ones for the older part of the run (origin/watch/sale-series.ts). */
  CONSOLE_SERIES_POINTS: int(600, 60),
  /** Sales whose series are kept at most (the one that ended first is dropped). */
  CONSOLE_SERIES_SALES: int(20, 1),
  /** A sale's series start this long before its start. */
  CONSOLE_SERIES_LEAD_SECONDS: int(600, 0),
  /** The window the console's success-rate and backlog banners are judged over (the alert rules' 30 s). */
  CONSOLE_ALERT_WINDOW_SECONDS: int(30, 1),
};

/** Redis: timeouts, the circuit breaker, the load shedding of the request path, stock borrowing. */
const redis = {
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
  /** A repeat purchase looks up its reservation's current status (MySQL) for at most this long, else answers `queued`. */
  REPEAT_STATUS_TIMEOUT_MS: int(100, 1),
  /** Borrowing stock from other buckets: a request waits at most this long for its own borrow in flight. */
  BORROW_WAIT_MS: int(500, 10),
  /** A borrow left half-done this long (its process died) counts as stranded: recover gives its units back. */
  BORROW_STALE_MS: int(10_000, 100),
};

/** MySQL: the pool, its prepared statements, slow and deadlocked transactions. */
const mysql = {
  /** A MySQL transaction slower than this is counted and logged as slow. */
  DB_SLOW_TX_MS: int(200, 1),
  /** MySQL pool size shared by HTTP and consumers. */
  MYSQL_POOL_SIZE: int(10, 1),
  /** Prepared statements each MySQL connection keeps (LRU). Pool size × this × processes must stay
   * under the server's `max_prepared_stmt_count` (16,382 by default). */
  MYSQL_PREPARED_STATEMENTS: int(128, 16),
  /** A lifecycle transaction that lost a deadlock is retried this many times before failing. */
  LIFECYCLE_TX_RETRIES: int(3, 0),
};

/** Pushes to the edge (EDGE_URL): activities, the live list, the deny list. */
const edgePushes = {
  /** Edge pushes time out after this long; a failed push is logged, the edge's own refresh catches up. */
  EDGE_PUSH_TIMEOUT_MS: int(1000, 50),
  /** The list of live activities is pushed to the edge at start and this often (edge: unknown ids → 404). */
  EDGE_LIVE_LIST_PUSH_MS: int(10_000, 100),
  /** An activity stays on the edge's live list this long after its end (holders still poll and pay). */
  EDGE_LIVE_AFTER_END_SECONDS: int(86_400, 0),
  /** Deny-list changes the edge has not confirmed are pushed again this often (in batches of DENY_PUSH_BATCH). */
  DENY_PUSH_RETRY_MS: int(2_000, 100),
  DENY_PUSH_BATCH: z.coerce.number().int().min(1).max(1_000).default(500),
};

/** Settlement: the Stream consumers of each activity. */
const settlement = {
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
};

/** The background jobs: order timeouts, the refill outbox, reconciliation, cleanup, warm-up. */
const lifecycleJobs = {
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
  /** The origin warms an activity by itself this long before its start (docs/design.md §10). */
  WARMUP_LEAD_SECONDS: int(600, 1),
  /** ... and verifies Redis against MySQL this long before its start; a mismatch pauses the sale. */
  WARMUP_VERIFY_SECONDS: int(60, 0),
  /** How often the warm-up job looks for activities due for warm-up or verification. */
  WARMUP_SCAN_MS: int(1_000, 50),
  /** A warm-up step claimed by an origin that did not finish it within this long is claimed again. */
  WARMUP_CLAIM_LEASE_MS: int(30_000, 100),
};

/** The delivery of order events (ORDER_EVENTS_URL, SHADOW_ORDER_EVENTS_URL). */
const orderEvents = {
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
};

/** The lottery draw. */
const lotteryDraw = {
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
};

/** Durability and failover: WAIT for replicas, their lag, the failover watch, recovery. */
const durability = {
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
};

/** Every tuning setting, as zod schemas of the environment variables. */
export const TUNING_SETTINGS = {
  ...listeners,
  ...watching,
  ...redis,
  ...mysql,
  ...edgePushes,
  ...settlement,
  ...lifecycleJobs,
  ...orderEvents,
  ...lotteryDraw,
  ...durability,
};
