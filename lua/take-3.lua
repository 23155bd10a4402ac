--[[
  Take: the donor's step of a borrow (docs/design.md §10). A user whose home bucket could not serve is
  marked pending there (reserve-6 answered BORROW); this takes the units from another bucket of the
  same sale and records them as lent, so units in transit are always named somewhere.
  Idempotent per reservation.

  Input:
    KEYS[1] stock key   sk:{A:S:b}:stock   the donor bucket's remaining units
    KEYS[2] lent key    sk:{A:S:b}:lent    hash reservationId -> "quantity|homeBucket"
    KEYS[3] config key  sk:{A:S:b}:cfg     hash: state

    ARGV[1] reservationId
    ARGV[2] quantity
    ARGV[3] home bucket (number)

  Output:
     1, remaining   DONE: units taken from this bucket and recorded as lent
     2, remaining   ALREADY: this reservation took from this bucket before; nothing changed
    -1              NOT_WARMED: stock or config missing — nothing changed
   -10              NOT_OPEN: the sale is paused or stopped — nothing changed
   -11, remaining   SHORT: fewer units here than asked for — nothing changed

  Side effects (DONE only): DECRBY stock, HSET lent.
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local stockKey = KEYS[1]
local lentKey = KEYS[2]
local configKey = KEYS[3]

local reservationId = ARGV[1]
local quantity = tonumber(ARGV[2])

local stock = rcall('GET', stockKey)
local state = rcall('HGET', configKey, 'state')
if not stock or not state then
  return { REPLY.NOT_WARMED }
end
if rcall('HEXISTS', lentKey, reservationId) == 1 then
  return { REPLY.ALREADY, tonumber(stock) }
end
if state ~= 'open' then
  return { REPLY.NOT_OPEN }
end
if tonumber(stock) < quantity then
  return { REPLY.SHORT, tonumber(stock) }
end
local remaining = rcall('DECRBY', stockKey, quantity)
rcall('HSET', lentKey, reservationId, quantity .. '|' .. ARGV[3])
return { REPLY.DONE, remaining }
