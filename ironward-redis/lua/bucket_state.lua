-- bucket_state.lua: the prelude of the bucket scripts (see src/script.rs), how a bucket's
-- state reads, refills and is written, not a script of its own.
--
-- A bucket's state is two keys: {key}.tokens, the tokens held at the latest reading (a
-- float, "%.17g", which reads back to the same double; negative while a settled debt is
-- being paid), and {key}.ts, the latest clock reading seen (integer microseconds).

-- The longest TTL set on a key, in milliseconds: 2^44, as src/wire.rs's MAX_TTL_MS.
local BUCKET_MAX_TTL = 17592186044416

-- Refuses, as a WRONGTYPE error that is that key's alone, what MGET read under key as no
-- number: a string that is none, or (MGET answering no value for a key of any other type)
-- a list, a hash or a set another program keeps there, which a bucket would write over.
local function bucket_own(key, value)
    if value or redis.call('TYPE', key).ok ~= 'none' then
        error({err = 'WRONGTYPE ' .. key .. ' holds no bucket state'})
    end
end

-- The tokens and the latest reading under the two keys; a bucket with either missing is
-- a full one (burst tokens) counted at now. Only on a miss is a key's type asked.
local function bucket_read(tokens_key, ts_key, burst, now)
    local state = redis.call('MGET', tokens_key, ts_key)
    local tokens = tonumber(state[1])
    local latest = tonumber(state[2])
    if tokens == nil or latest == nil then
        if tokens == nil then
            bucket_own(tokens_key, state[1])
        end
        if latest == nil then
            bucket_own(ts_key, state[2])
        end
        return burst, now
    end
    return tokens, latest
end

-- The tokens held at t (at least latest) of a bucket holding tokens at latest: ironward's
-- refill, operation for operation, so the doubles match bit for bit: min(burst, tokens +
-- rate * elapsed_ns / 1e9), with elapsed_ns the microseconds elapsed times 1000 (exact
-- below 2^53, and rounded as the core's u64-to-f64 conversion rounds above it).
local function bucket_refill(tokens, latest, t, rate, burst)
    local elapsed = (t - latest) * 1000
    return math.min(burst, tokens + rate * elapsed / 1e9)
end

-- Writes tokens counted at t, each key living ttl milliseconds (ARGV's text: twice the
-- refill from empty) or, for a bucket in debt, twice its refill from what it holds to full, so that
-- the keys never expire (and forgive the debt) before the bucket is as good as new.
-- Returns the tokens as written.
local function bucket_write(tokens_key, ts_key, tokens, t, ttl, rate, burst)
    if tokens < 0 then
        local refill = math.ceil(2000 * (burst - tokens) / rate)
        ttl = string.format('%d', math.min(BUCKET_MAX_TTL, math.max(tonumber(ttl), refill)))
    end
    local held = string.format('%.17g', tokens)
    redis.call('SET', tokens_key, held, 'PX', ttl)
    redis.call('SET', ts_key, string.format('%d', t), 'PX', ttl)
    return held
end
