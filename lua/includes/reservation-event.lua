--[[
  The reservation event a sale's Stream carries: the one field list, written once for every script
  that appends it. Its TypeScript mirror is origin/redis/reservation-event.ts (parseReservationEvent).
  Expanded in place by the script loader (origin/redis/scripts/load.ts) at `--- @include`.
]]
local function addReservationEvent(eventsKey, reservationId, requestId, userId, quantity, traceId, ts)
  return redis.call('XADD', eventsKey, '*',
    'reservationId', reservationId, 'requestId', requestId, 'userId', userId,
    'quantity', quantity, 'traceId', traceId, 'ts', ts)
end
