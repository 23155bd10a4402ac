--[[
  Replication: how the Redis server that serves KEYS[1]'s slot as primary sees its replicas (warm-up
  verification and the failover watch: origin/activity/replica-layout.ts). Run as a script with the
  key so that the client routes it exactly as it routes the reserve script (on a cluster: to the
  slot's master), not to whichever node a keyless INFO reaches.

  Input:  KEYS[1] any key of the bucket (its stock key)
  Output: { run_id, tcp_port, INFO replication text } — the text lists each replica as
          `slaveN:ip=…,port=…,state=online,offset=…,lag=…`
  Side effects: none.
]]
local rcall = redis.call
local server = rcall('INFO', 'server')
return { string.match(server, 'run_id:(%w+)'), string.match(server, 'tcp_port:(%d+)'), rcall('INFO', 'replication') }
