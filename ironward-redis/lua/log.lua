-- log.lua: the prelude of lua/sliding.lua, lua/sliding_next.lua, lua/sliding_settle.lua and
-- lua/limits.lua (see src/script.rs), not a script of its own: how they read and write a log's entries, each three little-endian
-- doubles (stamp, cost, sum), packed rather than formatted, which Redis's one thread reads
-- and writes in a fraction of the time decimal text takes.
--
-- sum is the running sum of the costs pushed up to the entry, modulo LOG_SUM: the units of
-- the entries from a to b are then sum(b) - sum(a) + cost(a), modulo LOG_SUM, with no walk
-- over the list. A window holds at most quota units (below 2^32), so the difference is
-- exact, and the sums stay below 2^48, which Lua's doubles hold exactly, however long a
-- log lives.

local LOG_SUM = 281474976710656

-- An entry as {stamp, cost, sum}: 24 bytes, struct.pack('<ddd', stamp, cost, sum). A
-- plain decimal stamp (at most 16 digits), as an earlier version wrote, is {stamp, 1, nil};
-- anything else is another program's data, refused as a wrong type.
local function log_parse(key, entry)
    if #entry == 24 then
        local stamp, cost, sum = struct.unpack('<ddd', entry)
        return {stamp, cost, sum}
    end
    local stamp = string.match(entry, '^(%d+)$')
    if stamp == nil then
        error({err = 'WRONGTYPE ' .. key .. ' holds no sliding log'})
    end
    return {tonumber(stamp), 1, nil}
end

-- An entry as the log keeps it.
local function log_pack(stamp, cost, sum)
    return struct.pack('<ddd', stamp, cost, sum)
end

-- The entry at index, or nil past the end.
local function log_entry(key, index)
    local entry = redis.call('LINDEX', key, index)
    if not entry then
        return nil
    end
    return log_parse(key, entry)
end

-- The newest entry of the log at key, or nil for an empty one, after rewriting a log whose
-- newest entry an earlier version pushed (a plain stamp: a cost of 1) in this form, once.
-- Earlier versions only push at the end, so when the newest entry has a sum, all have.
local function log_newest(key)
    local newest = log_entry(key, -1)
    if newest == nil or newest[3] ~= nil then
        return newest
    end
    local entries = redis.call('LRANGE', key, 0, -1)
    local ttl = redis.call('PTTL', key)
    redis.call('DEL', key)
    local sum = 0
    for i = 1, #entries do
        local entry = log_parse(key, entries[i])
        sum = math.fmod(sum + entry[2], LOG_SUM)
        newest = {entry[1], entry[2], sum}
        redis.call('RPUSH', key, log_pack(entry[1], entry[2], sum))
    end
    if ttl > 0 then
        redis.call('PEXPIRE', key, ttl)
    end
    return newest
end

-- The units of the entries from first to newest, both included.
local function log_units(first, newest)
    return math.fmod(newest[3] - first[3] + LOG_SUM, LOG_SUM) + first[2]
end

-- The entries of the log at key inside the window (t - window, t], read-only: the index
-- of the first of them (those that have left come first, found by bisection), the units
-- they hold, and the newest entry (nil for an empty log).
local function log_inside(key, t, window)
    local newest = log_newest(key)
    local low = 0
    local high = redis.call('LLEN', key)
    while low < high do
        local middle = math.floor((low + high) / 2)
        if t - log_entry(key, middle)[1] >= window then
            low = middle + 1
        else
            high = middle
        end
    end
    local used = 0
    if newest ~= nil and t - newest[1] < window then
        used = log_units(log_entry(key, low), newest)
    end
    return low, used, newest
end

-- Drops the entries of the log at key that have left the window at t (all at once when
-- the newest has); the newest entry left (nil for none) and the units inside.
local function log_drop(key, t, window)
    local newest = log_newest(key)
    if newest == nil then
        return nil, 0
    end
    if t - newest[1] >= window then
        redis.call('DEL', key)
        return nil, 0
    end
    local oldest = log_entry(key, 0)
    while t - oldest[1] >= window do
        redis.call('LPOP', key)
        oldest = log_entry(key, 0)
    end
    return newest, log_units(oldest, newest)
end

-- Pushes cost units (at least 1) stamped t after newest (nil for an empty log), the key
-- living ttl milliseconds; the new newest entry.
local function log_push(key, newest, t, cost, ttl)
    local sum = cost
    if newest ~= nil then
        sum = math.fmod(newest[3] + cost, LOG_SUM)
    end
    redis.call('RPUSH', key, log_pack(t, cost, sum))
    redis.call('PEXPIRE', key, ttl)
    return {t, cost, sum}
end

-- Takes up to refund units off the entries stamped at, as the core lowers its one entry
-- at that stamp (the core merges the costs taken at one reading into one entry; here they
-- are consecutive entries of that stamp), dropping an entry left with none. The running
-- sums of those entries and of every later one come down by what was taken before them,
-- so the tail from the first entry of that stamp is rewritten: a few entries, for a
-- reservation settled soon after it was taken. The key lives ttl milliseconds after.
local function log_refund(key, at, refund, ttl)
    -- The first entry stamped at or later: stamps never decrease along the list.
    local low = 0
    local high = redis.call('LLEN', key)
    while low < high do
        local middle = math.floor((low + high) / 2)
        if log_entry(key, middle)[1] < at then
            low = middle + 1
        else
            high = middle
        end
    end
    local first = log_entry(key, low)
    if first == nil or first[1] ~= at then
        return
    end
    local tail = redis.call('LRANGE', key, low, -1)
    local kept = {}
    local taken = 0
    for i = 1, #tail do
        local entry = log_parse(key, tail[i])
        local cost = entry[2]
        if entry[1] == at and taken < refund then
            local off = math.min(refund - taken, cost)
            taken = taken + off
            cost = cost - off
        end
        if cost > 0 then
            kept[#kept + 1] = log_pack(entry[1], cost, math.fmod(entry[3] - taken + LOG_SUM, LOG_SUM))
        end
    end
    if low == 0 then
        redis.call('DEL', key)
    else
        redis.call('LTRIM', key, 0, low - 1)
    end
    -- In chunks, within what one call may carry.
    for i = 1, #kept, 1000 do
        redis.call('RPUSH', key, unpack(kept, i, math.min(i + 999, #kept)))
    end
    if redis.call('EXISTS', key) == 1 then
        redis.call('PEXPIRE', key, ttl)
    end
end

-- next_n(t, cost) of a log whose entries from index first on are inside the window and
-- hold used units, newest the last of them: 0 when cost fits, -1 for a cost above the
-- quota, else the microseconds until enough of the oldest have left (as the core asks the
-- oldest first, then the rest, here by bisection on the sums).
local function log_wait(key, t, window, quota, first, used, newest, cost)
    if cost > quota then
        return -1
    end
    if used + cost <= quota then
        return 0
    end
    -- The units left once the entries up to index i have left: sum(newest) - sum(i).
    local room = quota - cost
    local left = function(entry)
        return math.fmod(newest[3] - entry[3] + LOG_SUM, LOG_SUM)
    end
    local oldest = log_entry(key, first)
    if left(oldest) <= room then
        return window - (t - oldest[1])
    end
    -- With every entry gone nothing is left, so the last index answers.
    local low = first + 1
    local high = redis.call('LLEN', key) - 1
    while low < high do
        local middle = math.floor((low + high) / 2)
        if left(log_entry(key, middle)) <= room then
            high = middle
        else
            low = middle + 1
        end
    end
    return window - (t - log_entry(key, low)[1])
end
