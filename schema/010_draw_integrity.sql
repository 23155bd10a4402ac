-- A draw no insider can predict or steer. New draws (scheme 2) keep no seed in MySQL
-- before the reveal: the seed is HMAC(DRAW_SECRET, activity id, seed_nonce), and only its commitment
-- is stored at creation; `seed` is written when the winners are final. At the close the digest of
-- the closed entrant list is recorded (and published) before the seed is revealed, and every ticket
-- depends on it. Scheme 1 rows (drawn before) keep their stored seed and their rule.
-- The published list gains each line's entrant id, its place in the closed list, and whether the
-- entrant was excluded at the draw (denied, or not eligible under the rule in force at the close).

ALTER TABLE seckill_draw
  MODIFY COLUMN seed       CHAR(64)         NULL,
  ADD COLUMN scheme          TINYINT UNSIGNED NOT NULL DEFAULT 1,
  ADD COLUMN seed_nonce      CHAR(64)         NULL,
  ADD COLUMN entrants_digest CHAR(64)         NULL,
  ADD COLUMN excluded        INT UNSIGNED     NULL;

ALTER TABLE seckill_draw_entrant
  ADD COLUMN entrant  CHAR(64)     NULL,
  ADD COLUMN entry    INT UNSIGNED NULL,
  ADD COLUMN excluded TINYINT      NOT NULL DEFAULT 0;
