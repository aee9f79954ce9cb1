-- ironward-redis: take a cost from a fixed-window quota (ironward::Period::take_n).
--
-- KEYS[1]  {key}.period  the whole state in one 24-byte string, struct.pack('<ddd', count,
--                        start, latest): the units counted in the open period (admitted,
--                        and one per refusal once the quota is used up), when it started,
--                        and the latest clock reading seen (integers below 2^53, which
--                        doubles hold exactly; the times in microseconds)
--
-- ARGV[1]  the numbers, packed: struct.pack('<ddddd', now, quota, period, ttl, cost), the
--          caller's clock in whole microseconds (-1 to read Redis's TIME); the most units a
--          period admits (integer, 0 to 4294967295); the period in whole microseconds
--          (integer, at least 1); the TTL in milliseconds, set on the key by the write that
--          opens a period and kept by the writes inside it (integer, at least 1); the units this request takes (integer, 0 to 4294967295)
-- ARGV[2]  align: "1" for periods on the multiples of the period, "0" for a period that
--          opens at the first event after the last one closed
--
-- Reply    {answer, wait, t, count}: answer 1 Under (admitted, room left), 2 Hit (admitted,
--          the quota is now used up), 3 Over (refused); wait, microseconds until the open
--          period ends (next(now) after this request); t, the reading the wait is counted
--          from (the latest seen when the caller's now is earlier, so that the caller can
--          count from its own); count, the units counted after it, from which the caller
--          works out next_n for any cost.
--
-- One key, one GET and one SET, and the numbers packed as doubles rather than formatted,
-- both ways: each redis.call and each number formatted or parsed costs a fraction of a
-- microsecond of Redis's one thread, and a pipelined decision is little else (see
-- BENCHMARKS.md, "Redis"). Every number is an integer below 2^53, which Lua's doubles hold
-- exactly. A write inside the open period keeps the TTL the write that opened it set
-- (KEEPTTL, Redis 6.0 on): the key then outlives the period by at least a period, and Redis
-- does not rewrite a relative expiry for its replicas at every decision.

local now, quota, period, ttl, cost = struct.unpack('<ddddd', ARGV[1])
now = read_now(now, true)

local count, start, latest = period_read(KEYS[1])

-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)

count, start = period_open(count, start, t, period)
local opens = start == nil
if opens then
    start = period_start(t, period, ARGV[2] == '1')
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

local state = struct.pack('<ddd', count, start, t)
if opens then
    redis.call('SET', KEYS[1], state, 'PX', ttl)
else
    redis.call('SET', KEYS[1], state, 'KEEPTTL')
end
return {answer, period - (t - start), t, count}
