--[[
  Who may decide a unit: the deny list and the sale's eligibility rule, read in the same
  atomic step as the decision, so a rule an operator's call has written to Redis before answering
  binds every decision after that answer, on every origin process. Expanded in place by the script
  loader (origin/redis/scripts/load.ts) at `--- @include`.

  The bucket's `denied` hash holds userId -> signed revision of the user's deny-list row: positive =
  denied, negative = allowed again (origin/access/sale-rules.ts writes it through lua/deny-1.lua,
  newer revisions only). The rule is the config hash's `eligibility` field: the contract's JSON
  {"claim", "values"}, or "" / absent for everyone. isEligible mirrors contract/eligibility.ts
  (a claim's string value, or any string of an array value, among the rule's values); a test runs
  both on the same cases.
]]
-- A revision read from the `denied` hash (false: none) denies when positive.
local function deniesRevision(revision)
  return revision ~= false and tonumber(revision) > 0
end

local function isDenied(deniedKey, userId)
  return deniesRevision(redis.call('HGET', deniedKey, userId))
end

local function isEligible(ruleJson, claimsJson)
  if not ruleJson or ruleJson == '' then
    return true
  end
  local rule = cjson.decode(ruleJson)
  local ok, claims = pcall(cjson.decode, claimsJson)
  if not ok or type(claims) ~= 'table' then
    return false
  end
  local held = claims[rule.claim]
  if type(held) ~= 'table' then
    held = { held }
  end
  for _, value in ipairs(held) do
    if type(value) == 'string' then
      for _, wanted in ipairs(rule.values) do
        if value == wanted then
          return true
        end
      end
    end
  end
  return false
end
