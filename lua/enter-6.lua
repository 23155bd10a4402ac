--[[
  Enter: a purchase inside a lottery window (docs/design.md §10) becomes one entry per user. No stock moves;
  the draw reserves for the winners later, in the order the seed and the closed list decide.

  Input:
    KEYS[1] entrants key   sk:{A:S}:entrants        hash userId -> quantity asked for
    KEYS[2] config key     sk:{A:S}:cfg             hash: state (open|paused|stopped), maxPerUser, eligibility
    KEYS[3] draw key       sk:{A:S}:draw            string: absent while entries are open, then closed|drawn
    KEYS[4] denied key     sk:{A:S}:denied          hash userId -> signed deny-list revision (+ denied)
    KEYS[5] entry list     sk:{A:S}:entry-list      list of "userId:quantity" in entry order
    KEYS[6] claims key     sk:{A:S}:entrant-claims  hash userId -> JSON of the forwarded JWT claims

    ARGV[1] userId
    ARGV[2] quantity (integer >= 1)
    ARGV[3] the user's JWT claims the edge verified, JSON (`{}` when none)

  Output:
     1, entrants   DONE: a new entry; the number of entrants now
     2, quantity   ALREADY: this user had entered already (the first entry's quantity stands)
    -1             NOT_WARMED: config missing (never warmed, or Redis lost data)
    -2             PAUSED: the sale is paused
    -3             ENDED: the sale was stopped for good
    -5             LIMIT_EXCEEDED: quantity above the activity's maxPerUser
    -7             CLOSED: the draw has closed the entries
    -8             DENIED: the user is on the deny list (no new entry; an existing one stands, the draw decides it)
    -9             NOT_ELIGIBLE: the claims do not meet the sale's eligibility rule

  Side effects (DONE only): HSET entrants, RPUSH entry list (the order the draw's digest fixes),
  HSET claims unless `{}` (the draw checks eligibility again under the rule in force at the close).
]]
--- @include "includes/reply-codes"
--- @include "includes/access-rules"

local rcall = redis.call
local entrantsKey = KEYS[1]
local configKey = KEYS[2]
local drawKey = KEYS[3]
local deniedKey = KEYS[4]
local entryListKey = KEYS[5]
local claimsKey = KEYS[6]

local userId = ARGV[1]
local quantity = tonumber(ARGV[2])
local claims = ARGV[3]

local config = rcall('HMGET', configKey, 'state', 'maxPerUser', 'eligibility')
if not config[1] then
  return { REPLY.NOT_WARMED }
end
if config[1] == 'paused' then
  return { REPLY.PAUSED }
end
if config[1] == 'stopped' then
  return { REPLY.ENDED }
end
if rcall('EXISTS', drawKey) == 1 then
  return { REPLY.CLOSED }
end

local entered = rcall('HGET', entrantsKey, userId)
if entered then
  return { REPLY.ALREADY, tonumber(entered) }
end
if isDenied(deniedKey, userId) then
  return { REPLY.DENIED }
end
if not isEligible(config[3], claims) then
  return { REPLY.NOT_ELIGIBLE }
end
if quantity > tonumber(config[2] or '1') then
  return { REPLY.LIMIT_EXCEEDED }
end

rcall('HSET', entrantsKey, userId, quantity)
rcall('RPUSH', entryListKey, userId .. ':' .. quantity)
if claims ~= '{}' then
  rcall('HSET', claimsKey, userId, claims)
end
return { REPLY.DONE, rcall('HLEN', entrantsKey) }
