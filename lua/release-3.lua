--[[
  Release: compensation for a reservation settlement gave up on (dead letter) or found surplus.
  Idempotent: a reservation is released at most once. Never creates stock the DB does not have:
  units go back only while stock + quantity stays within the cap the caller read from MySQL.

  Input:
    KEYS[1] stock key     sk:{A:S}:stock
    KEYS[2] holders key   sk:{A:S}:holders
    KEYS[3] released key  sk:{A:S}:released   hash reservationId -> units given back (0..quantity)

    ARGV[1] reservationId
    ARGV[2] userId
    ARGV[3] quantity
    ARGV[4] cap: the most units Redis stock may hold afterwards (MySQL available); -1 = no restock

  Output:
     1, restocked   DONE: holder cleared if it was this reservation; `restocked` units back
     2, restocked   ALREADY: released before; `restocked` is what that release gave back
    -1              NOT_WARMED: stock key missing (Redis lost data) — nothing changed; recover first

  Side effects (DONE only): HSET released, HDEL holder (only if it is this reservation),
  INCRBY stock (only within the cap).
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local stockKey = KEYS[1]
local holdersKey = KEYS[2]
local releasedKey = KEYS[3]

local reservationId = ARGV[1]
local userId = ARGV[2]
local quantity = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])

local before = rcall('HGET', releasedKey, reservationId)
if before then
  return { REPLY.ALREADY, tonumber(before) }
end

local stock = rcall('GET', stockKey)
if not stock then
  return { REPLY.NOT_WARMED }
end

local restock = 0
if cap >= 0 and tonumber(stock) + quantity <= cap then
  restock = quantity
  rcall('INCRBY', stockKey, quantity)
end
rcall('HSET', releasedKey, reservationId, restock)
if rcall('HGET', holdersKey, userId) == reservationId then
  rcall('HDEL', holdersKey, userId)
end
return { REPLY.DONE, restock }
