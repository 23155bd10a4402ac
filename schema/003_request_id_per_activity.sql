-- request_id is unique across all sales, so it must name the sale too: it is stored as
-- `<activityId>:<userId>:<Idempotency-Key>` (up to 20 + 1 + 20 + 1 + 64 characters). Before, a
-- client reusing one Idempotency-Key in two sales had its second reservation taken for surplus.
ALTER TABLE seckill_order MODIFY COLUMN request_id VARCHAR(128) NOT NULL;
