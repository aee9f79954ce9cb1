-- ironward-redis: take a cost from an exact sliding-window log (ironward::Sliding::take_n).
--
-- KEYS[1]  {key}.log  the admitted costs still (possibly) inside the window, oldest first: a
--                     list of entries of three little-endian doubles (24 bytes,
--                     struct.pack('<ddd', stamp, cost, sum)): the stamp in integer
--                     microseconds, the cost in units (at least 1), and the running sum of
--                     the costs pushed up to this entry, modulo 2^48 (so that the units
--                     between two entries are a difference, with no walk); never more
--                     entries than quota, plus the debts lua/sliding_settle.lua pushed
-- KEYS[2]  {key}.ts   the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most units in any window-long stretch (integer, 0 to 4294967295)
-- ARGV[3]  window: in whole microseconds (integer, at least 1)
-- ARGV[4]  ttl: in milliseconds, set on each key this writes (integer, at least 1)
-- ARGV[5]  cost: the units this request takes (integer, 0 to 4294967295)
--
-- Reply    {admitted, wait, t}: admitted 1 or 0; wait is next_n(now, cost) after this
--          request, in microseconds: 0 when a request of that cost would pass, else until
--          enough of the oldest costs leave the window; -1 for a cost above the quota,
--          which never passes;
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--
-- At t the window is (t - window, t]: an entry stamped s has left it when t - s >= window.
-- Entries are pushed at the latest reading, so the list is sorted and those that have left
-- come first. A log written by an earlier version (plain stamps, a cost of 1 each) is
-- rewritten in this form the first time it is read.

local now = read_now(ARGV[1], true)
local quota = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = ARGV[4]
local cost = tonumber(ARGV[5])

local latest = tonumber(redis.call('GET', KEYS[2])) or 0
-- A reading earlier than the latest seen is read as the latest seen.
local t = math.max(latest, now)

-- Drop the entries that have left the window: all at once when the newest has.
local newest, used = log_drop(KEYS[1], t, window)

local admitted = 0
if used + cost <= quota then
    admitted = 1
    if cost > 0 then
        newest = log_push(KEYS[1], newest, t, cost, ttl)
        used = used + cost
    end
end
redis.call('SET', KEYS[2], string.format('%d', t), 'PX', ttl)

return {admitted, log_wait(KEYS[1], t, window, quota, 0, used, newest, cost), t}
