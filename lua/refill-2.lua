--[[
  Refill: puts the units of a timed-out order back on sale, once per reservation. Runs after the
  timeout transaction committed `available += quantity` and an outbox row (docs/design.md §6).
  Never creates a stock key: if Redis lost data, recover rebuilds the stock from MySQL instead.

  Input:
    KEYS[1] stock key     sk:{A:S}:stock
    KEYS[2] refilled key  sk:{A:S}:refilled   hash reservationId -> units refilled

    ARGV[1] reservationId
    ARGV[2] quantity

  Output:
     1, stock   DONE: `quantity` units added; `stock` is the stock afterwards
     2, stock   ALREADY: this reservation was refilled before; nothing changed
    -1          NOT_WARMED: stock key missing (Redis lost data) — nothing changed; recover first

  Side effects (DONE only): INCRBY stock, HSET refilled.
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local stockKey = KEYS[1]
local refilledKey = KEYS[2]

local reservationId = ARGV[1]
local quantity = tonumber(ARGV[2])

local stock = rcall('GET', stockKey)
if rcall('HEXISTS', refilledKey, reservationId) == 1 then
  return { REPLY.ALREADY, tonumber(stock or '0') }
end
if not stock then
  return { REPLY.NOT_WARMED }
end

local after = rcall('INCRBY', stockKey, quantity)
rcall('HSET', refilledKey, reservationId, quantity)
return { REPLY.DONE, after }
