-- ironward-redis: settle a token bucket's reservation at its actual cost
-- (ironward::Bucket::settle).
--
-- KEYS[1]  {key}.tokens  tokens held at the latest reading (a float, "%.17g")
-- KEYS[2]  {key}.ts      the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  rate: tokens a second (a finite float, at least 0)
-- ARGV[3]  burst: the most tokens the bucket holds (a finite float, at least 1)
-- ARGV[4]  ttl: in milliseconds, set on both keys when this writes (integer, at least 1)
-- ARGV[5]  estimate: the tokens the reservation took (a finite float, at least 0)
-- ARGV[6]  actual: the tokens the request cost (a finite float, at least 0)
-- ARGV[7]  deadline: the latest reading, in microseconds, at which a settle still counts
--
-- Reply    1 when the settle counted, 0 when it came after the deadline (nothing written,
--          not even the clock).
--
-- As the core: at a reading past the deadline nothing changes. Otherwise the bucket is
-- refilled to the reading (lua/bucket_state.lua); an actual below the estimate gives the
-- difference back, capped at the burst (a refund lost to the extent the bucket has
-- refilled since), and one above it takes the difference out even past what the bucket
-- holds, down to -1.7976931348623157e308: a debt, which refuses every take until the
-- refill has paid it. In the core's float operations, in the core's order.

local now = read_now(ARGV[1], true)
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local estimate = tonumber(ARGV[5])
local actual = tonumber(ARGV[6])

local tokens, latest = bucket_read(KEYS[1], KEYS[2], burst, now)
local t = math.max(latest, now)
if t > tonumber(ARGV[7]) then
    return 0
end
tokens = bucket_refill(tokens, latest, t, rate, burst)
if actual < estimate then
    tokens = math.min(tokens + (estimate - actual), burst)
else
    tokens = math.max(tokens - (actual - estimate), -1.7976931348623157e308)
end

bucket_write(KEYS[1], KEYS[2], tokens, t, ARGV[4], rate, burst)
return 1
