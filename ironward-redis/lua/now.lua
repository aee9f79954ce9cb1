-- now.lua: the prelude every script is loaded with (see src/script.rs), not a script of
-- its own.
--
-- read_now(now, writes) is the time a script decides at, in whole microseconds: now is the
-- script's ARGV[1], the caller's clock, or 'server' for Redis's own TIME; or, where a
-- script's numbers come packed, the caller's clock as a number, or -1 for TIME. A script that
-- writes after reading TIME must first switch to effects replication (needed on Redis 3.2
-- to 4, the default from 5), so that replicas replay its writes rather than a second
-- reading of the clock.
local function read_now(now, writes)
    if type(now) == 'number' then
        if now >= 0 then
            return now
        end
    elseif now ~= 'server' then
        return tonumber(now)
    end
    if writes and redis.replicate_commands then
        redis.replicate_commands()
    end
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

