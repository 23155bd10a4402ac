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
     1, remaining   TAKEN: units taken from this bucket and recorded as lent
     2, remaining   ALREADY: this reservation took from this bucket before; nothing changed
    -1              NOT_WARMED: stock or config missing — nothing changed
    -2              CLOSED: the sale is paused or stopped — nothing changed
    -4, remaining   SHORT: fewer units here than asked for — nothing changed

  Side effects (TAKEN only): DECRBY stock, HSET lent.
]]
local rcall = redis.call
local stockKey = KEYS[1]
local lentKey = KEYS[2]
local configKey = KEYS[3]

local reservationId = ARGV[1]
local quantity = tonumber(ARGV[2])

local stock = rcall('GET', stockKey)
local state = rcall('HGET', configKey, 'state')
if not stock or not state then
  return { -1 }
end
if rcall('HEXISTS', lentKey, reservationId) == 1 then
  return { 2, tonumber(stock) }
end
if state ~= 'open' then
  return { -2 }
end
if tonumber(stock) < quantity then
  return { -4, tonumber(stock) }
end
local remaining = rcall('DECRBY', stockKey, quantity)
rcall('HSET', lentKey, reservationId, quantity .. '|' .. ARGV[3])
return { 1, remaining }
