--[[
  Warm up: load an activity's stock and switches into Redis before the sale. Never resets a sale
  in progress: if the stock key exists it only reports; if reservations were already issued but
  the stock key is gone (Redis lost data), it refuses — that is recover's job.

  Input:
    KEYS[1] stock key    sk:{A:S}:stock
    KEYS[2] holders key  sk:{A:S}:holders
    KEYS[3] events key   sk:{A:S}:events
    KEYS[4] config key   sk:{A:S}:cfg

    ARGV[1] stock (units available in MySQL)
    ARGV[2] state (open|paused|stopped)
    ARGV[3] maxPerUser
    ARGV[4] consumer group name

  Output:
     1, stock, holders   DONE: stock set, config written (with the primary that holds the load),
                         consumer group created
     2, stock, holders   ALREADY: already warmed; config refreshed, stock untouched
   -19                   HAS_HISTORY: no stock key but the Stream has events — recover instead

  Side effects: SET stock (DONE), HSET config, XGROUP CREATE ... MKSTREAM (DONE).

  A fresh load also records, in the config hash's `provenPrimary` field, the run id of the server
  that took it (as lua/primary-1.lua reads it): the failover watch compares the primary serving the
  bucket with it, so a failover or a restart after the load is seen even when no origin process
  was watching at the time (origin/recovery/failover-watch.ts). Recovery after a failover records
  the primary it proved the sale on in the same field.
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local stockKey = KEYS[1]
local holdersKey = KEYS[2]
local eventsKey = KEYS[3]
local configKey = KEYS[4]

local stock = rcall('GET', stockKey)
if stock then
  rcall('HSET', configKey, 'state', ARGV[2], 'maxPerUser', ARGV[3])
  return { REPLY.ALREADY, tonumber(stock), rcall('HLEN', holdersKey) }
end

if rcall('EXISTS', eventsKey) == 1 and rcall('XLEN', eventsKey) > 0 then
  return { REPLY.HAS_HISTORY }
end

rcall('SET', stockKey, ARGV[1])
local primary = string.match(rcall('INFO', 'server'), 'run_id:(%w+)')
rcall('HSET', configKey, 'state', ARGV[2], 'maxPerUser', ARGV[3], 'provenPrimary', primary)
-- The group may exist already (an empty Stream from an earlier warm-up): BUSYGROUP is fine.
redis.pcall('XGROUP', 'CREATE', eventsKey, ARGV[4], '0', 'MKSTREAM')
return { REPLY.DONE, tonumber(ARGV[1]), rcall('HLEN', holdersKey) }
