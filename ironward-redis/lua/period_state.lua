-- period_state.lua: the prelude of the period scripts and of lua/limits.lua (see
-- src/script.rs), how a period's state reads, whether a period is open, where a new one
-- starts, and how long a cost waits, not a script of its own: each rule written once, for
-- every script that decides a period.
--
-- A period's key holds struct.pack('<ddd', count, start, latest): the units counted in the
-- open period, when it started, and the latest clock reading seen (integers below 2^53,
-- which doubles hold exactly; the times in microseconds).

-- The state under key: count, start and latest, or 0, nil, 0 where none was written. A
-- value of any other form is another program's data: a WRONGTYPE error, that key's alone.
local function period_read(key)
    local state = redis.call('GET', key)
    if not state then
        return 0, nil, 0
    end
    if #state ~= 24 then
        error({err = 'WRONGTYPE ' .. key .. ' holds no period state'})
    end
    return struct.unpack('<ddd', state)
end

-- Where a period opened at the reading t starts: on the multiples of period when align
-- (go-zero's Align), else at t. math.fmod is exact where `%` (a - floor(a/b)*b) can round.
local function period_start(t, period, align)
    if align then
        return t - math.fmod(t, period)
    end
    return t
end

-- The period open at the reading t of a state counting count units since start: count and
-- start, or 0 and nil when none is open at t (none was, or it has ended).
local function period_open(count, start, t, period)
    if start == nil or t - start >= period then
        return 0, nil
    end
    return count, start
end

-- next_n(t, cost) of a period holding count units in the period open since start (as
-- period_open gives them): 0 when the cost fits, -1 for a cost above the quota (never),
-- else the microseconds until the open period ends.
local function period_wait(quota, period, count, start, t, cost)
    if cost > quota then
        return -1
    end
    if count + cost <= quota then
        return 0
    end
    return period - (t - start)
end
