//! Eviction: why Redis must not evict the limiters' keys, and the warning when it may.
//!
//! A quota is only as good as Redis's memory of it. Set `maxmemory-policy noeviction` on
//! the Redis the limiters use. Every key they write has a TTL, so the `volatile-*`
//! policies evict them as readily as the `allkeys-*` ones (under `volatile-*` they may be
//! the only candidates), and an evicted key is a fresh limiter: its quota resets, with no
//! error and no failover, so under an evicting policy there is no bound at all. Under
//! `noeviction` a full Redis refuses writes with `OOM`: each call is then refused with
//! [`StoreError::Key`] (no failover, and nothing admitted past the quota), until memory is
//! freed. A store reads the policy (`CONFIG GET maxmemory-policy`) once Redis first
//! answers it, however it connected (at an eager [`Store::connect`], at the first call
//! Redis answers a lazily connected one, at a recovery), and warns when it can evict. The test `tests/eviction.rs` spends a key of quota 50: under
//! `noeviction` with `maxmemory` below what Redis holds nothing more is admitted (100
//! calls refused with `OOM`, and the key still spent once there is room); under
//! `allkeys-lru` and `volatile-lru`, with Redis filled past `maxmemory`, the key's state
//! is evicted and the key takes at least a second quota, 100 or more admitted.
//!
//! [`StoreError::Key`]: crate::StoreError::Key
//! [`Store::connect`]: crate::Store::connect
