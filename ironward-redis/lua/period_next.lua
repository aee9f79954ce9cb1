-- ironward-redis: how long until the open period ends (ironward::Period::next), read-only.
--
-- KEYS[1]  {key}.count  events counted in the open period (integer)
-- KEYS[2]  {key}.start  when the open period started (integer microseconds)
-- KEYS[3]  {key}.ts     the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  period: in whole microseconds (integer, at least 1)
--
-- Reply    {wait, t}: wait, microseconds until the open period ends, 0 when none is open at
--          now (integer);
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--          Nothing is written: the latest reading seen is not moved.

local now = read_now(false)
local period = tonumber(ARGV[2])

local state = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
local count = tonumber(state[1])
local start = tonumber(state[2])
local latest = tonumber(state[3]) or 0
local t = math.max(latest, now)

if count == nil or start == nil or t - start >= period then
    return {0, t}
end
return {period - (t - start), t}
