--[[
  Group: the figures of a bucket's Stream consumer groups (XINFO GROUPS), run as a script with the
  Stream's key so that the client routes it to the node serving that key's slot. XINFO has no key
  position the client knows: sent as a command on a cluster it reaches any node and comes back MOVED
  for every bucket that node does not serve.

  A group's `lag` is nil when Redis cannot tell it (an entry deleted past the group's last delivered
  one leaves a tombstone): it is then counted here — the entries after the last delivered id — so
  that no reader takes "unknown" for "nothing left to deliver".

  Input:  KEYS[1] the bucket's events key (its Stream)
  Output: XINFO GROUPS's reply (one field/value array per group), every lag a number; an empty
          array when the Stream does not exist.
  Side effects: none.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
for _, g in ipairs(groups) do
  local lastId, lagAt
  for i = 1, #g, 2 do
    if g[i] == 'last-delivered-id' then lastId = g[i + 1] end
    if g[i] == 'lag' and not g[i + 1] then lagAt = i + 1 end
  end
  if lagAt and lastId then
    g[lagAt] = #redis.call('XRANGE', KEYS[1], '(' .. lastId, '+')
  end
end
return groups
