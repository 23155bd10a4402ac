--[[
  The reply codes of every script, one meaning per number: a script answers `{ code, … }` with one of
  these, and which of them it can answer is listed in its header. The one TypeScript mirror is
  origin/redis/scripts/reply-codes.ts (a test keeps the two equal). Expanded in place by the script
  loader (origin/redis/scripts/load.ts) at `--- @include`.
]]
local REPLY = {
  -- What the script is for happened now: a grant, an entry, a release, a refill, a warm-up, …
  DONE = 1,
  -- It happened on an earlier call (a repeat, a replay): nothing changed.
  ALREADY = 2,
  -- A purchase's home bucket cannot serve: the user is marked pending, the origin borrows.
  BORROW = 3,
  -- The same user's borrow is in flight.
  PENDING = 4,
  -- The bucket holds no sale (never warmed, or Redis lost it).
  NOT_WARMED = -1,
  PAUSED = -2,
  -- The sale was stopped for good.
  ENDED = -3,
  -- No unit left at all.
  SOLD_OUT = -4,
  -- Quantity above the sale's maxPerUser.
  LIMIT_EXCEEDED = -5,
  -- Some units left, fewer than asked for (not sold out).
  INSUFFICIENT_STOCK = -6,
  -- The lottery draw has closed the entries.
  CLOSED = -7,
  -- The user is on the deny list.
  DENIED = -8,
  -- The claims do not meet the sale's eligibility rule.
  NOT_ELIGIBLE = -9,
  -- A donor bucket's sale is paused or stopped: it lends nothing.
  NOT_OPEN = -10,
  -- A donor bucket has fewer units than asked for.
  SHORT = -11,
  -- A borrow given up too late: it completed (its units are sold).
  CONFIRMED = -12,
  -- A borrow marked too recently to give up (maybe still in flight).
  TOO_FRESH = -13,
  -- No such borrow in this bucket.
  UNKNOWN = -14,
  -- A borrow confirmed too late: it was given up (or never marked).
  ABANDONED = -15,
  -- Nothing lent for this reservation (never taken, or given back before).
  NOTHING_LENT = -16,
  -- Recovery of a bucket that is warm: nothing to recover.
  WARM = -17,
  -- The Stream or its consumer group is gone.
  NO_STREAM = -18,
  -- A warm-up of a bucket whose Stream has events: recover instead.
  HAS_HISTORY = -19,
  -- A requeue of a reservation compensation has not released.
  NOT_RELEASED = -20,
  -- A requeue for a user who holds another reservation now.
  HOLDS_OTHER = -21,
}
