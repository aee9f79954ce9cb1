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
-- The state, the refill and the write are lua/bucket_state.lua's. A missing key is a full
-- bucket counted at now; tokens below 0 are a settled debt, which refuses every cost (0
-- too) until the refill has paid it, as the core's.

local now = read_now(ARGV[1], true)
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local n = tonumber(ARGV[4])

local tokens, latest = bucket_read(KEYS[1], KEYS[2], burst, now)
-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)
tokens = bucket_refill(tokens, latest, t, rate, burst)

local admitted = 0
if n >= 0 and n <= tokens then
    tokens = tokens - n
    admitted = 1
end

local held = bucket_write(KEYS[1], KEYS[2], tokens, t, ARGV[5], rate, burst)
return {admitted, held, t}
