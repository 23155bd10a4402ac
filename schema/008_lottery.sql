-- Lottery admission (docs/design.md §10): the activity's admission mode, the draw record (one per
-- lottery activity: the secret seed from creation on, the lease that makes the draw run once, the
-- published summary) and the published entrant list. Runs on MySQL 8 and MariaDB >= 10.6.

ALTER TABLE seckill_activity
  ADD COLUMN admission         VARCHAR(16)  NOT NULL DEFAULT 'fcfs',
  ADD COLUMN lottery_window_ms INT UNSIGNED NOT NULL DEFAULT 3000;

-- state: pending (window not closed) -> drawing (entries closed, reserving in HMAC order)
--        -> drawn (winners final, seed public) -> published (entrant list written)
CREATE TABLE seckill_draw (
  activity_id BIGINT UNSIGNED NOT NULL,
  seed        CHAR(64)        NOT NULL,
  commitment  CHAR(64)        NOT NULL,
  state       VARCHAR(16)     NOT NULL DEFAULT 'pending',
  owner       VARCHAR(64)     NULL,
  lease_until DATETIME(3)     NULL,
  units       INT UNSIGNED    NULL,
  entrants    INT UNSIGNED    NULL,
  winners     INT UNSIGNED    NULL,
  units_won   INT UNSIGNED    NULL,
  draw_ms     INT UNSIGNED    NULL,
  started_at  DATETIME(3)     NULL,
  drawn_at    DATETIME(3)     NULL,
  PRIMARY KEY (activity_id),
  KEY idx_draw_state (state)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- ticket = hex HMAC-SHA256(seed, userId): the entrant's place in the draw order, without the user id.
CREATE TABLE seckill_draw_entrant (
  activity_id BIGINT UNSIGNED NOT NULL,
  ticket      CHAR(64)        NOT NULL,
  quantity    INT UNSIGNED    NOT NULL,
  won         TINYINT         NOT NULL,
  PRIMARY KEY (activity_id, ticket)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
