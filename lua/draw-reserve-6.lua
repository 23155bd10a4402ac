--[[
  Draw reserve: the lottery draw's winners of one batch, in draw order, each decided by the reserve
  rule (lua/includes/reserve-rule.lua, the same as a purchase's lua/reserve-6.lua) one after the
  other in one atomic call — the outcome of each is exactly that of one reserve-6 call after another,
  for one round trip per batch instead of one per winner (issue 30.1). Single-bucket sales only (with
  buckets a reservation may borrow across slots; the draw then calls reserve-6 one winner at a time).

  Input:
    KEYS[1..6] the bucket's keys, as reserve-6.lua: stock, holders, events, config, borrowing, denied

    ARGV[1] now (ms since epoch)
    ARGV[2 + 5i .. 6 + 5i], for each winner i = 0, 1, … in draw order:
            userId, quantity (integer >= 1), reservationId (new; used only when granted), requestId,
            traceId

  The deny list is checked for each winner (a denied one answers -8 and takes nothing); eligibility is
  the draw's own decision (claims stored with the entry, rule in force at the close), not checked here.

  Output: a flat array, three slots per winner in the order given:
    code, reservationId or '', remaining or 0
  with the codes of reserve-6.lua (1 OK, 2 EXISTS, -1 NOT_WARMED, -2 PAUSED, -3 ENDED, -4 SOLD_OUT,
  -5 LIMIT_EXCEEDED, -6 INSUFFICIENT_STOCK, -8 DENIED; never 3 BORROW or 4 PENDING here).

  Side effects: those of reserve-6.lua for each winner granted (DECRBY stock, HSET holders, XADD events).
]]
--- @include "includes/reserve-rule"

local now = ARGV[1]
local out = {}
-- The sale is read once for the batch (decideUnits keeps its units current), not once per winner.
local sale = readSale(KEYS)
for i = 2, #ARGV, 5 do
  local reply = decideUnits(KEYS, sale, ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], now,
    false, '{}', false)
  out[#out + 1] = reply[1]
  out[#out + 1] = reply[2] or ''
  out[#out + 1] = reply[3] or 0
end
return out
