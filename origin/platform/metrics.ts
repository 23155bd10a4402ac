/**
 * Prometheus metrics of one origin (a registry per instance, so tests can run several). Stream
 * pending and lag are read from Redis when /metrics is scraped.
 */
import client from 'prom-client';

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const counter = (name: string, help: string, labelNames: string[] = []) =>
    new client.Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new client.Gauge({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    // The five signals of a sale (docs/watching-a-sale.md); the scrape-time ones are set by
    // origin/watch/scrape-reads.ts.
    authFailures: counter(
      'seckill_origin_auth_failures_total',
      'Requests refused for failed authentication (401) by the route group that asks for the credential and why',
      ['route', 'reason'],
    ),
    orderAnswers: counter(
      'seckill_order_answers_total',
      'Every answer of POST /internal/reserve by outcome; decided="true" when it told the buyer where the purchase stands',
      ['outcome', 'decided'],
    ),
    // A shadow sale's traffic (docs/rehearsal.md) in series of its own, so the real series above
    // (and every alert and panel built on them) count real buyers only.
    shadowOrderAnswers: counter(
      'seckill_shadow_order_answers_total',
      'Answers of POST /internal/reserve to shadow (rehearsal) traffic, by outcome; decided as seckill_order_answers_total',
      ['outcome', 'decided'],
    ),
    shadowReserveOutcomes: counter(
      'seckill_shadow_reserve_total',
      'Reserve calls of shadow (rehearsal) traffic by outcome code',
      ['code'],
    ),
    shadowOrdersSettled: counter(
      'seckill_shadow_orders_settled_total',
      'Orders written by settlement for shadow sales',
    ),
    shadowOrderTransitions: counter(
      'seckill_shadow_order_lifecycle_total',
      'Shadow orders: payment callbacks by outcome, timeouts, refills',
      ['transition'],
    ),
    shadowStreamBacklog: gauge(
      'seckill_shadow_stream_backlog',
      'A shadow sale: reservation events not yet delivered plus delivered and not acknowledged',
      ['activity'],
    ),
    redisSlowlogEntries: counter(
      'seckill_redis_slowlog_entries_total',
      'Entries added to SLOWLOG per Redis node (from slowlog ids), read at scrape',
      ['node'],
    ),
    redisConnectedClients: gauge('seckill_redis_connected_clients', 'INFO clients connected_clients per Redis node', [
      'node',
    ]),
    redisMaxclients: gauge('seckill_redis_maxclients', 'INFO clients maxclients per Redis node', ['node']),
    mysqlThreadsRunning: gauge('seckill_mysql_threads_running', 'MySQL Threads_running (statements executing now)'),
    mysqlThreadsConnected: gauge('seckill_mysql_threads_connected', 'MySQL Threads_connected (all sessions)'),
    mysqlMaxConnections: gauge('seckill_mysql_max_connections', 'MySQL @@max_connections'),
    mysqlSlowQueries: counter(
      'seckill_mysql_slow_queries_total',
      'MySQL Slow_queries (statements over long_query_time, server-wide), read at scrape',
    ),
    dbPoolConnections: gauge('seckill_db_pool_connections', "This process's MySQL pool connections by state", [
      'state',
    ]),
    dbPoolLimit: gauge('seckill_db_pool_limit', "This process's MySQL pool size (MYSQL_POOL_SIZE)"),
    saleState: gauge(
      'seckill_sale_state',
      "1 for a warmed sale's public phase now (upcoming, open, sold_out, paused, ended), 0 for the others",
      ['activity', 'state'],
    ),
    shadowSale: gauge(
      'seckill_shadow_sale',
      '1 for each warmed shadow (rehearsal) sale, read at scrape: alert rules and the dashboard join on it to leave shadow sales out',
      ['activity'],
    ),
    stockLeft: gauge('seckill_stock_left', 'Units left in Redis per sale and stock bucket, read at scrape', [
      'activity',
      'bucket',
    ]),
    deadLettersOpen: gauge(
      'seckill_dead_letters_open',
      'Dead letters waiting for an operator (status open), per activity, read from MySQL at scrape',
      ['activity'],
    ),
    scrapeReadFailures: counter(
      'seckill_metrics_read_failures_total',
      'Scrape-time reads that failed or took longer than METRICS_READ_TIMEOUT_MS (their gauges keep the last values)',
      ['source'],
    ),
    // The edge's figures count real traffic; a shadow token's answers have series of their own
    // (seckill_shadow_edge_*), as at the origin.
    edgeClicks: counter('seckill_edge_clicks_total', 'Purchase clicks the edge answered (all isolates)'),
    edgeTickets: counter('seckill_edge_tickets_total', 'Tickets the edge issued'),
    edgeAdmitted: counter('seckill_edge_admitted_total', 'Purchases the edge let through to the origin'),
    edgeRefusals: counter('seckill_edge_refusals_total', 'Answers the edge refused, by reason (contract code)', [
      'reason',
    ]),
    edgeOriginCalls: counter(
      'seckill_edge_origin_calls_total',
      'Calls the edge made to the origin, by call (reserve, status, activity) and result (answered, timeout, unreachable)',
      ['call', 'result'],
    ),
    shadowEdgeClicks: counter(
      'seckill_shadow_edge_clicks_total',
      'Purchase clicks of shadow (rehearsal) traffic the edge answered',
    ),
    shadowEdgeTickets: counter('seckill_shadow_edge_tickets_total', 'Tickets the edge issued to shadow tokens'),
    shadowEdgeAdmitted: counter(
      'seckill_shadow_edge_admitted_total',
      'Shadow purchases the edge let through to the origin',
    ),
    shadowEdgeRefusals: counter(
      'seckill_shadow_edge_refusals_total',
      'Answers to shadow tokens the edge refused, by reason (contract code)',
      ['reason'],
    ),
    shadowEdgeOriginCalls: counter(
      'seckill_shadow_edge_origin_calls_total',
      'Calls the edge made to the origin for shadow tokens, by call and result',
      ['call', 'result'],
    ),
    edgeWaitingLine: gauge('seckill_edge_waiting_line_length', 'Buyers waiting in the waiting line, per activity', [
      'activity',
    ]),
    edgeWaitingLineLongestShard: gauge(
      'seckill_edge_waiting_line_longest_shard',
      "The longest admission shard's waiting line, per activity (a join beyond WAITING_LINE_MAX is refused)",
      ['activity'],
    ),
    edgeWaitingLineBytes: gauge(
      'seckill_edge_waiting_line_storage_bytes',
      "Bytes the activity's admission shards hold in Durable Object storage (the waiting line's rows)",
      ['activity'],
    ),
    reserveOutcomes: new client.Counter({
      name: 'seckill_reserve_total',
      help: 'Reserve calls by outcome code',
      labelNames: ['code'],
      registers: [registry],
    }),
    reserveLatency: new client.Histogram({
      name: 'seckill_reserve_duration_seconds',
      help: 'Reserve call latency at the origin, by outcome code',
      labelNames: ['code'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    redisLatency: new client.Histogram({
      name: 'seckill_redis_call_duration_seconds',
      help: 'Redis calls on the request path (the reserve script, holder lookups), failed ones included',
      buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
      registers: [registry],
    }),
    dbTransactions: new client.Histogram({
      name: 'seckill_db_transaction_duration_seconds',
      help: 'MySQL transactions (settlement, lifecycle jobs, admin writes), committed or rolled back',
      labelNames: ['outcome'],
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    dbSlowTransactions: new client.Counter({
      name: 'seckill_db_slow_transactions_total',
      help: 'MySQL transactions slower than DB_SLOW_TX_MS (each also logged)',
      registers: [registry],
    }),
    redisErrors: new client.Counter({
      name: 'seckill_redis_errors_total',
      help: 'Redis calls that failed or timed out on the request path',
      registers: [registry],
    }),
    streamPending: new client.Gauge({
      name: 'seckill_stream_pending',
      help: 'Reservation events delivered to a consumer but not yet acknowledged',
      labelNames: ['activity'],
      registers: [registry],
    }),
    streamLag: new client.Gauge({
      name: 'seckill_stream_lag',
      help: 'Reservation events not yet delivered to any consumer',
      labelNames: ['activity'],
      registers: [registry],
    }),
    ordersSettled: new client.Counter({
      name: 'seckill_orders_settled_total',
      help: 'Orders written by settlement',
      registers: [registry],
    }),
    settleOutcomes: new client.Counter({
      name: 'seckill_settle_total',
      help: 'Settlement of stream entries by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    settleLatency: new client.Histogram({
      name: 'seckill_settle_tx_duration_seconds',
      help: 'Duration of one settlement transaction',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    deadLetters: new client.Counter({
      name: 'seckill_dead_letters_total',
      help: 'Reservations moved to the dead-letter table',
      registers: [registry],
    }),
    orderTransitions: new client.Counter({
      name: 'seckill_order_lifecycle_total',
      help: 'Payment callbacks by outcome, timeouts, refills and recoveries',
      labelNames: ['transition'],
      registers: [registry],
    }),
    orderEventsDelivered: new client.Counter({
      name: 'seckill_order_events_delivered_total',
      help: 'Order events delivered to ORDER_EVENTS_URL (2xx) by this process',
      labelNames: ['type'],
      registers: [registry],
    }),
    orderEventsParked: new client.Counter({
      name: 'seckill_order_events_parked_total',
      help: 'Order events parked by this process after ORDER_EVENTS_MAX_ATTEMPTS failed tries',
      labelNames: ['type'],
      registers: [registry],
    }),
    orderEventsBacklog: new client.Gauge({
      name: 'seckill_order_events_backlog',
      help: 'Order events not yet delivered (pending, in flight or backing off), read from MySQL at scrape',
      registers: [registry],
    }),
    orderEventsOldestAge: new client.Gauge({
      name: 'seckill_order_events_oldest_age_seconds',
      help: 'Age of the oldest undelivered pending order event (0 when none), read from MySQL at scrape',
      registers: [registry],
    }),
    orderEventsParkedNow: new client.Gauge({
      name: 'seckill_order_events_parked',
      help: 'Order events parked now, waiting for an operator (admin retry), read from MySQL at scrape',
      registers: [registry],
    }),
    reconciliationMismatches: new client.Gauge({
      name: 'seckill_reconciliation_mismatches',
      help: 'Failing reconciliation checks at the last run, per activity',
      labelNames: ['activity'],
      registers: [registry],
    }),
    redisReplicasInSync: new client.Gauge({
      name: 'seckill_redis_replicas_in_sync',
      help: 'Replicas in sync (online, lag <= REDIS_REPLICA_MAX_LAG_SECONDS) with each Redis primary serving a warmed sale',
      labelNames: ['node'],
      registers: [registry],
    }),
    redisWaitReplicas: new client.Gauge({
      name: 'seckill_redis_wait_replicas',
      help: 'REDIS_WAIT_REPLICAS: replicas that must hold a reservation before it is promised',
      registers: [registry],
    }),
    bucketShortOfReplicasUnits: new client.Gauge({
      name: 'seckill_bucket_short_of_replicas_units',
      help: 'Units held in a stock bucket whose primary has fewer replicas in sync than REDIS_WAIT_REPLICAS (cannot be sold; 0 otherwise)',
      labelNames: ['activity', 'bucket'],
      registers: [registry],
    }),
    reconciliationRuns: new client.Counter({
      name: 'seckill_reconciliation_runs_total',
      help: 'Periodic reconciliation runs per activity, by result: ok, mismatch (alarmed), unstable (Redis moved during every reading; skipped, no alarm)',
      labelNames: ['activity', 'result'],
      registers: [registry],
    }),
    adminChanges: new client.Counter({
      name: 'seckill_admin_changes_total',
      help: 'Live changes by operators (switches, thresholds, eligibility, releases, deny list), by setting',
      labelNames: ['setting'],
      registers: [registry],
    }),
    heldBackUnits: new client.Gauge({
      name: 'seckill_held_back_units',
      help: 'Units of an activity not yet released for sale (tranches), as of its last change here',
      labelNames: ['activity'],
      registers: [registry],
    }),
    warmups: new client.Counter({
      name: 'seckill_warmup_total',
      help: 'Scheduled warm-up steps by outcome (warmed, verified, mismatch, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    warmupMismatches: new client.Counter({
      name: 'seckill_warmup_mismatches_total',
      help: 'Warm-up verifications that found Redis and MySQL disagreeing (alert: warmup_mismatch)',
      registers: [registry],
    }),
    reserveUnconfirmed: new client.Counter({
      name: 'seckill_reserve_unconfirmed_total',
      help: 'Reservations granted on the primary but not confirmed by REDIS_WAIT_REPLICAS replicas in time (503)',
      registers: [registry],
    }),
    failoverSteps: new client.Counter({
      name: 'seckill_failover_steps_total',
      help: 'Failover handling steps: detected, recovering, recovered, refused (alert), reopened',
      labelNames: ['step'],
      registers: [registry],
    }),
    failoverClosed: new client.Gauge({
      name: 'seckill_failover_closed',
      help: '1 while a sale is closed after a Redis failover (until recovery proves its state)',
      labelNames: ['activity'],
      registers: [registry],
    }),
    failoverClosedSeconds: new client.Histogram({
      name: 'seckill_failover_closed_seconds',
      help: 'How long a sale stayed closed after a detected Redis failover, detection to reopen',
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120],
      registers: [registry],
    }),
  };
}
