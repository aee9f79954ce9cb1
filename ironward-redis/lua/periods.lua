-- ironward-redis: several fixed-window quotas for one key, decided at once, all or nothing
-- (ironward::Limits over ironward::Period's check_n and next_n).
--
-- KEYS[i]  {key}.p<i-1>  limit i's state in one 24-byte string, struct.pack('<ddd', count,
--                        start, latest), as lua/period.lua keeps it: the units counted in
--                        its open period, when it started, and the latest clock reading
--                        seen (integers below 2^53; the times in microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  take: "1" to take every cost if every limit admits its own, "0" to only read
-- ARGV[3]  ttl: in milliseconds, set on every key at a write (integer, at least 1)
-- then for limit i (1 to #KEYS), from ARGV[4 * i]:
-- ARGV[4i]      quota: the most units its period admits (integer, 0 to 4294967295)
-- ARGV[4i + 1]  period: in whole microseconds (integer, at least 1)
-- ARGV[4i + 2]  align: "1" for periods on the multiples of the period, "0" for a period
--               that opens at the first event after the last one closed
-- ARGV[4i + 3]  cost: the units this request takes from it (integer, 0 to 4294967295)
--
-- Reply    {admitted, t1, wait1, t2, wait2, ...}: admitted 1 when every limit admits its
--          cost (and with take, each was charged it), 0 when one refuses (and nothing was
--          written); for
--          each limit, t, the reading it decided at (the latest seen when the caller's now
--          is earlier), and wait, microseconds from t until it would admit its cost again
--          (next_n(now, cost) after this request): 0 when it would now, -1 never (a cost
--          above its quota).
--
-- Every limit is decided at its own latest reading exactly as lua/period.lua decides a
-- cost, but a refusal counts nothing: the core's Limits asks every limiter before it takes
-- from any, and a refusal leaves each exactly as it was, its clock included. So the state
-- is written only when every limit admits, and then every key at once with one TTL (the
-- longest limit's), so the keys never part: their latest readings stay one, as the core's
-- limiters' do.

local take = ARGV[2] == '1'
local now = read_now(take)
local n = #KEYS

local limits = {}
local admits = true
for i = 1, n do
    local at = 4 * i
    local quota = tonumber(ARGV[at])
    local period = tonumber(ARGV[at + 1])
    local cost = tonumber(ARGV[at + 3])
    local count, start, latest = period_read(KEYS[i])
    -- A reading earlier than the latest seen is read as the latest seen.
    local t = math.max(latest, now)
    local open = start ~= nil and t - start < period
    if not open then
        count = 0
    end
    if cost > quota or count + cost > quota then
        admits = false
    end
    limits[i] = {quota, period, ARGV[at + 2] == '1', cost, count, start, t, open}
end

if take and admits then
    for i = 1, n do
        local l = limits[i]
        local period, t = l[2], l[7]
        if not l[8] then
            l[6] = period_start(t, period, l[3])
            l[8] = true
        end
        l[5] = l[5] + l[4]
        redis.call('SET', KEYS[i], struct.pack('<ddd', l[5], l[6], t), 'PX', ARGV[3])
    end
end

local reply = {admits and 1 or 0}
for i = 1, n do
    local l = limits[i]
    local quota, period, cost, count, start, t, open = l[1], l[2], l[4], l[5], l[6], l[7], l[8]
    local wait = 0
    if cost > quota then
        wait = -1
    elseif open and count + cost > quota then
        wait = period - (t - start)
    end
    reply[2 * i] = t
    reply[2 * i + 1] = wait
end
return reply
