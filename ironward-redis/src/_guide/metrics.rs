//! Metrics and events: what a store counts with the `metrics` feature, and what it logs.
//!
//! # Metrics
//!
//! With the `metrics` feature, every limiter and every store report through the
//! [`metrics`](https://docs.rs/metrics) facade, to whichever recorder the application installs
//! (a Prometheus or OpenTelemetry exporter); without it nothing is recorded and no dependency
//! is pulled in. Handles are registered once, when a limiter, a layer or a store is made, so
//! a decision costs an increment on a handle (and a round trip one reading of tokio's
//! clock), and nothing at all while no recorder is installed. Names follow the OpenTelemetry
//! conventions: dot-separated, lower case, the unit in braces for a count of things,
//! durations in seconds. `ironward.requests` is the counter ironward-tower's layers count
//! under, so one query sees a fleet-wide limit beside the local ones.
//!
//! | name | kind | unit | labels | what |
//! | --- | --- | --- | --- | --- |
//! | `ironward.requests` | counter | `{request}` | `piece`, `name`, `source`, `outcome`, `reason` (refused only) | each `take` of a limiter, and each request a [`FleetQuotaLayer`] decided on |
//! | `ironward.redis.failovers` | counter | `{failover}` | none | switches of a store from Redis to its local fallback: one per outage, however many calls it answers |
//! | `ironward.redis.fallback.duration` | histogram | `s` | none | how long each stretch on the fallback lasted, from the failover to the `PING` Redis answered, recorded when it ends |
//! | `ironward.redis.decision.duration` | histogram | `s` | `piece`, `name`, `outcome` | the round trip of each script call (every `take` and `next` Redis is asked), from sending it to its reply, its error or its timeout, its wait for its batch included |
//! | `ironward.redis.batch.size` | histogram | `{decision}` | none | the decisions in each call a store sent to Redis and Redis answered (see [batches](super::batches)): 1 for a lone call, at most 64 |
//!
//! The labels take a small fixed set of values (keys are never labels):
//!
//! - `piece`: `redis_period`, `redis_bucket` or `redis_sliding` for a [`Period`], [`Bucket`]
//!   or [`Sliding`] of its own (`redis_period` for a [`Periods`] too), `redis_limits` for a
//!   [`Limits`]; `rate_limit`, ironward-tower's rate limit's piece, for the
//!   limiter inside a [`FleetQuotaLayer`], whatever its kind, so that a request through the
//!   layer is counted once;
//! - `name`: the limiter's name as its keys read it (an empty one is `ironward`); for a
//!   [`FleetQuotaLayer`] the name given to [`FleetQuotaLayer::new`], which names its budgets
//!   for the whole fleet, and not its policy name, which several layers may share;
//! - `source`: which store decided, the [`Answer`]'s [`Source`]: `redis`, or `local` for the
//!   fallback; a refusal without an answer is `redis`'s;
//! - `outcome` of a request: `admitted` or `refused`; of a round trip: `ok` (a reply that
//!   decoded) or `error` (a dropped connection or an error reply about the server, which
//!   fail over; an error about the key; a timeout; a reply no script gives);
//! - `reason`, on refusals: `limited` (over the quota: [`Usage::Over`](ironward::Usage), or
//!   `false`), `timeout` (Redis did not answer in time, [`StoreError::Timeout`]), `bad_reply`
//!   (Redis's reply was none a script gives, [`StoreError::Reply`]) or `key_error` (Redis
//!   refused the script for the key's sake, [`StoreError::Key`]). A failover is no refusal:
//!   the fallback answers, under `source="local"`.
//!
//! The stretches on the fallback are a histogram rather than a counter of seconds because
//! it holds the counter and more: its sum is the time spent on the fallback (its rate the
//! fraction of time a process ran on its share of the quota), its count the recoveries, its
//! buckets how long outages last. A stretch still under way is recorded when it ends: until
//! then it shows as one more `ironward.redis.failovers` than fallback stretches, and, at
//! once, as `ironward.requests{source="local"}`. [`Store::stats`] holds the same counts
//! without the feature.
//!
//! # Tracing
//!
//! Whatever the feature, the crate reports through [`tracing`](https://docs.rs/tracing),
//! each event with the limiter's `piece` and `name` as fields:
//!
//! | level | when | fields |
//! | --- | --- | --- |
//! | `DEBUG` | a `take` refused over its quota (a refusal is an answer, not an error) | `source`, and the numbers that decided it: `quota` and `period` or `window`, or `rate`, `burst` and `cost` (the fallback's share on `source="local"`), and `retry_after` |
//! | `DEBUG` | a call refused because Redis did not answer in time, or answered by the fallback with [`OnTimeout::Fallback`] | `script`, `timeout` |
//! | `WARN` | a store fails over to its local fallback | `script`, `error` (what Redis or the connection said), `probe`, `share` |
//! | `WARN` | a store, once Redis first answers it (an eager connect, a lazy store's first answered call, or a recovery), finds a `maxmemory-policy` that can evict the limiters' keys | `policy` |
//! | `DEBUG` | Redis refused `CONFIG GET`, so the eviction policy is not known | `error` |
//! | `ERROR` | Redis refused the script for the key's sake ([`StoreError::Key`]: `WRONGTYPE`, another program's data, until someone looks; `OOM`; `NOPERM`): that call is refused, the store stays on Redis | `script`, `error` |
//! | `ERROR` | Redis gave a reply no script gives ([`StoreError::Reply`]) | `script`, `reply` |
//! | `INFO` | a store is back on Redis | `lasted`: how long it ran on the fallback |
//!
//! A failover is reported once, by the call that switched the store; the calls the
//! fallback answers after it are not.
//!
//! [`FleetQuotaLayer`]: crate::FleetQuotaLayer
//! [`Period`]: crate::Period
//! [`Bucket`]: crate::Bucket
//! [`Sliding`]: crate::Sliding
//! [`Periods`]: crate::Periods
//! [`Limits`]: crate::Limits
//! [`FleetQuotaLayer::new`]: crate::FleetQuotaLayer::new
//! [`Answer`]: crate::Answer
//! [`Source`]: crate::Source
//! [`StoreError::Timeout`]: crate::StoreError::Timeout
//! [`StoreError::Reply`]: crate::StoreError::Reply
//! [`StoreError::Key`]: crate::StoreError::Key
//! [`Store::stats`]: crate::Store::stats
//! [`OnTimeout::Fallback`]: crate::OnTimeout::Fallback
