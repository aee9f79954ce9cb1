-- ironward-redis: how long until a sliding-window log has room for a cost
-- (ironward::Sliding::next_n), read-only.
--
-- KEYS[1]  {key}.log  entries of three doubles (stamp, cost, sum), oldest first, as
--                     lua/sliding.lua writes them
-- KEYS[2]  {key}.ts   the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  quota: the most units in any window-long stretch (integer, 0 to 4294967295)
-- ARGV[3]  window: in whole microseconds (integer, at least 1)
-- ARGV[4]  cost: the units of the request asked about (integer, 0 to 4294967295)
--
-- Reply    {wait, t}: wait, microseconds until a request of that cost would pass, 0 when
--          it would pass now, -1 for a cost above the quota (integer);
--          t, the reading the wait is counted from (integer microseconds): the latest
--          seen when the caller's now is earlier, so that the caller can count from its own.
--          Nothing is written: entries that have left the window are skipped (found by
--          bisection), not dropped, and the latest reading is not moved; but for a log an
--          earlier version wrote (plain stamps), rewritten once in this form, as
--          lua/sliding.lua rewrites it, which changes no answer.

local now = read_now(ARGV[1], true)
local quota = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local latest = tonumber(redis.call('GET', KEYS[2])) or 0
local t = math.max(latest, now)

local first, used, newest = log_inside(KEYS[1], t, window)
return {log_wait(KEYS[1], t, window, quota, first, used, newest, cost), t}
