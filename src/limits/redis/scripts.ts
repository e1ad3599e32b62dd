/**
 * The Lua scripts of the Redis backend. Each runs atomically on the Redis server with the
 * server's clock, so several gateway instances share one exact count whatever their own clocks
 * say. All keys of one API key carry its id as a hash tag (`{key id}`), so they live in one slot
 * of a Redis Cluster. The counting rule is the memory backend's (see ../memory-limiter.ts):
 * every request counts against requests per minute; the rest is consumed only when all four
 * quantities have room.
 *
 * Keys: 1 requests window (hash second → count), 2 tokens window (hash second → tokens),
 * 3 daily count (hash: day, n), 4 requests in flight (sorted set: request id → expiry in ms).
 */

/** Shared prelude: the server's clock and a reader for a per-second window that drops old buckets. */
const PRELUDE = `
local t = redis.call('TIME')
local second = tonumber(t[1])
local now_ms = second * 1000 + math.floor(tonumber(t[2]) / 1000)
local today = math.floor(second / 86400)
local oldest = second - 59

local function window(key)
  local raw = redis.call('HGETALL', key)
  local total = 0
  local buckets = {}
  local stale = {}
  for i = 1, #raw, 2 do
    local s = tonumber(raw[i])
    local n = tonumber(raw[i + 1])
    if s < oldest then
      stale[#stale + 1] = raw[i]
    else
      total = total + n
      buckets[#buckets + 1] = s
      buckets[#buckets + 1] = n
    end
  end
  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  return total, buckets
end

local rpm_limit = tonumber(ARGV[1])
local tpm_limit = tonumber(ARGV[2])
local day_limit = tonumber(ARGV[3])
local flight_limit = tonumber(ARGV[4])

local requests, request_buckets = 0, {}
if rpm_limit > 0 then requests, request_buckets = window(KEYS[1]) end
local tokens, token_buckets = 0, {}
if tpm_limit > 0 then tokens, token_buckets = window(KEYS[2]) end
local day = 0
if day_limit > 0 then
  local stored = redis.call('HMGET', KEYS[3], 'day', 'n')
  if tonumber(stored[1]) == today then day = tonumber(stored[2]) end
end
-- Every admitted request is in the set until settled, limited or not: its entry is what makes a
-- settlement apply once, and it remembers when the request was admitted.
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now_ms)
local flying = 0
if flight_limit > 0 then flying = redis.call('ZCARD', KEYS[4]) end
`;

/**
 * ARGV: 1 requests/min, 2 tokens/min, 3 daily cap, 4 in-flight cap (0 = not limited),
 * 5 tokens to reserve, 6 request id, 7 lifetime of an in-flight slot in ms.
 * Returns {admitted, now_ms, requests, tokens, day, in_flight, request buckets, token buckets};
 * the buckets (flat second, amount pairs) only when refused.
 */
export const ADMIT_SCRIPT = `${PRELUDE}
local reserve = tonumber(ARGV[5])
if rpm_limit > 0 then
  redis.call('HINCRBY', KEYS[1], second, 1)
  redis.call('PEXPIRE', KEYS[1], 62000)
  requests = requests + 1
  request_buckets[#request_buckets + 1] = second
  request_buckets[#request_buckets + 1] = 1
end
local admitted = (rpm_limit == 0 or requests <= rpm_limit)
  and (tpm_limit == 0 or reserve == 0 or tokens + reserve <= tpm_limit)
  and (day_limit == 0 or day + 1 <= day_limit)
  and (flight_limit == 0 or flying + 1 <= flight_limit)
if not admitted then
  return {0, now_ms, requests, tokens, day, flying, request_buckets, token_buckets}
end
if tpm_limit > 0 and reserve > 0 then
  redis.call('HINCRBY', KEYS[2], second, reserve)
  redis.call('PEXPIRE', KEYS[2], 62000)
  tokens = tokens + reserve
end
if day_limit > 0 then
  day = day + 1
  redis.call('HSET', KEYS[3], 'day', today, 'n', day)
  redis.call('EXPIREAT', KEYS[3], (today + 1) * 86400 + 3600)
end
local ttl = tonumber(ARGV[7])
redis.call('ZADD', KEYS[4], now_ms + ttl, ARGV[6])
-- Lengthened, never shortened: instances may give slots different lifetimes (a rolling deploy
-- that changes a budget), and the key's expiry drops every slot in it at once.
local left = redis.call('PTTL', KEYS[4])
if left < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
if flight_limit > 0 then flying = flying + 1 end
return {1, now_ms, requests, tokens, day, flying, {}, {}}
`;

/** ARGV as ADMIT_SCRIPT's first four. Counts nothing; returns the same shape with the buckets. */
export const PEEK_SCRIPT = `${PRELUDE}
return {1, now_ms, requests, tokens, day, flying, request_buckets, token_buckets}
`;

/**
 * Ends an admission: frees its in-flight entry, corrects its token reservation by the given delta
 * (actual minus reserved) in the second it was made, and with ARGV[3] = '1' gives its daily count
 * back. Applies only if the entry is still there, so it is safe to send again after a failure, and
 * the same script undoes an admission whose reply was lost (delta = minus the reservation, daily
 * count given back). The admission's second and day come from the entry's score, on Redis's clock.
 * Keys 2, 3 and 4 as above. ARGV: 1 request id, 2 token delta, 3 give back the daily count ('1' or
 * '0'), 4 the lifetime the entry was given (ms).
 */
export const SETTLE_SCRIPT = `
local score = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not score then return 0 end
redis.call('ZREM', KEYS[3], ARGV[1])
local second = math.floor((tonumber(score) - tonumber(ARGV[4])) / 1000)
local delta = tonumber(ARGV[2])
if delta ~= 0 and redis.call('HEXISTS', KEYS[1], second) == 1 then
  if redis.call('HINCRBY', KEYS[1], second, delta) < 0 then redis.call('HSET', KEYS[1], second, 0) end
end
if ARGV[3] == '1' then
  local stored = redis.call('HMGET', KEYS[2], 'day', 'n')
  if tonumber(stored[1]) == math.floor(second / 86400) and tonumber(stored[2]) > 0 then
    redis.call('HINCRBY', KEYS[2], 'n', -1)
  end
end
return 1
`;
