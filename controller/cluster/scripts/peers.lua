-- SPDX-License-Identifier: GPL-2.0-only
-- The nodes seen recently (docs/cluster.md, "Nodes"). Reads only.
-- KEYS[1]: <prefix>:nodes; ARGV[1]: how far back (ms) a node counts as seen.
-- Returns {now_ms, node, last_seen_ms, ...}, oldest first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seen = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf', 'WITHSCORES')
local reply = {now}
for i = 1, #seen, 2 do
  reply[#reply + 1] = seen[i]
  reply[#reply + 1] = tonumber(seen[i + 1])
end
return reply
