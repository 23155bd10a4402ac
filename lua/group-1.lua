--[[
  Group: the figures of a bucket's Stream consumer groups (XINFO GROUPS), run as a script with the
  Stream's key so that the client routes it to the node serving that key's slot. XINFO has no key
  position the client knows: sent as a command on a cluster it reaches any node and comes back MOVED
  for every bucket that node does not serve.

  Input:  KEYS[1] the bucket's events key (its Stream)
  Output: XINFO GROUPS's reply (one field/value array per group); an empty array when the Stream
          does not exist.
  Side effects: none.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
return redis.call('XINFO', 'GROUPS', KEYS[1])
