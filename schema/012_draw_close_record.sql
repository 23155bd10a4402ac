-- The draw's close record (scheme 3, docs/lottery.md): the parameters that decide the outcome — the
-- units drawn, the quantity rule and the eligibility rule in force at the close — fixed when entries
-- close, published beside the entrants' digest before the seed, and hashed with it into
-- close_digest. `verify-draw` replays the winners from these units. Scheme 3 also binds the scheme
-- into the commitment published at creation. Rows of schemes 1 and 2 keep both columns NULL.

ALTER TABLE seckill_draw
  ADD COLUMN close_parameters TEXT          NULL,
  ADD COLUMN close_digest     CHAR(64)      NULL;
