-- ironward-redis: settle a fixed-window reservation at its actual cost
-- (ironward::Period::settle).
--
-- KEYS[1]  {key}.period  struct.pack('<ddd', count, start, latest), as lua/period.lua
--                        writes it
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  period: in whole microseconds (integer, at least 1)
-- ARGV[3]  align: "1" for periods on the multiples of the period, "0" otherwise
-- ARGV[4]  ttl: in milliseconds, set on the key when this writes (integer, at least 1)
-- ARGV[5]  estimate: the units the reservation took (integer, 0 to 4294967295)
-- ARGV[6]  actual: the units the request cost (integer, 0 to 4294967295)
-- ARGV[7]  deadline: the latest reading, in microseconds, at which a settle still counts
-- ARGV[8]  reserved: the start, in microseconds, of the period the estimate was counted in
--
-- Reply    1 when the settle counted, 0 when it came after the deadline (nothing written,
--          not even the clock).
--
-- As the core: at a reading past the deadline nothing changes. Otherwise the clock moves
-- to the reading; a cost above the estimate is counted in the period open at it (opening
-- one, its count 0, if none is), even past the quota; one below is taken off the count if
-- the period the estimate was counted in is still the open one (its start is the
-- reservation's), and else gives nothing back.

local now = read_now(ARGV[1], true)
local period = tonumber(ARGV[2])
local estimate = tonumber(ARGV[5])
local actual = tonumber(ARGV[6])

local count, start, latest = period_read(KEYS[1])

local t = math.max(latest, now)
if t > tonumber(ARGV[7]) then
    return 0
end

count, start = period_open(count, start, t, period)
if actual > estimate then
    if start == nil then
        start = period_start(t, period, ARGV[3] == '1')
    end
    count = count + (actual - estimate)
elseif start == tonumber(ARGV[8]) then
    count = math.max(0, count - (estimate - actual))
end

-- With no period open, a start a whole period back says so, and keeps the clock.
if start == nil then
    start = t - period
end
redis.call('SET', KEYS[1], struct.pack('<ddd', count, start, t), 'PX', ARGV[4])
return 1
