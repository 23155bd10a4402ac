--[[
  Confirm: the last step of a borrow, back on the user's home bucket. The units were taken from a
  donor (take-3); this turns the pending holder into the reservation and appends its event to the
  home bucket's Stream, so settlement books it like any other. Refuses once the borrow was given up
  (abandon-2): the caller must then give the donor's units back (give-back-2).

  Input:
    KEYS[1] holders key    sk:{A:S:h}:holders
    KEYS[2] events key     sk:{A:S:h}:events
    KEYS[3] borrowing key  sk:{A:S:h}:borrowing   reservationId -> "p|ts|userId|q" | "c|donor" | "a"

    ARGV[1] userId
    ARGV[2] reservationId
    ARGV[3] quantity
    ARGV[4] donor bucket (number)
    ARGV[5] requestId
    ARGV[6] traceId
    ARGV[7] now (ms since epoch)

  Output:
     1   DONE: holder set, event appended
     2   ALREADY: confirmed before; nothing changed
   -15   ABANDONED: the borrow was given up (or never marked) — nothing changed; give the units back

  Side effects (DONE only): HSET holders, HSET borrowing, XADD events.
]]
--- @include "includes/reply-codes"
--- @include "includes/reservation-event"

local rcall = redis.call
local holdersKey = KEYS[1]
local eventsKey = KEYS[2]
local borrowingKey = KEYS[3]

local userId = ARGV[1]
local reservationId = ARGV[2]

local state = rcall('HGET', borrowingKey, reservationId)
if state and string.sub(state, 1, 1) == 'c' then
  return { REPLY.ALREADY }
end
if not state or string.sub(state, 1, 1) ~= 'p' or rcall('HGET', holdersKey, userId) ~= '~' .. reservationId then
  return { REPLY.ABANDONED }
end
rcall('HSET', holdersKey, userId, reservationId)
rcall('HSET', borrowingKey, reservationId, 'c|' .. ARGV[4])
addReservationEvent(eventsKey, reservationId, ARGV[5], userId, ARGV[3], ARGV[6], ARGV[7])
return { REPLY.DONE }
