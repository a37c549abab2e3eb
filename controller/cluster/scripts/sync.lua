-- One rule's share of a sync (docs/cluster.md, "The sync script").
-- KEYS[1], KEYS[2]: <prefix>:{<rule>}:<window ms>:0 and :1, the rule's counts in even and odd
-- windows: hashes of key -> count, plus '#w' -> the window index the hash holds.
-- ARGV[1]: the limit per window; ARGV[2]: the window in ms; ARGV[3]: n, the number of keys;
-- ARGV[3 + i]: key i (each once); ARGV[3 + n + i]: its delta.
-- Returns {now_ms, i, for_ms, estimate, ...}, one triple per key over its limit.
-- Every window comes from this server's clock, so all nodes share the same windows.
--
-- Two hashes per rule rather than one per key: Redis then runs a handful of commands per call
-- (HMGET and HSET over thousands of fields each) instead of two or three per key, which is what
-- lets 100,000 keys fit in one sync interval (docs/cluster.md, "Measured").

local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local ONE = 65536 -- the weight's fixed point, as in the data path
-- Fields per HMGET/HSET: unpack() must stay well below Lua's C stack limit (8,000).
local CHUNK = 2000

-- Floor division, exact for operands below 2^53 whichever way the double quotient rounded.
local function idiv(a, b)
  local q = math.floor(a / b)
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
  if count < 137438953472 then
    return math.floor(count * weight / ONE)
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
local function settle(prev, cur)
  local room = limit - cur
  if prev <= room then
    return 0
  end
  local wmax = idiv((room + 1) * ONE - 1, prev)
  return window - idiv((wmax + 1) * window + ONE - 1, ONE) + 1
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + idiv(tonumber(t[2]), 1000)
local index = idiv(now, window)
local elapsed = now - index * window
local weight = weight_at(elapsed)
local cur_hash, prev_hash = KEYS[1 + index % 2], KEYS[2 - index % 2]

-- Read everything before writing anything: a key of the wrong type fails the call here, so a
-- rule's deltas apply all or none.
local cur_w = tonumber(redis.call('HGET', cur_hash, '#w'))
local prev_w = tonumber(redis.call('HGET', prev_hash, '#w'))

-- The current hash still holding an older window (index - 2 or before) counts for nothing.
-- A newer one means the server clock stepped back: its counts stay current rather than be
-- forgotten, and so does the previous hash's whatever window it holds, if newer than index - 1.
local cur_live = cur_w ~= nil and cur_w >= index
local prev_live = prev_w ~= nil and prev_w >= index - 1

-- Chunk by chunk, read the chunk's counts and write them back at once: the fields the HSET
-- touches are then still in the CPU's caches from the HMGET (a whole-rule read before a
-- whole-rule write took each field from memory twice).
local wrote = false
local reply, nreply = {now}, 1
local format = string.format
for s = 1, n, CHUNK do
  local e = math.min(s + CHUNK - 1, n)
  local curs, prevs
  if cur_live then
    curs = redis.call('HMGET', cur_hash, unpack(ARGV, 3 + s, 3 + e))
  end
  if prev_live then
    prevs = redis.call('HMGET', prev_hash, unpack(ARGV, 3 + s, 3 + e))
  end
  local fields, nfields = {}, 0
  for j = 1, e - s + 1 do
    local i = s + j - 1
    local cur = curs and tonumber(curs[j]) or 0
    local prev = prevs and tonumber(prevs[j]) or 0
    local delta = tonumber(ARGV[3 + n + i])
    if delta > 0 then
      if not wrote then
        wrote = true
        if not cur_live then
          -- Two windows old: start the hash afresh. UNLINK frees a big hash off the main thread.
          redis.call('UNLINK', cur_hash)
          redis.call('HSET', cur_hash, '#w', index)
        end
      end
      cur = cur + delta
      -- '%d' rather than the number itself: Redis would format it with '%.17g', which costs
      -- several times more for the integers counts always are (below 2^53, exact either way).
      fields[nfields + 1] = ARGV[3 + i]
      fields[nfields + 2] = format('%d', cur)
      nfields = nfields + 2
    end
    local estimate = cur
    if prev > 0 then
      estimate = weighted(prev, weight) + cur
    end
    if estimate > limit then
      local for_ms
      if cur <= limit then
        for_ms = settle(prev, cur) - elapsed
      else
        -- Over on its own: it becomes the previous count at the next window and decays there.
        for_ms = window - elapsed + settle(cur, 0)
      end
      reply[nreply + 1] = i
      reply[nreply + 2] = for_ms
      reply[nreply + 3] = estimate
      nreply = nreply + 3
    end
  end
  if nfields > 0 then
    redis.call('HSET', cur_hash, unpack(fields, 1, nfields))
  end
end
if wrote then
  -- From the next window but one both counts have rolled out, so the hash is dead then. A
  -- stepped-back clock keeps the later expiry.
  redis.call('PEXPIREAT', cur_hash, (math.max(cur_w or index, index) + 2) * window)
end
return reply
