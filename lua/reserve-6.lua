--[[
  Reserve: the one atomic decision of a flash sale — check, pre-deduct, record the pending event.
  With stock buckets (docs/design.md §10) it runs on the user's home bucket, where the user's holder record
  lives; when that bucket cannot serve and borrowing is allowed, it marks the user pending instead
  (holder = "~" .. reservationId, borrowing[reservationId] = "p|now|userId|quantity") and the origin
  takes the units from another bucket (take-3), then confirms (confirm-3) or gives up (abandon-2).

  Input:
    KEYS[1] stock key    sk:{A:S}:stock    remaining units; its existence means "warmed"
    KEYS[2] holders key  sk:{A:S}:holders  hash userId -> reservationId (per-user limit + replay)
    KEYS[3] events key   sk:{A:S}:events   Stream of reservation events, settled by consumers
    KEYS[4] config key   sk:{A:S}:cfg      hash: state (open|paused|stopped), maxPerUser, eligibility
    KEYS[5] borrowing    sk:{A:S}:borrowing hash reservationId -> state of a borrow for a user of this bucket
    KEYS[6] denied key   sk:{A:S}:denied   hash userId -> signed deny-list revision (+ denied)

    ARGV[1] userId
    ARGV[2] quantity (integer >= 1)
    ARGV[3] reservationId (new id; used only when the reservation is granted)
    ARGV[4] requestId
    ARGV[5] traceId
    ARGV[6] now (ms since epoch)
    ARGV[7] 1 = other buckets exist (borrow when this one cannot serve), 0 = single bucket
    ARGV[8] the user's JWT claims the edge verified, JSON (`{}` when none)
    ARGV[9] 1 = check the eligibility rule against ARGV[8]; 0 = the caller decided it (the draw)

  Output:
     1, reservationId, remaining   DONE: granted; stock decremented, holder set, event appended
     2, reservationId              ALREADY: the user already holds this reservation (replay)
    -1                             NOT_WARMED: stock or config missing (never warmed, or Redis lost data)
    -2                             PAUSED: the sale is paused
    -3                             ENDED: the sale was stopped for good
    -4                             SOLD_OUT: no unit left at all
    -6                             INSUFFICIENT_STOCK: some units left, fewer than asked for (not sold out)
     3, reservationId, remaining   BORROW: this bucket cannot serve; the user is marked pending (ARGV[7] = 1 only)
     4, reservationId              PENDING: a borrow for this user is in flight (its reservation id)
    -5                             LIMIT_EXCEEDED: quantity above the activity's maxPerUser
    -8                             DENIED: the user is on the deny list
    -9                             NOT_ELIGIBLE: the claims do not meet the sale's eligibility rule

  The deny list and the rule are checked after a repeat (a reservation decided before them stands)
  and before any unit moves (lua/includes/access-rules.lua). The rule itself is
  lua/includes/reserve-rule.lua, shared with the draw's batches (lua/draw-reserve-6.lua).

  Side effects: DONE: DECRBY stock, HSET holders, XADD events. BORROW: HSET holders (pending), HSET borrowing.
]]
--- @include "includes/reserve-rule"

return reserveUnits(KEYS, ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] == '1', ARGV[8],
  ARGV[9] == '1')
