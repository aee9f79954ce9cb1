-- ironward-redis: take a cost from a fixed-window quota (ironward::Period::take_n).
--
-- KEYS[1]  {key}.period  the whole state in one 24-byte string, struct.pack('<ddd', count,
--                        start, latest): the units counted in the open period (admitted,
--                        and one per refusal once the quota is used up), when it started,
--                        and the latest clock reading seen (integers below 2^53, which
--                        doubles hold exactly; the times in microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most units a period admits (integer, 0 to 4294967295)
-- ARGV[3]  period: in whole microseconds (integer, at least 1)
-- ARGV[4]  align: "1" for periods on the multiples of the period, "0" for a period that
--          opens at the first event after the last one closed
-- ARGV[5]  ttl: in milliseconds, set on the key at every write (integer, at least 1)
-- ARGV[6]  cost: the units this request takes (integer, 0 to 4294967295)
--
-- Reply    {answer, wait, t, count}: answer 1 Under (admitted, room left), 2 Hit (admitted,
--          the quota is now used up), 3 Over (refused); wait, microseconds until the open
--          period ends (next(now) after this request); t, the reading the wait is counted
--          from (the latest seen when the caller's now is earlier, so that the caller can
--          count from its own); count, the units counted after it, from which the caller
--          works out next_n for any cost.
--
-- One key, one GET and one SET, and the numbers packed as doubles rather than formatted:
-- each redis.call and each number formatted costs about a microsecond of Redis's one
-- thread, and a pipelined decision is little else (see BENCHMARKS.md, "Redis"). Every
-- number is an integer below 2^53, which Lua's doubles hold exactly.

local now = read_now(ARGV[1], true)
local quota = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local cost = tonumber(ARGV[6])

local count, start, latest = period_read(KEYS[1])

-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)

count, start = period_open(count, start, t, period)
if start == nil then
    start = period_start(t, period, ARGV[4] == '1')
end

local answer = 3
if count + cost <= quota then
    count = count + cost
    if count < quota then
        answer = 1
    else
        answer = 2
    end
elseif count >= quota then
    -- go-zero's INCRBY counts every refused event; a cost refused before the quota is used
    -- up takes nothing.
    count = count + 1
end

redis.call('SET', KEYS[1], struct.pack('<ddd', count, start, t), 'PX', ARGV[5])
return {answer, period - (t - start), t, count}
