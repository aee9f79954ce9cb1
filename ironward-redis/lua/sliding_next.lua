-- ironward-redis: how long until a sliding-window log has room (ironward::Sliding::next),
-- read-only.
--
-- KEYS[1]  {key}.log  the stamps of admitted events, oldest first (integer microseconds)
-- KEYS[2]  {key}.ts   the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most events in any window-long stretch (integer, 0 to 4294967295)
-- ARGV[3]  window: in whole microseconds (integer, at least 1)
--
-- Reply    {wait, t}: wait, microseconds until the window has room, 0 when it has room now,
--          -1 for a quota of 0 (integer);
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--          Nothing is written: stamps that have left the window are skipped (found by
--          bisection), not dropped, and the latest reading is not moved.

local now = read_now(false)
local quota = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
if quota == 0 then
    return {-1, now}
end

local latest = tonumber(redis.call('GET', KEYS[2])) or 0
local t = math.max(latest, now)

-- The first stamp still inside the window: those that have left come first.
local low = 0
local high = redis.call('LLEN', KEYS[1])
local length = high
while low < high do
    local middle = math.floor((low + high) / 2)
    if t - tonumber(redis.call('LINDEX', KEYS[1], middle)) >= window then
        low = middle + 1
    else
        high = middle
    end
end

if length - low < quota then
    return {0, t}
end
return {window - (t - tonumber(redis.call('LINDEX', KEYS[1], low))), t}
