-- ironward-redis: settle a sliding-window log's reservation at its actual cost
-- (ironward::Sliding::settle).
--
-- KEYS[1]  {key}.log  entries of three doubles (stamp, cost, sum), oldest first, as
--                     lua/sliding.lua writes them
-- KEYS[2]  {key}.ts   the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  window: in whole microseconds (integer, at least 1)
-- ARGV[3]  ttl: in milliseconds, set on each key this writes (integer, at least 1)
-- ARGV[4]  estimate: the units the reservation took (integer, 0 to 4294967295)
-- ARGV[5]  actual: the units the request cost (integer, 0 to 4294967295)
-- ARGV[6]  deadline: the latest reading, in microseconds, at which a settle still counts
-- ARGV[7]  at: the stamp, in microseconds, the estimate was pushed with (the reading the
--          reservation was taken at)
--
-- Reply    1 when the settle counted, 0 when it came after the deadline (nothing written,
--          not even the clock).
--
-- As the core: at a reading past the deadline nothing changes. Otherwise the clock moves
-- to the reading t; a cost above the estimate is a debt, the difference pushed as an entry
-- stamped t, which holds the window for a window from t, past the quota if need be; one
-- below it is taken off the entries stamped at, if the estimate is still inside the
-- window at t, so the room comes back at once (lua/log.lua's log_refund), and else gives
-- nothing back.

local now = read_now(ARGV[1], true)
local window = tonumber(ARGV[2])
local ttl = ARGV[3]
local estimate = tonumber(ARGV[4])
local actual = tonumber(ARGV[5])
local at = tonumber(ARGV[7])

local latest = tonumber(redis.call('GET', KEYS[2])) or 0
local t = math.max(latest, now)
if t > tonumber(ARGV[6]) then
    return 0
end
redis.call('SET', KEYS[2], string.format('%d', t), 'PX', ttl)

local newest = log_newest(KEYS[1])
if actual > estimate then
    log_push(KEYS[1], newest, t, actual - estimate, ttl)
elseif actual < estimate and at <= t and t - at < window then
    log_refund(KEYS[1], at, estimate - actual, ttl)
end
return 1
