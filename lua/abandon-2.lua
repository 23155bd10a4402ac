--[[
  Abandon: gives up a borrow on the user's home bucket — when no donor had the units, or when
  recovery finds a borrow left half-done by a process that died. After this, confirm-3 refuses for
  the reservation, so units a donor lent for it may safely go back (give-back-2).

  Input:
    KEYS[1] holders key    sk:{A:S:h}:holders
    KEYS[2] borrowing key  sk:{A:S:h}:borrowing

    ARGV[1] reservationId
    ARGV[2] marked before (ms): only a borrow marked earlier than this is given up; 0 = any age

  Output:
     1   DONE: the pending holder is cleared (the user may try again)
     2   ALREADY: given up before; nothing changed
   -12   CONFIRMED: the borrow completed; nothing changed (its units are sold)
   -13   TOO_FRESH: marked at or after ARGV[2] (maybe still in flight); nothing changed
   -14   UNKNOWN: no such borrow here

  Side effects (DONE only): HSET borrowing "a", HDEL holder (only if still this pending one).
]]
--- @include "includes/reply-codes"
local rcall = redis.call
local holdersKey = KEYS[1]
local borrowingKey = KEYS[2]

local reservationId = ARGV[1]
local state = rcall('HGET', borrowingKey, reservationId)
if not state then
  return { REPLY.UNKNOWN }
end
local kind = string.sub(state, 1, 1)
if kind == 'c' then
  return { REPLY.CONFIRMED }
end
if kind == 'a' then
  return { REPLY.ALREADY }
end
-- "p|ts|userId|quantity"
local ts, userId = string.match(state, '^p|(%d+)|(%d+)|')
local before = tonumber(ARGV[2])
if before > 0 and tonumber(ts) >= before then
  return { REPLY.TOO_FRESH }
end
rcall('HSET', borrowingKey, reservationId, 'a')
if rcall('HGET', holdersKey, userId) == '~' .. reservationId then
  rcall('HDEL', holdersKey, userId)
end
return { REPLY.DONE }
