-- Stock buckets (docs/design.md §10): how many Redis buckets (hash tags) the sale's stock is split over.
-- 1 keeps the single-key layout; up to 64. Fixed at creation: the buckets hold the live stock.
ALTER TABLE seckill_activity ADD COLUMN stock_buckets SMALLINT UNSIGNED NOT NULL DEFAULT 1;
