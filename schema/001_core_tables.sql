-- Core tables of docs/design.md §6. Runs on MySQL 8 and MariaDB >= 10.6 (no engine-specific syntax).

CREATE TABLE seckill_activity (
  id                      BIGINT UNSIGNED  NOT NULL,
  sku_id                  BIGINT UNSIGNED  NOT NULL,
  title                   VARCHAR(200)     NOT NULL,
  starts_at               DATETIME(3)      NOT NULL,
  ends_at                 DATETIME(3)      NOT NULL,
  state                   VARCHAR(16)      NOT NULL DEFAULT 'open',
  max_per_user            INT UNSIGNED     NOT NULL DEFAULT 1,
  payment_timeout_seconds INT UNSIGNED     NOT NULL DEFAULT 900,
  user_rate_per_sec       DOUBLE           NOT NULL DEFAULT 1,
  admission_rate_per_sec  INT UNSIGNED     NOT NULL DEFAULT 5000,
  admission_shards        INT UNSIGNED     NOT NULL DEFAULT 4,
  version                 INT UNSIGNED     NOT NULL DEFAULT 1,
  created_at              DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at              DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE seckill_stock (
  activity_id   BIGINT UNSIGNED NOT NULL,
  sku_id        BIGINT UNSIGNED NOT NULL,
  initial_stock INT UNSIGNED    NOT NULL,
  available     INT UNSIGNED    NOT NULL,
  updated_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (activity_id, sku_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- status: 0 PENDING, 1 PAID, 2 TIMEOUT
CREATE TABLE seckill_order (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  order_no       VARCHAR(32)     NOT NULL,
  reservation_id VARCHAR(64)     NOT NULL,
  request_id     VARCHAR(100)    NOT NULL,
  activity_id    BIGINT UNSIGNED NOT NULL,
  sku_id         BIGINT UNSIGNED NOT NULL,
  user_id        BIGINT UNSIGNED NOT NULL,
  quantity       INT UNSIGNED    NOT NULL,
  status         TINYINT         NOT NULL DEFAULT 0,
  expire_at      DATETIME(3)     NOT NULL,
  trace_id       VARCHAR(32)     NULL,
  payment_id     VARCHAR(64)     NULL,
  paid_at        DATETIME(3)     NULL,
  created_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_activity_user_sku (activity_id, user_id, sku_id),
  UNIQUE KEY uk_order_no (order_no),
  UNIQUE KEY uk_reservation_id (reservation_id),
  UNIQUE KEY uk_request_id (request_id),
  KEY idx_status_expire (status, expire_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- change_type: DEDUCT (settlement) or REFILL (timeout); one row per reservation and kind.
CREATE TABLE seckill_stock_log (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  activity_id BIGINT UNSIGNED NOT NULL,
  sku_id      BIGINT UNSIGNED NOT NULL,
  biz_id      VARCHAR(64)     NOT NULL,
  change_type VARCHAR(16)     NOT NULL,
  quantity    INT UNSIGNED    NOT NULL,
  created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_biz_change (biz_id, change_type),
  KEY idx_activity (activity_id, sku_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- status: 0 pending, 1 done. Claimed with FOR UPDATE SKIP LOCKED by the outbox worker.
CREATE TABLE stock_sync_outbox (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  activity_id    BIGINT UNSIGNED NOT NULL,
  sku_id         BIGINT UNSIGNED NOT NULL,
  reservation_id VARCHAR(64)     NOT NULL,
  kind           VARCHAR(16)     NOT NULL,
  quantity       INT UNSIGNED    NOT NULL,
  status         TINYINT         NOT NULL DEFAULT 0,
  attempts       INT UNSIGNED    NOT NULL DEFAULT 0,
  created_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_reservation_kind (reservation_id, kind),
  KEY idx_status_id (status, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Reservations settlement gave up on after maxDeliveries. restocked = units given back to Redis.
-- status: open | retried | given_up
CREATE TABLE seckill_dead_letter (
  id             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  activity_id    BIGINT UNSIGNED NOT NULL,
  sku_id         BIGINT UNSIGNED NOT NULL,
  reservation_id VARCHAR(64)     NOT NULL,
  user_id        BIGINT UNSIGNED NOT NULL,
  quantity       INT UNSIGNED    NOT NULL,
  stream_id      VARCHAR(40)     NOT NULL,
  deliveries     INT UNSIGNED    NOT NULL,
  reason         VARCHAR(255)    NOT NULL,
  restocked      INT UNSIGNED    NOT NULL DEFAULT 0,
  status         VARCHAR(16)     NOT NULL DEFAULT 'open',
  payload        TEXT            NOT NULL,
  created_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at     DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_reservation_id (reservation_id),
  KEY idx_activity_status (activity_id, status)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
