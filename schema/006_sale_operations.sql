-- Sale operations (docs/design.md §10): tranches, early sold-out threshold, eligibility, scheduled and
-- verified warm-up, deny list. Runs on MySQL 8 and MariaDB >= 10.6 (no engine-specific syntax).

-- Units of the stock not yet put on sale. `available` never includes them (so the settlement's
-- conditional UPDATE guards them too): a release moves units from held_back to available once
-- Redis has them (seckill_stock_release). initial_stock = available + held_back + pending
-- releases + deducted − refilled.
ALTER TABLE seckill_stock ADD COLUMN held_back INT UNSIGNED NOT NULL DEFAULT 0;

-- sold_out_threshold: the public state is sold out when Redis has this many units or fewer left.
-- eligibility: JSON {"claim","values"} or NULL (everyone).
-- warmup_status: pending → warming → warmed → verifying → verified | mismatch (scheduled warm-up);
-- warmup_claimed_at: when an origin claimed the current step (a lease, so a dead origin's claim lapses).
ALTER TABLE seckill_activity
  ADD COLUMN sold_out_threshold INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN eligibility        TEXT         NULL,
  ADD COLUMN warmup_status      VARCHAR(16)  NOT NULL DEFAULT 'pending',
  ADD COLUMN warmup_claimed_at  DATETIME(3)  NULL,
  ADD KEY idx_warmup_status (warmup_status, starts_at);

-- One row per release of held-back units. status 0: committed here (held_back already reduced),
-- not yet in Redis; 1: applied to Redis and added to `available`. Applied idempotently by id.
CREATE TABLE seckill_stock_release (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  activity_id BIGINT UNSIGNED NOT NULL,
  sku_id      BIGINT UNSIGNED NOT NULL,
  units       INT UNSIGNED    NOT NULL,
  actor       VARCHAR(64)     NOT NULL,
  status      TINYINT         NOT NULL DEFAULT 0,
  attempts    INT UNSIGNED    NOT NULL DEFAULT 0,
  created_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at  DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_status_id (status, id),
  KEY idx_activity (activity_id, sku_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Users refused at the edge (403 denied). A lifted entry stays as denied = 0 until pushed, so the
-- edge learns of the lift too; pushed_revision < revision = the edge has not confirmed it yet.
CREATE TABLE seckill_deny_list (
  user_id         BIGINT UNSIGNED NOT NULL,
  denied          TINYINT         NOT NULL DEFAULT 1,
  actor           VARCHAR(64)     NOT NULL,
  revision        INT UNSIGNED    NOT NULL DEFAULT 1,
  pushed_revision INT UNSIGNED    NOT NULL DEFAULT 0,
  updated_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
