-- ironward-redis: read a token bucket for next() (ironward::Bucket::next), read-only.
--
-- KEYS[1]  {key}.tokens  tokens held at the latest reading (a float, "%.17g")
-- KEYS[2]  {key}.ts      the latest clock reading seen (integer microseconds)
--
-- ARGV[1]  now: the caller's clock in whole microseconds, or "server" to read Redis's TIME
-- ARGV[2]  burst: the most tokens the bucket holds (a finite float, at least 1)
--
-- Reply    {tokens, latest, t}: tokens held at latest, as a "%.17g" string; latest, when
--          they were counted, and t, the later of latest and now (integer microseconds).
--          A missing key is a full bucket counted at now (lua/bucket_state.lua). The
--          caller computes next() from these; nothing is written.

local now = read_now(ARGV[1], false)

local tokens, latest = bucket_read(KEYS[1], KEYS[2], tonumber(ARGV[2]), now)
return {string.format('%.17g', tokens), latest, math.max(latest, now)}
