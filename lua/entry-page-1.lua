--[[
  Entry page: one page of a bucket's closed lottery entry list (docs/lottery.md), as ONE string — the
  "userId:quantity" lines joined by "\n" — instead of one reply element per entry: the draw reads a
  million entries two or three times, and parsing a million small replies (and collecting them) cost
  more than hashing them.

  Input:
    KEYS[1] entry list   sk:{A:S}:entry-list   list of "userId:quantity" in entry order
    ARGV[1] start        0-based index of the page's first entry
    ARGV[2] stop         index of its last entry (inclusive, as LRANGE)

  Output: the lines joined by "\n" ("" when the range is empty). No side effects.
]]
local rcall = redis.call
local entryListKey = KEYS[1]

return table.concat(rcall('LRANGE', entryListKey, ARGV[1], ARGV[2]), '\n')
