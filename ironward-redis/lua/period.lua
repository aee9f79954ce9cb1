-- ironward-redis: take one event from a fixed-window quota (ironward::Period::take).
--
-- KEYS[1]  {key}.count  events counted in the open period, admitted or not (integer)
-- KEYS[2]  {key}.start  when the open period started (integer microseconds)
-- KEYS[3]  {key}.ts     the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most events a period admits (integer, 0 to 4294967295)
-- ARGV[3]  period: in whole microseconds (integer, at least 1)
-- ARGV[4]  align: "1" for periods on the multiples of the period, "0" for a period that
--          opens at the first event after the last one closed
-- ARGV[5]  ttl: in milliseconds, set on every key this writes (integer, at least 1)
--
-- Reply    {answer, wait, t}: answer 1 Under (admitted, room left), 2 Hit (admitted, the
--          quota is now used up), 3 Over (refused); wait is next(now) after this event, in
--          microseconds: the time until the open period ends;
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--
-- Every number is an integer below 2^53, so Lua's doubles hold it exactly; math.fmod is
-- exact where `%` (a - floor(a/b)*b) can round.

local now = read_now(true)
local quota = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local align = ARGV[4] == '1'
local ttl = ARGV[5]

local state = redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
local count = tonumber(state[1])
local start = tonumber(state[2])
local latest = tonumber(state[3]) or 0

-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)

-- The keys are written together with one TTL: if either is gone, no period is open.
if count == nil or start == nil or t - start >= period then
    if align then
        start = t - math.fmod(t, period)
    else
        start = t
    end
    count = 0
end
count = count + 1

redis.call('SET', KEYS[1], string.format('%d', count), 'PX', ttl)
redis.call('SET', KEYS[2], string.format('%d', start), 'PX', ttl)
redis.call('SET', KEYS[3], string.format('%d', t), 'PX', ttl)

local answer = 3
if count < quota then
    answer = 1
elseif count == quota then
    answer = 2
end
return {answer, period - (t - start), t}
