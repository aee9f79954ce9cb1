-- ironward-redis: take one event from an exact sliding-window log (ironward::Sliding::take).
--
-- KEYS[1]  {key}.log  the stamps of the admitted events still (possibly) inside the window,
--                     oldest first: a list of integer microseconds, never longer than quota
-- KEYS[2]  {key}.ts   the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most events in any window-long stretch (integer, 0 to 4294967295)
-- ARGV[3]  window: in whole microseconds (integer, at least 1)
-- ARGV[4]  ttl: in milliseconds, set on each key this writes (integer, at least 1)
--
-- Reply    {admitted, wait, t}: admitted 1 or 0; wait is next(now) after this event, in
--          microseconds: 0 when there is room, else until the oldest stamp leaves the
--          window; -1 for a quota of 0, which never has room;
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--
-- At t the window is (t - window, t]: a stamp s has left it when t - s >= window. Stamps are
-- pushed at the latest reading, so the list is sorted and those that have left come first.

local now = read_now(true)
local quota = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = ARGV[4]

local latest = tonumber(redis.call('GET', KEYS[2])) or 0
-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)

-- Drop the stamps that have left the window: all at once when the newest has.
local newest = tonumber(redis.call('LINDEX', KEYS[1], -1))
if newest ~= nil and t - newest >= window then
    redis.call('DEL', KEYS[1])
else
    while true do
        local oldest = tonumber(redis.call('LINDEX', KEYS[1], 0))
        if oldest == nil or t - oldest < window then
            break
        end
        redis.call('LPOP', KEYS[1])
    end
end

local inside = redis.call('LLEN', KEYS[1])
local admitted = 0
if inside < quota then
    redis.call('RPUSH', KEYS[1], string.format('%d', t))
    redis.call('PEXPIRE', KEYS[1], ttl)
    inside = inside + 1
    admitted = 1
end
redis.call('SET', KEYS[2], string.format('%d', t), 'PX', ttl)

if quota == 0 then
    return {admitted, -1, t}
end
if inside < quota then
    return {admitted, 0, t}
end
local oldest = tonumber(redis.call('LINDEX', KEYS[1], 0))
return {admitted, window - (t - oldest), t}
