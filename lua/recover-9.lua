--[[
  Recover: rebuilds a sale's Redis state after Redis lost it, from figures the origin proved from
  MySQL and the surviving Stream (origin/operations/recover.ts). All or nothing; refuses when the
  sale is warm (nothing to recover) or when the Stream with its consumer group is gone (the
  reservations granted but not yet settled cannot be known).

  Input:
    KEYS[1] stock key     sk:{A:S}:stock
    KEYS[2] holders key   sk:{A:S}:holders
    KEYS[3] events key    sk:{A:S}:events
    KEYS[4] config key    sk:{A:S}:cfg
    KEYS[5] released key  sk:{A:S}:released
    KEYS[6] refilled key  sk:{A:S}:refilled
    KEYS[7] borrowing key sk:{A:S}:borrowing  (stock buckets) borrows of this bucket's users
    KEYS[8] lent key      sk:{A:S}:lent       (stock buckets) units this bucket lent
    KEYS[9] tranches key  sk:{A:S}:tranches   releaseId -> units of held-back stock this bucket added

    ARGV[1] stock to set
    ARGV[2] state (open|paused|stopped)
    ARGV[3] maxPerUser
    ARGV[4] consumer group name
    ARGV[5] h: number of holder pairs, then h pairs userId, reservationId
    then    r: number of released pairs, then r pairs reservationId, units
    then    f: number of refilled pairs, then f pairs reservationId, units
    then    t: number of tranche pairs, then t pairs releaseId, units — this bucket's share of every
            release MySQL applied (the stock set here holds them; reconciliation reads the hash as
            what the stock holds of tranches, and a release still pending must find no entry)
    then    e: number of restored reservations (optional, 0 when absent), then e × 6 fields
            reservationId, requestId, userId, quantity, traceId, ts — reservations MySQL proves (orders,
            dead letters, lost requeues) that the surviving Stream lacks (a failover lost them after a
            consumer read them): appended again so the Stream stays the whole ledger. Consumers see
            them again: an order's is a duplicate, a dead letter's is left to its dead letter.

  Output:
     1, stock, holders   DONE: stock, holders, released, refilled, tranches and config rewritten
   -17                   WARM: the stock key exists — nothing to recover, nothing changed
   -18                   NO_STREAM: the Stream or its consumer group is gone — nothing changed

  Side effects (DONE only): DEL + HSET holders, released, refilled, tranches; XADD restored; SET stock; HSET config;
  DEL borrowing and lent — units in transit are unsettled units MySQL still has, so the proven stock
  already counts them; a left-over lent entry would be given back a second time.

]]
--- @include "includes/reply-codes"
--- @include "includes/reservation-event"
local rcall = redis.call
local stockKey = KEYS[1]
local holdersKey = KEYS[2]
local eventsKey = KEYS[3]
local configKey = KEYS[4]
local releasedKey = KEYS[5]
local refilledKey = KEYS[6]
local borrowingKey = KEYS[7]
local lentKey = KEYS[8]
local tranchesKey = KEYS[9]

if rcall('EXISTS', stockKey) == 1 then
  return { REPLY.WARM }
end
if rcall('EXISTS', eventsKey) == 0 then
  return { REPLY.NO_STREAM }
end
local hasGroup = false
for _, group in ipairs(rcall('XINFO', 'GROUPS', eventsKey)) do
  for i = 1, #group, 2 do
    if group[i] == 'name' and group[i + 1] == ARGV[4] then
      hasGroup = true
    end
  end
end
if not hasGroup then
  return { REPLY.NO_STREAM }
end

local function loadPairs(key, at)
  rcall('DEL', key)
  local n = tonumber(ARGV[at])
  for i = 1, n do
    rcall('HSET', key, ARGV[at + 2 * i - 1], ARGV[at + 2 * i])
  end
  return at + 2 * n + 1
end

local at = loadPairs(holdersKey, 5)
at = loadPairs(releasedKey, at)
at = loadPairs(refilledKey, at)
at = loadPairs(tranchesKey, at)
for i = 1, tonumber(ARGV[at] or '0') do
  local f = at + 6 * (i - 1)
  addReservationEvent(eventsKey, ARGV[f + 1], ARGV[f + 2], ARGV[f + 3], ARGV[f + 4], ARGV[f + 5], ARGV[f + 6])
end
rcall('DEL', borrowingKey, lentKey)
rcall('SET', stockKey, ARGV[1])
rcall('HSET', configKey, 'state', ARGV[2], 'maxPerUser', ARGV[3])
return { REPLY.DONE, tonumber(ARGV[1]), rcall('HLEN', holdersKey) }
