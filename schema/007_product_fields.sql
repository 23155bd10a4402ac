-- Product fields of an activity, shown on the sale page. All optional (NULL = not set);
-- price is in the currency's minor unit (cents; whole yen for JPY), currency an ISO 4217 code.
ALTER TABLE seckill_activity
  ADD COLUMN description VARCHAR(2000) NULL,
  ADD COLUMN price_cents BIGINT UNSIGNED NULL,
  ADD COLUMN currency CHAR(3) NULL,
  ADD COLUMN image_url VARCHAR(2048) NULL;
