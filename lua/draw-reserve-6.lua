--[[
  Draw reserve: the lottery draw's winners of one batch, in draw order, each decided by the reserve
  rule (lua/includes/reserve-rule.lua, the same as a purchase's lua/reserve-6.lua) one after the
  other in one atomic call — the outcome of each is exactly that of one reserve-6 call after another,
  for one round trip per batch instead of one per winner. Single-bucket sales only (with
  buckets a reservation may borrow across slots; the draw then calls reserve-6 one winner at a time).

  Input:
    KEYS[1..6] the bucket's keys, as reserve-6.lua: stock, holders, events, config, borrowing, denied

    ARGV[1] now (ms since epoch)
    ARGV[2 + 5i .. 6 + 5i], for each winner i = 0, 1, … in draw order:
            userId, quantity (integer >= 1), reservationId (new; used only when granted), requestId,
            traceId

  The deny list is checked for each winner (a denied one answers DENIED and takes nothing); eligibility is
  the draw's own decision (claims stored with the entry, rule in force at the close), not checked here.

  Output: a flat array, three slots per winner in the order given:
    code, reservationId or '', remaining or 0
  with the codes of reserve-6.lua (lua/includes/reply-codes.lua: DONE, ALREADY, NOT_WARMED, PAUSED,
  ENDED, SOLD_OUT, LIMIT_EXCEEDED, INSUFFICIENT_STOCK, DENIED; never BORROW, PENDING or NOT_ELIGIBLE here).

  Side effects: those of reserve-6.lua for the winners granted, batched: the rule runs on what was
  read for the whole batch (one HMGET of the holders and one of the deny list), then one DECRBY of
  the units granted, one HSET of their holders and one XADD per grant in draw order — one command
  per winner instead of five; stock and holders are written before the events, as reserve-6 does.
]]
--- @include "includes/reserve-rule"

-- HMGET of many fields, a slice at a time (Lua's unpack takes a few thousand values at most).
local UNPACK_SLICE = 1000
local function readEach(key, fields)
  local values = {}
  for from = 1, #fields, UNPACK_SLICE do
    local slice = redis.call('HMGET', key, unpack(fields, from, math.min(from + UNPACK_SLICE - 1, #fields)))
    for j = 1, #slice do
      values[from + j - 1] = slice[j]
    end
  end
  return values
end

local now = ARGV[1]
local count = (#ARGV - 1) / 5
-- The sale, and every winner's holders entry and deny revision, read once for the batch.
local sale = readSale(KEYS)
local users = {}
for w = 1, count do
  users[w] = ARGV[5 * w - 3]
end
local held, revisions = {}, {}
if sale and count > 0 then
  held = readEach(KEYS[2], users)
  revisions = readEach(KEYS[6], users)
end

-- The rule for each winner in draw order; a grant of this batch counts for the ones after it (the
-- units left, and the holder a user listed twice would find).
local out = {}
local grants = {}
local granted = {}
local units = 0
local reads = {
  held = function(w)
    return granted[users[w]] or held[w]
  end,
  denied = function(w)
    return deniesRevision(revisions[w])
  end,
  eligible = function()
    return true
  end,
}
for w = 1, count do
  local at = 5 * w - 3
  local userId, quantity, reservationId = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2]
  local code, id = decide(sale, quantity, false, reads, w)
  if code == REPLY.DONE then
    sale.stock = sale.stock - quantity
    units = units + quantity
    granted[userId] = reservationId
    grants[#grants + 1] = at
    id = reservationId
  end
  out[#out + 1] = code
  out[#out + 1] = id or ''
  out[#out + 1] = code == REPLY.DONE and sale.stock or 0
end

-- The writes of the grants, as reserve-6 makes them (stock and holders before the events): one
-- DECRBY, the holders in slices, one XADD each in draw order.
if #grants > 0 then
  redis.call('DECRBY', KEYS[1], units)
  for from = 1, #grants, UNPACK_SLICE do
    local fields = {}
    for g = from, math.min(from + UNPACK_SLICE - 1, #grants) do
      local at = grants[g]
      fields[#fields + 1] = ARGV[at]
      fields[#fields + 1] = ARGV[at + 2]
    end
    redis.call('HSET', KEYS[2], unpack(fields))
  end
  for _, at in ipairs(grants) do
    addReservationEvent(KEYS[3], ARGV[at + 2], ARGV[at + 3], ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 4], now)
  end
end
return out
