-- SPDX-License-Identifier: GPL-2.0-only
-- One rule's share of a sync (docs/cluster.md, "The sync script").
-- KEYS[1]: <prefix>:{<rule>}:<window ms>, the rule's hash: key text -> its counts, packed as
-- three little-endian doubles (COUNTS): the last window the key was written in, its count
-- there, and its count in the window before that one.
-- ARGV[1]: the window in ms; ARGV[2]: n, the number of keys; ARGV[2 + i]: key i (each once);
-- ARGV[3 + n]: the n deltas and ARGV[4 + n] the n limits per window, little-endian doubles
-- ("<d"). Limits are per key: each node takes its own headroom off (docs/cluster.md), and one
-- call per rule and 5,000 keys keeps the calls full whatever the deltas.
-- Returns {now_ms, i, for_ms, estimate, ...}, one triple per key over its limit.
-- Every window comes from this server's clock, so all nodes share the same windows.
--
-- One hash per rule rather than one key per key: Redis then runs a handful of commands per call
-- (HMGET and HSET over thousands of fields each) instead of two or three per key. One field per
-- key holding both windows, rather than a hash per window, costs one lookup per key instead of
-- two, and a new window rewrites each key's value in place instead of inserting every key into
-- a fresh hash. Both are what let 100,000 keys fit in one sync interval (docs/cluster.md,
-- "Measured").

local window = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local hash = KEYS[1]
local deltas = ARGV[3 + n]
local limits = ARGV[4 + n]
local ONE = 65536 -- the weight's fixed point, as in the data path
-- Fields per HMGET/HSET/HDEL: unpack() must stay well below Lua's C stack limit (8,000).
local CHUNK = 2000
local COUNTS = '<ddd'
local COUNTS_LEN = 24
-- Key texts never start with '#' (the store refuses them), so these cannot collide with a key.
-- META: COUNTS-packed too: the newest window, keys written in it, keys written in the one
-- before. The keys still counting are those two sets, so the rest of the hash is dead keys.
local META = '#m'
local CURSOR = '#c' -- where the sweep for dead keys resumes (an HSCAN cursor)

-- Library functions and ARGV as locals: a global is a table lookup each time it is named, and
-- the loop over keys names them for every key.
local pack, unpack_counts = struct.pack, struct.unpack
local floor = math.floor
local argv = ARGV
-- Below this, count * weight stays below 2^53 (see weighted).
local EXACT_BELOW = 137438953472

-- Floor division, exact for operands below 2^53 whichever way the double quotient rounded.
local function idiv(a, b)
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- floor(count * weight / ONE). Below 2^37 the product stays below 2^53 and dividing by a power
-- of two is exact, so plain arithmetic is; above, split so that no product reaches 2^53.
local function weighted(count, weight)
  if count < EXACT_BELOW then
    return floor(count * weight / ONE)
  end
  local hi = idiv(count, ONE)
  return hi * weight + idiv((count - hi * ONE) * weight, ONE)
end

local function weight_at(elapsed)
  return idiv((window - elapsed) * ONE, window)
end

-- The first ms e of a window (e = window: its end) with weighted(prev, weight_at(e)) + cur
-- <= limit, given cur <= limit. The weight only falls as e grows, so:
--   weighted(prev, w) <= room  <=>  prev * w < (room + 1) * ONE
--                              <=>  w <= wmax = floor(((room + 1) * ONE - 1) / prev)
--   weight_at(e) <= wmax       <=>  (window - e) * ONE < (wmax + 1) * window
--                              <=>  e >= window - ceil((wmax + 1) * window / ONE) + 1
local function settle(prev, cur, limit)
  local room = limit - cur
  if prev <= room then
    return 0
  end
  local wmax = idiv((room + 1) * ONE - 1, prev)
  return window - idiv((wmax + 1) * window + ONE - 1, ONE) + 1
end

-- A stored value as (window, count there, count in the window before); anything else (not
-- written by this script) counts as nothing and is overwritten.
local function counts_of(v)
  if v and #v == COUNTS_LEN then
    return unpack_counts(COUNTS, v)
  end
  return -1, 0, 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + idiv(tonumber(t[2]), 1000)
local index = idiv(now, window)
local elapsed = now - index * window
local weight = weight_at(elapsed)

if #deltas ~= 8 * n or #limits ~= 8 * n then
  return redis.error_reply('ERR rl sync: ' .. #deltas .. ' bytes of deltas and ' .. #limits ..
    ' of limits for ' .. n .. ' keys')
end
local chunk_format = '<' .. string.rep('d', CHUNK)

-- Read before writing anything: a key of the wrong type fails the call here, so a rule's
-- deltas apply all or none.
local head = redis.call('HMGET', hash, META, CURSOR)
-- Counts as of the window index: a value from window index - 1 holds the previous count, an
-- older one nothing. A newer one means the server clock stepped back: its counts stay as they
-- are rather than be forgotten, and the value keeps its newer window.
local meta_w, written, written_before = counts_of(head[1])
if meta_w < index then
  written, written_before = 0, (meta_w == index - 1) and written or 0
  meta_w = index
end

-- Chunk by chunk, read the chunk's counts and write them back at once: the fields the HSET
-- touches are then still in the CPU's caches from the HMGET.
local wrote = false
local reply, nreply = {now}, 1
for s = 1, n, CHUNK do
  local e = math.min(s + CHUNK - 1, n)
  local values = redis.call('HMGET', hash, unpack(argv, 2 + s, 2 + e))
  local m = e - s + 1
  local format = chunk_format
  if m < CHUNK then
    format = '<' .. string.rep('d', m)
  end
  local chunk_deltas = {unpack_counts(format, deltas, 8 * (s - 1) + 1)}
  local chunk_limits = {unpack_counts(format, limits, 8 * (s - 1) + 1)}
  local fields, nfields = {}, 0
  for j = 1, m do
    local i = s + j - 1
    -- counts_of and weighted, inline: a call per key costs more than the rest of the bookkeeping.
    local v = values[j]
    local w, cur, prev = -1, 0, 0
    if v and #v == COUNTS_LEN then
      w, cur, prev = unpack_counts(COUNTS, v)
    end
    if w < index then
      cur, prev = 0, (w == index - 1) and cur or 0
    end
    local delta = chunk_deltas[j]
    if delta > 0 then
      if w < index then
        w = index
        written = written + 1
      end
      wrote = true
      cur = cur + delta
      fields[nfields + 1] = argv[2 + i]
      fields[nfields + 2] = pack(COUNTS, w, cur, prev)
      nfields = nfields + 2
    end
    local estimate = cur
    if prev > 0 then
      if prev < EXACT_BELOW then
        estimate = floor(prev * weight / ONE) + cur
      else
        estimate = weighted(prev, weight) + cur
      end
    end
    local limit = chunk_limits[j]
    if estimate > limit then
      local for_ms
      if cur <= limit then
        for_ms = settle(prev, cur, limit) - elapsed
      else
        -- Over on its own: it becomes the previous count at the next window and decays there.
        for_ms = window - elapsed + settle(cur, 0, limit)
      end
      reply[nreply + 1] = i
      reply[nreply + 2] = for_ms
      reply[nreply + 3] = estimate
      nreply = nreply + 3
    end
  end
  if nfields > 0 then
    redis.call('HSET', hash, unpack(fields, 1, nfields))
  end
end
if not wrote then
  return reply
end
redis.call('HSET', hash, META, pack(COUNTS, meta_w, written, written_before))
-- From window meta_w + 2 every count in the hash has rolled out, so the hash dies then.
redis.call('PEXPIREAT', hash, (meta_w + 2) * window)

-- Sweep out dead keys (not written in this window or the one before). Only while they are a
-- large share of the hash: a steady set of keys costs no sweeping at all. Once dead keys
-- outnumber half the live, each call scans two fields per key it carries (1,024 at least), so a
-- stream of new keys (say, spoofed sources) is swept twice as fast as it arrives, which keeps
-- the hash within a few times the keys still counting.
local live = written + written_before
local dead = redis.call('HLEN', hash) - 2 - live
if dead > 256 and dead * 2 > live then
  local budget = math.max(1024, 2 * n)
  local cursor = head[2] or '0'
  local scanned = 0
  local gone, ngone = {}, 0
  repeat
    local r = redis.call('HSCAN', hash, cursor, 'COUNT', math.min(budget - scanned, CHUNK))
    cursor = r[1]
    local kv = r[2]
    for k = 1, #kv, 2 do
      local f = kv[k]
      if f ~= META and f ~= CURSOR and counts_of(kv[k + 1]) < index - 1 then
        ngone = ngone + 1
        gone[ngone] = f
        if ngone == CHUNK then
          redis.call('HDEL', hash, unpack(gone, 1, ngone))
          ngone = 0
        end
      end
    end
    scanned = scanned + #kv / 2
  until cursor == '0' or scanned >= budget
  if ngone > 0 then
    redis.call('HDEL', hash, unpack(gone, 1, ngone))
  end
  redis.call('HSET', hash, CURSOR, cursor)
end
return reply
