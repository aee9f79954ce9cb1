-- ironward-redis: take n tokens from a token bucket (ironward::Bucket::take).
--
-- KEYS[1]  {key}.tokens  tokens held at the latest reading (a float, "%.17g")
-- KEYS[2]  {key}.ts      the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  rate: tokens a second (a finite float, at least 0)
-- ARGV[3]  burst: the most tokens the bucket holds (a finite float, at least 1)
-- ARGV[4]  n: the cost (a finite float; a negative cost is refused)
-- ARGV[5]  ttl: in milliseconds, set on both keys (integer, at least 1)
--
-- Reply    {admitted, tokens, t}: admitted 1 or 0; tokens left, as a "%.17g" string that
--          reads back to the same double; t, the reading the bucket is now counted at
--          (integer microseconds). The caller computes next() from these.
--
-- The refill is ironward's, operation for operation, so the doubles match bit for bit:
-- tokens = min(burst, tokens + rate * elapsed_ns / 1e9), with elapsed_ns the microseconds
-- elapsed times 1000 (exact below 2^53, and rounded as the core's u64-to-f64 conversion
-- rounds above it). A missing key is a full bucket counted at now.

local now = read_now(true)
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local ttl = ARGV[5]

local state = redis.call('MGET', KEYS[1], KEYS[2])
local tokens = tonumber(state[1])
local latest = tonumber(state[2])
if tokens == nil or latest == nil then
    tokens = burst
    latest = now
end

-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)
local elapsed = (t - latest) * 1000
tokens = math.min(burst, tokens + rate * elapsed / 1e9)

local admitted = 0
if n >= 0 and n <= tokens then
    tokens = tokens - n
    admitted = 1
end

local held = string.format('%.17g', tokens)
redis.call('SET', KEYS[1], held, 'PX', ttl)
redis.call('SET', KEYS[2], string.format('%d', t), 'PX', ttl)
return {admitted, held, t}
