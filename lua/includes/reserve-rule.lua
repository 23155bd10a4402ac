--[[
  The reserve rule: the one decision of a flash sale for one user — check, pre-deduct, record the
  pending event — written once for the purchase (lua/reserve-6.lua) and the lottery draw's batches
  (lua/draw-reserve-6.lua). Expanded in place by the script loader (origin/redis/scripts/load.ts) at
  `--- @include`.

  readSale reads the sale once per call; decide is the rule itself, on what the caller read, with
  no command of its own; reserveUnits is one purchase (reads as the rule asks, then the writes of
  its answer). The draw's batch reads every winner at once and writes its grants together.

  keys: the bucket's six keys in reserve-6's order (stock, holders, events, config, borrowing,
  denied). canBorrow: other buckets exist (mark the user pending when this one cannot serve).
  claims / checkEligibility: the JWT claims as JSON and whether to check the sale's rule against
  them (the draw decides eligibility itself). reserveUnits returns the reply of reserve-6.lua (see
  its header).
]]
--- @include "includes/reply-codes"
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

-- The rule: one user's answer from the sale (readSale) and what was read of the user, with no
-- Redis command of its own. `reads` tells, when asked and only then (a purchase reads lazily, a
-- draw batch has read every winner at once), of the user at `at` (the batch's index; a purchase has
-- one user): held(at) the user's holders entry or false, denied(at) and eligible(at) booleans.
-- Returns the reply's code and, for a repeat or a pending borrow, the id held.
--   DONE a grant, BORROW a borrow (the caller writes what each means); the others are answers as they are
--   (the codes of lua/includes/reply-codes.lua).
local function decide(sale, quantity, canBorrow, reads, at)
  if not sale then
    return REPLY.NOT_WARMED
  end
  if sale.state == 'paused' then
    return REPLY.PAUSED
  end
  if sale.state == 'stopped' then
    return REPLY.ENDED
  end

  local held = reads.held(at)
  if held then
    if string.sub(held, 1, 1) == '~' then
      return REPLY.PENDING, string.sub(held, 2)
    end
    return REPLY.ALREADY, held
  end

  if reads.denied(at) then
    return REPLY.DENIED
  end
  if not reads.eligible(at) then
    return REPLY.NOT_ELIGIBLE
  end

  if quantity > sale.maxPerUser then
    return REPLY.LIMIT_EXCEEDED
  end

  local stock = sale.stock
  if stock < quantity and canBorrow then
    return REPLY.BORROW
  end
  if stock <= 0 then
    return REPLY.SOLD_OUT
  end
  if stock < quantity then
    return REPLY.INSUFFICIENT_STOCK
  end
  return REPLY.DONE
end

-- One purchase: the sale read, the rule on the user's records read as it asks, then the writes of
-- its answer (grant: DECRBY stock, HSET holders, XADD events; borrow: the pending marks).
local function reserveUnits(keys, userId, quantity, reservationId, requestId, traceId, now, canBorrow, claims,
                            checkEligibility)
  local rcall = redis.call
  local holdersKey = keys[2]
  local sale = readSale(keys)
  local code, id = decide(sale, quantity, canBorrow, {
    held = function()
      return rcall('HGET', holdersKey, userId)
    end,
    denied = function()
      return isDenied(keys[6], userId)
    end,
    eligible = function()
      return not checkEligibility or isEligible(sale.eligibility, claims)
    end,
  })
  if code == REPLY.DONE then
    local remaining = rcall('DECRBY', keys[1], quantity)
    rcall('HSET', holdersKey, userId, reservationId)
    addReservationEvent(keys[3], reservationId, requestId, userId, quantity, traceId, now)
    return { REPLY.DONE, reservationId, remaining }
  end
  if code == REPLY.BORROW then
    rcall('HSET', holdersKey, userId, '~' .. reservationId)
    rcall('HSET', keys[5], reservationId, 'p|' .. now .. '|' .. userId .. '|' .. quantity)
    return { REPLY.BORROW, reservationId, sale.stock }
  end
  return { code, id }
end
