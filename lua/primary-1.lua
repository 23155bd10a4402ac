--[[
  Primary: the identity of the Redis server that serves KEYS[1]'s slot as primary — its run id,
  which a restart or a promoted replica changes (origin/recovery/failover-watch.ts). Run as a
  script with the key so that the client routes it exactly as it routes the reserve script (on a
  cluster: to the slot's master, following MOVED), not to whichever node a keyless command reaches.

  Input:  KEYS[1] any key of the bucket (its stock key)
  Output: run_id (40 hex characters)
  Side effects: none.
]]
return string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
