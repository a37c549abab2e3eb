-- SPDX-License-Identifier: GPL-2.0-only
-- A node's heartbeat (docs/cluster.md, "Nodes").
-- KEYS[1]: <prefix>:nodes, a sorted set of node -> last seen (server ms).
-- ARGV[1]: the node; ARGV[2]: how long (ms) a silent node is remembered.
-- Returns the server time in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - keep)
-- A fleet that has gone quiet for that long leaves nothing behind.
redis.call('PEXPIRE', KEYS[1], keep)
return now
