//! The ten scripts, one file each under `lua/`, embedded once into the one script Redis is
//! sent, `lua/batch.lua`, and hashed once.
//!
//! Each file's header lists its `KEYS`, its `ARGV` with their units, and its reply. Every
//! script is run after `lua/now.lua`, the prelude that reads the clock the scripts decide
//! at (the caller's or Redis's `TIME`), and after the preludes of the kinds:
//! `lua/period_state.lua` (how a period's state reads, where a period starts),
//! `lua/bucket_state.lua` (how a bucket's state reads, refills and is written) and
//! `lua/log.lua` (how a log's entries read, are pushed and are refunded), which
//! `lua/limits.lua`, deciding several limits of any kind at once, uses all three of. So each
//! of those rules is written once, for the take, the read-only `next`, the settle and the
//! several limits alike.
//!
//! Redis is sent one script, `lua/batch.lua` after the preludes and the ten scripts, each
//! the body of its file wrapped in a function of its `KEYS` and `ARGV`: a call runs one or
//! more decisions of any of the ten, in order (see `src/batch.rs`).

use std::sync::LazyLock;

/// One of the ten scripts: its place in `lua/batch.lua`'s list, and its name, which errors,
/// logs and metrics report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Script {
    /// Its number in the list `lua/batch.lua` runs from (1 to 10).
    pub(crate) number: u8,
    /// Its file's name without `.lua`.
    pub(crate) name: &'static str,
}

/// `lua/period.lua`: a [`Period`](crate::Period) takes a cost.
pub(crate) const PERIOD: Script = Script {
    number: 1,
    name: "period",
};

/// `lua/period_settle.lua`: a [`Period`](crate::Period) reservation settled at its actual
/// cost.
pub(crate) const PERIOD_SETTLE: Script = Script {
    number: 2,
    name: "period_settle",
};

/// `lua/period_next.lua`: when a [`Period`](crate::Period)'s open period ends, and what it
/// holds, read-only.
pub(crate) const PERIOD_NEXT: Script = Script {
    number: 3,
    name: "period_next",
};

/// `lua/limits.lua`: the limits of a [`Limits`](crate::Limits) (and of a
/// [`Periods`](crate::Periods)) take their costs, all or nothing, or are only read.
pub(crate) const LIMITS: Script = Script {
    number: 4,
    name: "limits",
};

/// `lua/bucket.lua`: a [`Bucket`](crate::Bucket) takes `n` tokens.
pub(crate) const BUCKET: Script = Script {
    number: 5,
    name: "bucket",
};

/// `lua/bucket_settle.lua`: a [`Bucket`](crate::Bucket) reservation settled at its actual
/// cost.
pub(crate) const BUCKET_SETTLE: Script = Script {
    number: 6,
    name: "bucket_settle",
};

/// `lua/bucket_next.lua`: a [`Bucket`](crate::Bucket)'s tokens and clock, read-only.
pub(crate) const BUCKET_NEXT: Script = Script {
    number: 7,
    name: "bucket_next",
};

/// `lua/sliding.lua`: a [`Sliding`](crate::Sliding) log takes a cost.
pub(crate) const SLIDING: Script = Script {
    number: 8,
    name: "sliding",
};

/// `lua/sliding_settle.lua`: a [`Sliding`](crate::Sliding) reservation settled at its
/// actual cost.
pub(crate) const SLIDING_SETTLE: Script = Script {
    number: 9,
    name: "sliding_settle",
};

/// `lua/sliding_next.lua`: when a [`Sliding`](crate::Sliding) log has room for a cost,
/// read-only.
pub(crate) const SLIDING_NEXT: Script = Script {
    number: 10,
    name: "sliding_next",
};

/// The body of `lua/$file` as a function of its own `KEYS` and `ARGV`.
macro_rules! body {
    ($file:literal) => {
        concat!(
            "function(KEYS, ARGV)\n",
            include_str!(concat!("../lua/", $file)),
            "\nend,\n"
        )
    };
}

/// The one script Redis is sent: the preludes, the ten scripts in their numbers' order, and
/// `lua/batch.lua`, which runs them.
pub(crate) static BATCH: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(concat!(
        include_str!("../lua/now.lua"),
        include_str!("../lua/period_state.lua"),
        include_str!("../lua/bucket_state.lua"),
        include_str!("../lua/log.lua"),
        "local scripts = {\n",
        body!("period.lua"),
        body!("period_settle.lua"),
        body!("period_next.lua"),
        body!("limits.lua"),
        body!("bucket.lua"),
        body!("bucket_settle.lua"),
        body!("bucket_next.lua"),
        body!("sliding.lua"),
        body!("sliding_settle.lua"),
        body!("sliding_next.lua"),
        "}\n",
        include_str!("../lua/batch.lua"),
    ))
});
