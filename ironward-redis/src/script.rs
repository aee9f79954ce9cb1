//! The ten scripts, one file each under `lua/`, embedded once and hashed once.
//!
//! Each file's header lists its `KEYS`, its `ARGV` with their units, and its reply. Each is
//! loaded after `lua/now.lua`, the prelude that reads the clock the scripts decide at (the
//! caller's or Redis's `TIME`), and after the prelude of its kind: a period's after
//! `lua/period_state.lua` (how its state reads, where a period starts), a bucket's after
//! `lua/bucket_state.lua` (how its state reads, refills and is written), a log's after
//! `lua/log.lua` (how its entries read, are pushed and are refunded); `lua/limits.lua`,
//! which decides several limits of any kind at once, after all three. So each of those
//! rules is written once, for the take, the read-only `next`, the settle and the several
//! limits alike.

use std::sync::LazyLock;

use redis::Script;

/// The script in `lua/$file`, after the `lua/now.lua` prelude.
macro_rules! script {
    ($($file:literal),+) => {
        LazyLock::new(|| {
            Script::new(concat!(
                include_str!("../lua/now.lua"),
                $(include_str!(concat!("../lua/", $file))),+
            ))
        })
    };
}

/// `lua/period.lua`: a [`Period`](crate::Period) takes a cost.
pub(crate) static PERIOD: LazyLock<Script> = script!("period_state.lua", "period.lua");

/// `lua/period_settle.lua`: a [`Period`](crate::Period) reservation settled at its actual
/// cost.
pub(crate) static PERIOD_SETTLE: LazyLock<Script> =
    script!("period_state.lua", "period_settle.lua");

/// `lua/period_next.lua`: when a [`Period`](crate::Period)'s open period ends, and what it
/// holds, read-only.
pub(crate) static PERIOD_NEXT: LazyLock<Script> = script!("period_state.lua", "period_next.lua");

/// `lua/limits.lua`: the limits of a [`Limits`](crate::Limits) (and of a
/// [`Periods`](crate::Periods)) take their costs, all or nothing, or are only read, after
/// the preludes of every kind.
pub(crate) static LIMITS: LazyLock<Script> = script!(
    "period_state.lua",
    "bucket_state.lua",
    "log.lua",
    "limits.lua"
);

/// `lua/bucket.lua`: a [`Bucket`](crate::Bucket) takes `n` tokens.
pub(crate) static BUCKET: LazyLock<Script> = script!("bucket_state.lua", "bucket.lua");

/// `lua/bucket_settle.lua`: a [`Bucket`](crate::Bucket) reservation settled at its actual
/// cost.
pub(crate) static BUCKET_SETTLE: LazyLock<Script> =
    script!("bucket_state.lua", "bucket_settle.lua");

/// `lua/bucket_next.lua`: a [`Bucket`](crate::Bucket)'s tokens and clock, read-only.
pub(crate) static BUCKET_NEXT: LazyLock<Script> = script!("bucket_state.lua", "bucket_next.lua");

/// `lua/sliding.lua`: a [`Sliding`](crate::Sliding) log takes a cost, after the
/// `lua/log.lua` prelude, which reads a log's entries.
pub(crate) static SLIDING: LazyLock<Script> = script!("log.lua", "sliding.lua");

/// `lua/sliding_settle.lua`: a [`Sliding`](crate::Sliding) reservation settled at its
/// actual cost, after the `lua/log.lua` prelude.
pub(crate) static SLIDING_SETTLE: LazyLock<Script> = script!("log.lua", "sliding_settle.lua");

/// `lua/sliding_next.lua`: when a [`Sliding`](crate::Sliding) log has room for a cost,
/// read-only, after the `lua/log.lua` prelude.
pub(crate) static SLIDING_NEXT: LazyLock<Script> = script!("log.lua", "sliding_next.lua");

/// Every script, for [`Store::load`](crate::Store::load).
pub(crate) static ALL: [&LazyLock<Script>; 10] = [
    &PERIOD,
    &PERIOD_SETTLE,
    &PERIOD_NEXT,
    &LIMITS,
    &BUCKET,
    &BUCKET_SETTLE,
    &BUCKET_NEXT,
    &SLIDING,
    &SLIDING_SETTLE,
    &SLIDING_NEXT,
];
