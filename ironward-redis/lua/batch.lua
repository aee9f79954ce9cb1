-- ironward-redis: several decisions, each one of the ten scripts, run one after the other
-- in one call (see src/batch.rs), each with its own KEYS and ARGV and its own reply.
--
-- Loaded after every prelude (now.lua, period_state.lua, bucket_state.lua, log.lua) and
-- after `local scripts = {...}`, the ten scripts, each the body of its file wrapped in
-- function(KEYS, ARGV) ... end, in the order of src/script.rs (1 period.lua, 2
-- period_settle.lua, 3 period_next.lua, 4 limits.lua, 5 bucket.lua, 6 bucket_settle.lua,
-- 7 bucket_next.lua, 8 sliding.lua, 9 sliding_settle.lua, 10 sliding_next.lua): the same
-- text the scripts run alone, so a decision in a batch is the decision sent alone.
--
-- KEYS     every decision's keys, decision after decision
-- ARGV[1]  the head: for each decision, struct.pack('<BI4I4', script, keys, args), the
--          script's number in the list above, how many of KEYS and of the ARGV that follow
--          are its own
-- ARGV[2...] every decision's arguments, decision after decision
--
-- Reply    one item a decision, in order: its script's reply, or the error it raised, as an
--          error reply of its own (WRONGTYPE, OOM, ...; a Lua error as ERR), so that a
--          key's error is that decision's alone and the decisions after it still run. A
--          reply that is a list of numbers only (most of them) comes packed, one string of
--          little-endian doubles, struct.pack('<dd...'), which the caller reads back as the
--          integers Redis would have made of them (each truncated towards zero): Redis
--          writes a string at a fraction of the cost of an array of integers. Any other
--          reply (nil, a number, a list holding a string) comes as the script gave it; no
--          script replies with a bare string, so a string is always a packed list. Redis runs the whole call atomically, so the decisions run in this
--          order with nothing between them, as if each were sent alone in turn.

-- The n items of t from i on, as a table of their own (unpack returns at most a few
-- thousand values at once, so a longer run is copied one by one).
local function slice(t, i, n)
    if n <= 4096 then
        return {unpack(t, i, i + n - 1)}
    end
    local out = {}
    for j = 1, n do
        out[j] = t[i + j - 1]
    end
    return out
end

-- The formats of packed replies, by their number of items.
local formats = {}

-- reply packed as struct.pack('<dd...') when it is a list of numbers only (read, as Redis
-- reads a list, up to its first nil), else reply itself.
local function packed(reply)
    if type(reply) ~= 'table' then
        return reply
    end
    local n = 0
    while true do
        local item = reply[n + 1]
        if item == nil then
            break
        elseif type(item) ~= 'number' then
            return reply
        end
        n = n + 1
    end
    if n == 0 then
        return reply
    end
    local format = formats[n]
    if not format then
        format = '<' .. string.rep('d', n)
        formats[n] = format
    end
    return struct.pack(format, unpack(reply, 1, n))
end

local head = ARGV[1]
local replies, k, a, at = {}, 1, 2, 1
for i = 1, #head / 9 do
    local script, keys, args
    script, keys, args, at = struct.unpack('<BI4I4', head, at)
    local ok, reply = pcall(scripts[script], slice(KEYS, k, keys), slice(ARGV, a, args))
    k, a = k + keys, a + args
    if ok then
        if reply == nil then
            reply = false
        else
            reply = packed(reply)
        end
    elseif type(reply) == 'table' and reply.err then
        reply = {err = reply.err}
    elseif type(reply) == 'string' and string.find(reply, '^%u+ ') then
        -- Redis 7 hands pcall an error reply as its text: 'WRONGTYPE Operation ...'.
        reply = {err = reply}
    else
        reply = {err = 'ERR ' .. tostring(reply)}
    end
    replies[i] = reply
end
return replies
