-- Shadow sales (docs/rehearsal.md "A shadow rehearsal on the production stack"): a sale created with
-- `shadow: true` runs on the real edge, origin, Redis and MySQL server, but every row its orders
-- make goes to the `shadow_*` tables below (same DDL as the real ones), so the real tables never hold
-- a shadow row. Which table a statement uses is chosen in one place (origin/orders/ledger.ts).
-- `shadow` is fixed at creation: a real sale never becomes a shadow one, nor the other way.

ALTER TABLE seckill_activity ADD COLUMN shadow TINYINT NOT NULL DEFAULT 0;

CREATE TABLE shadow_seckill_order LIKE seckill_order;
CREATE TABLE shadow_seckill_stock_log LIKE seckill_stock_log;
CREATE TABLE shadow_seckill_refund LIKE seckill_refund;
CREATE TABLE shadow_stock_sync_outbox LIKE stock_sync_outbox;
CREATE TABLE shadow_order_event_outbox LIKE order_event_outbox;
