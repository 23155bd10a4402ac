-- What the edge does beyond an activity's admission rate (docs/design.md §10 `overflow`): 'reject' (503 busy +
-- Retry-After, as before) or 'queue' (a waiting room at the edge).
ALTER TABLE seckill_activity ADD COLUMN overflow VARCHAR(8) NOT NULL DEFAULT 'reject';
