--[[
  Give back: returns the units a donor bucket lent to a borrow that was given up (abandon-2 answered
  DONE or ALREADY for it). Once per reservation; never creates a stock key.

  Input:
    KEYS[1] stock key  sk:{A:S:b}:stock
    KEYS[2] lent key   sk:{A:S:b}:lent   hash reservationId -> "quantity|homeBucket"

    ARGV[1] reservationId

  Output:
     1, stock   DONE: the lent units are back in this bucket's stock
   -16          NOTHING_LENT: nothing lent for this reservation (never taken, or returned before)
    -1          NOT_WARMED: stock key missing — nothing changed

  Side effects (DONE only): INCRBY stock, HDEL lent.
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local stockKey = KEYS[1]
local lentKey = KEYS[2]

local reservationId = ARGV[1]
if rcall('EXISTS', stockKey) == 0 then
  return { REPLY.NOT_WARMED }
end
local lent = rcall('HGET', lentKey, reservationId)
if not lent then
  return { REPLY.NOTHING_LENT }
end
local quantity = tonumber(string.match(lent, '^(%d+)'))
local after = rcall('INCRBY', stockKey, quantity)
rcall('HDEL', lentKey, reservationId)
return { REPLY.DONE, after }
