-- ironward-redis: where a fixed-window quota stands (ironward::Period::next and next_n),
-- read-only.
--
-- KEYS[1]  {key}.period  struct.pack('<ddd', count, start, latest), as lua/period.lua
--                        writes it
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  period: in whole microseconds (integer, at least 1)
--
-- Reply    {wait, t, count}: wait, microseconds until the open period ends, 0 when none is
--          open at now (integer); t, the reading the wait is counted from (the latest seen
--          when the caller's now is earlier, so that the caller can count from its own);
--          count, the units counted in the open period (0 when none is open), from which
--          the caller works out next_n for any cost. Nothing is written: the latest reading
--          seen is not moved.

local now = read_now(ARGV[1], false)
local period = tonumber(ARGV[2])

local count, start, latest = period_read(KEYS[1])
local t = math.max(latest, now)
count, start = period_open(count, start, t, period)
if start == nil then
    return {0, t, 0}
end
return {period - (t - start), t, count}
