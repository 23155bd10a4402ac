--[[
  Requeue: an admin's "retry" of a dead-lettered reservation. Compensation released it (holder
  freed, maybe units back in stock); this takes those units out of stock again, gives the user the
  holder back and appends the reservation to the Stream once more, so settlement tries again.
  Idempotent: a reservation already requeued (not released, holder is it) is reported, not redone.

  Input:
    KEYS[1] stock key     sk:{A:S}:stock
    KEYS[2] holders key   sk:{A:S}:holders
    KEYS[3] events key    sk:{A:S}:events
    KEYS[4] released key  sk:{A:S}:released
    KEYS[5] denied key    sk:{A:S}:denied    hash userId -> signed deny-list revision (+ denied)

    ARGV[1] reservationId
    ARGV[2] userId
    ARGV[3] quantity
    ARGV[4] requestId
    ARGV[5] traceId
    ARGV[6] now (ms since epoch)

  Output:
     1, stock   DONE: `released` units taken back from stock, holder set, event appended
     2          ALREADY: requeued before (not released and the user's holder is this reservation)
    -1          NOT_WARMED: stock key missing (Redis lost data) — nothing changed
   -20          NOT_RELEASED: compensation has not released this reservation — nothing changed
   -21          HOLDS_OTHER: the user holds another reservation now — nothing changed
    -4          SOLD_OUT: the units given back were sold again — nothing changed
    -8          DENIED: the user was denied since; the units stay on sale — nothing changed

  Side effects (DONE only): DECRBY stock, HDEL released, HSET holders, XADD events.
]]
--- @include "includes/reply-codes"
--- @include "includes/reservation-event"
--- @include "includes/access-rules"

local rcall = redis.call
local stockKey = KEYS[1]
local holdersKey = KEYS[2]
local eventsKey = KEYS[3]
local releasedKey = KEYS[4]
local deniedKey = KEYS[5]

local reservationId = ARGV[1]
local userId = ARGV[2]

local stock = rcall('GET', stockKey)
if not stock then
  return { REPLY.NOT_WARMED }
end
local held = rcall('HGET', holdersKey, userId)
local restocked = rcall('HGET', releasedKey, reservationId)
if not restocked then
  if held == reservationId then
    return { REPLY.ALREADY }
  end
  return { REPLY.NOT_RELEASED }
end
if held then
  return { REPLY.HOLDS_OTHER }
end
if isDenied(deniedKey, userId) then
  return { REPLY.DENIED }
end
restocked = tonumber(restocked)
if tonumber(stock) < restocked then
  return { REPLY.SOLD_OUT }
end

local after = rcall('DECRBY', stockKey, restocked)
rcall('HDEL', releasedKey, reservationId)
rcall('HSET', holdersKey, userId, reservationId)
addReservationEvent(eventsKey, reservationId, ARGV[4], userId, ARGV[3], ARGV[5], ARGV[6])
return { REPLY.DONE, after }
