-- Downstream order events (docs/design.md §10): written in the same transaction as the order change they
-- announce (order.created by settlement, order.paid by the payment webhook, order.timed_out by the
-- timeout job), only when ORDER_EVENTS_URL is set; delivered at least once by the order-event
-- worker, which deletes a row once its event is delivered — the table holds the backlog and the
-- parked events only, so the claim scans the primary key from the oldest pending row.
-- event_id = `<order_no>:<type>` (stable: receivers dedupe by it; also how an order's later event
-- finds its earlier one). A settlement batch's order.created events share ONE row: event_id
-- `batch:<hex>`, `events` = how many, `payload` = JSON [[order_no, user_id, quantity], ...]; those
-- that fail delivery get rows of their own. seq (auto-increment) orders events: an order's events
-- are written by transactions that start after the previous one's committed.
-- status: 0 pending, 2 parked (after ORDER_EVENTS_MAX_ATTEMPTS; admin retries it).
-- next_attempt_at: when a pending event is due — after its backoff, or after the lease of the
-- worker that claimed it ran out.
-- Few indexes on purpose: each is written inside the transactions of settlement, payment and timeout.
CREATE TABLE order_event_outbox (
  seq             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  event_id        VARCHAR(64)     NOT NULL,
  type            VARCHAR(32)     NOT NULL,
  order_no        VARCHAR(32)     NOT NULL,
  activity_id     BIGINT UNSIGNED NOT NULL,
  user_id         BIGINT UNSIGNED NOT NULL,
  quantity        INT UNSIGNED    NOT NULL,
  events          INT UNSIGNED    NOT NULL DEFAULT 1,
  payload         MEDIUMTEXT      NULL,
  occurred_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  status          TINYINT         NOT NULL DEFAULT 0,
  attempts        INT UNSIGNED    NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  last_error      VARCHAR(255)    NULL,
  PRIMARY KEY (seq),
  UNIQUE KEY uk_event_id (event_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
