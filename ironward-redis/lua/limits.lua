-- ironward-redis: several limits of any kind for one key, decided at once, all or nothing
-- (ironward::Limits over ironward::Bucket's take, ironward::Sliding's take_n and
-- ironward::Period's check_n, each waiting as its next or next_n).
--
-- KEYS     each limit's keys, in the order of the limits: a bucket's two, {key}.b<i> (the
--          tokens) and {key}.b<i>.ts (the latest reading), as lua/bucket.lua keeps them; a
--          log's two, {key}.l<i> (the entries) and {key}.l<i>.ts, as lua/sliding.lua keeps
--          them; a period's one, {key}.p<i>, as lua/period.lua keeps it; none for a bucket
--          of infinite burst, which holds no state
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  take: "1" to take every cost if every limit admits its own, "0" to only read
-- ARGV[3]  ttl: in milliseconds, set on every key at a write (integer, at least 1)
-- then for limit i (1 to n), five from ARGV[5i - 1]:
-- ARGV[5i - 1]  kind: "b" a bucket, "l" a sliding log, "p" a period, "f" a bucket of
--               infinite burst
-- ARGV[5i]      a bucket's rate (tokens a second, a finite float, at least 0); a log's or
--               a period's quota (integer, 0 to 4294967295); "0" for "f"
-- ARGV[5i + 1]  a bucket's burst (a finite float, at least 1); a log's window or a
--               period's length (whole microseconds, at least 1); "0" for "f"
-- ARGV[5i + 2]  a period's align: "1" for periods on the multiples of the period, "0" for
--               one that opens at the first event after the last one closed; "0" otherwise
-- ARGV[5i + 3]  cost: a bucket's tokens (a finite float, at least 0; -1 for a cost the core
--               refuses), a log's or a period's units (integer, 0 to 4294967296, the last a
--               cost above any quota)
--
-- Reply    {admitted, t1, x1, c1, t2, x2, c2, ...}: admitted 1 when every limit admits its
--          cost (and with take, each was charged it), 0 when one refuses (and nothing was
--          written); for each limit, t, the reading it decided at (the latest seen when the
--          caller's now is earlier), and after this call: for a bucket, x its tokens as a
--          "%.17g" string and c the reading they were counted at (the caller works out its
--          next from them, refilled to t, as for lua/bucket_next.lua); for the others, x the
--          wait, microseconds from t until it would admit its cost again (its next_n), 0
--          when it would now, -1 never, and c is t.
--
-- Each limit is read and decided by its kind's prelude, the rules the single-limit scripts
-- use (lua/bucket_state.lua, lua/log.lua, lua/period_state.lua), at its own latest reading,
-- but a refusal writes nothing: the core's Limits asks every limiter before it takes from
-- any, and a refusal leaves each exactly as it was, its clock included. So the state is
-- written only when every limit admits, and then every key at once with one TTL (the
-- longest limit's), so the keys never part: their latest readings stay one, as the core's
-- limiters' do.

local take = ARGV[2] == '1'
-- Writes may follow even a read: lua/log.lua rewrites a log of plain stamps once, as
-- lua/sliding_next.lua does, so effects replication is asked for either way.
local now = read_now(ARGV[1], true)
local n = (#ARGV - 3) / 5

local limits = {}
local admits = true
local k = 1
for i = 1, n do
    local at = 5 * i - 1
    local l = {kind = ARGV[at], a = tonumber(ARGV[at + 1]), b = tonumber(ARGV[at + 2])}
    local cost = tonumber(ARGV[at + 4])
    l.cost = cost
    if l.kind == 'b' then
        l.keys = {KEYS[k], KEYS[k + 1]}
        k = k + 2
        -- The tokens as kept, counted at latest: what the caller's next is worked out from
        -- unless this call writes, as for lua/bucket_next.lua.
        l.held, l.counted = bucket_read(l.keys[1], l.keys[2], l.b, now)
        l.t = math.max(l.counted, now)
        l.tokens = bucket_refill(l.held, l.counted, l.t, l.a, l.b)
        l.admits = cost >= 0 and cost <= l.tokens
    elseif l.kind == 'l' then
        l.keys = {KEYS[k], KEYS[k + 1]}
        k = k + 2
        local latest = tonumber(redis.call('GET', l.keys[2])) or 0
        l.t = math.max(latest, now)
        local first, used, newest = log_inside(l.keys[1], l.t, l.b)
        l.wait = log_wait(l.keys[1], l.t, l.b, l.a, first, used, newest, cost)
        l.admits = l.wait == 0
    elseif l.kind == 'p' then
        l.keys = {KEYS[k]}
        k = k + 1
        l.align = ARGV[at + 3] == '1'
        local count, start, latest = period_read(l.keys[1])
        l.t = math.max(latest, now)
        l.count, l.start = period_open(count, start, l.t, l.b)
        l.wait = period_wait(l.a, l.b, l.count, l.start, l.t, cost)
        l.admits = l.wait == 0
    else
        l.t = now
        l.admits = cost >= 0
        l.wait = l.admits and 0 or -1
    end
    admits = admits and l.admits
    limits[i] = l
end

if take and admits then
    local ttl = ARGV[3]
    for i = 1, n do
        local l = limits[i]
        local cost, t = l.cost, l.t
        if l.kind == 'b' then
            l.held = l.tokens - cost
            l.counted = t
            bucket_write(l.keys[1], l.keys[2], l.held, t, ttl, l.a, l.b)
        elseif l.kind == 'l' then
            local newest, used = log_drop(l.keys[1], t, l.b)
            if cost > 0 then
                newest = log_push(l.keys[1], newest, t, cost, ttl)
                used = used + cost
            end
            redis.call('SET', l.keys[2], string.format('%d', t), 'PX', ttl)
            l.wait = log_wait(l.keys[1], t, l.b, l.a, 0, used, newest, cost)
        elseif l.kind == 'p' then
            if l.start == nil then
                l.start = period_start(t, l.b, l.align)
            end
            l.count = l.count + cost
            redis.call('SET', l.keys[1], struct.pack('<ddd', l.count, l.start, t), 'PX', ttl)
            l.wait = period_wait(l.a, l.b, l.count, l.start, t, cost)
        end
    end
end

local reply = {admits and 1 or 0}
for i = 1, n do
    local l = limits[i]
    local at = 3 * i - 1
    reply[at] = l.t
    if l.kind == 'b' then
        reply[at + 1] = string.format('%.17g', l.held)
        reply[at + 2] = l.counted
    else
        reply[at + 1] = l.wait
        reply[at + 2] = l.t
    end
end
return reply
