--[[
  The reserve rule: the one decision of a flash sale for one user — check, pre-deduct, record the
  pending event — written once for the purchase (lua/reserve-6.lua) and the lottery draw's batches
  (lua/draw-reserve-6.lua). Expanded in place by the script loader (origin/redis/scripts.ts) at
  `--- @include`.

  keys: the bucket's six keys in reserve-6's order (stock, holders, events, config, borrowing,
  denied). canBorrow: other buckets exist (mark the user pending when this one cannot serve).
  claims / checkEligibility: the JWT claims as JSON and whether to check the sale's rule against
  them (the draw decides eligibility itself). Returns the reply of reserve-6.lua (see its header).
]]
--- @include "includes/reservation-event"
--- @include "includes/access-rules"

-- The sale as the rule reads it: units left in this bucket and the config fields it uses; nil when
-- the bucket is not warmed (Redis lost it). Read once per script call: nothing else runs inside it.
local function readSale(keys)
  local stock = redis.call('GET', keys[1])
  local config = redis.call('HMGET', keys[4], 'state', 'maxPerUser', 'eligibility')
  if not stock or not config[1] then
    return nil
  end
  return { stock = tonumber(stock), state = config[1], maxPerUser = tonumber(config[2] or '1'), eligibility = config[3] }
end

-- One user's decision against `sale` (from readSale), which it keeps current: a grant lowers
-- sale.stock as it lowers the stock key, so the next decision in the same call reads what is left.
local function decideUnits(keys, sale, userId, quantity, reservationId, requestId, traceId, now, canBorrow, claims,
                           checkEligibility)
  local rcall = redis.call
  local stockKey = keys[1]
  local holdersKey = keys[2]
  local eventsKey = keys[3]
  local borrowingKey = keys[5]
  local deniedKey = keys[6]

  if not sale then
    return { -1 }
  end
  if sale.state == 'paused' then
    return { -2 }
  end
  if sale.state == 'stopped' then
    return { -3 }
  end

  local held = rcall('HGET', holdersKey, userId)
  if held then
    if string.sub(held, 1, 1) == '~' then
      return { 4, string.sub(held, 2) }
    end
    return { 2, held }
  end

  if isDenied(deniedKey, userId) then
    return { -8 }
  end
  if checkEligibility and not isEligible(sale.eligibility, claims) then
    return { -9 }
  end

  if quantity > sale.maxPerUser then
    return { -5 }
  end

  local stock = sale.stock
  if stock < quantity and canBorrow then
    rcall('HSET', holdersKey, userId, '~' .. reservationId)
    rcall('HSET', borrowingKey, reservationId, 'p|' .. now .. '|' .. userId .. '|' .. quantity)
    return { 3, reservationId, stock }
  end
  if stock <= 0 then
    return { -4 }
  end
  if stock < quantity then
    return { -6 }
  end

  local remaining = rcall('DECRBY', stockKey, quantity)
  sale.stock = remaining
  rcall('HSET', holdersKey, userId, reservationId)
  addReservationEvent(eventsKey, reservationId, requestId, userId, quantity, traceId, now)
  return { 1, reservationId, remaining }
end

-- One purchase: the sale read, then the decision.
local function reserveUnits(keys, userId, quantity, reservationId, requestId, traceId, now, canBorrow, claims,
                            checkEligibility)
  return decideUnits(keys, readSale(keys), userId, quantity, reservationId, requestId, traceId, now, canBorrow, claims,
    checkEligibility)
end
