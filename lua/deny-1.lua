--[[
  Deny: deny-list changes into one bucket's `denied` hash, each only if newer than what the hash
  holds for that user (a late or replayed write of an older revision never undoes a newer one).

  Input:
    KEYS[1] denied key  sk:{A:S}:denied  hash userId -> signed revision (+ denied, - allowed)

    ARGV[1..2n] pairs: userId, signed revision (+rev = denied at rev, -rev = allowed at rev; rev >= 1)

  Output:
    n   how many of the pairs were newer and written (0..pairs)

  Side effects: HSET denied for each newer pair.
]]
local rcall = redis.call
local deniedKey = KEYS[1]

local written = 0
for i = 1, #ARGV, 2 do
  local userId = ARGV[i]
  local signed = tonumber(ARGV[i + 1])
  local held = tonumber(rcall('HGET', deniedKey, userId) or '0')
  if math.abs(signed) > math.abs(held) then
    rcall('HSET', deniedKey, userId, signed)
    written = written + 1
  end
end
return written
