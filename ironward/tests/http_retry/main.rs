//! `ironward::http_retry` through its public API, after the MoonBit package `http_retry`, RFC 9110
//! and the rule order of `ironward::http_retry`.
//!
//! - `dates`: IMF-fixdate vectors from an independent oracle (`tests/data/http_dates.py`,
//!   Python's `datetime` and `calendar.timegm`), each with altered copies that must fail.
//! - `retry_after`: the edge values of `Retry-After` (RFC 9110 §10.2.3).
//! - `admission` and `delays`: the rule order as tables (`table`): every stop reason, both
//!   sides of every boundary, saturation at the largest values.
//! - `reasons`: the precedence of every pair of stop reasons, their `Display` and `Error`.
//! - `properties`: no input panics, and every wait respects the server, the cap and the
//!   budget, checked against a naive model of the rules.

mod admission;
mod dates;
mod delays;
mod properties;
mod reasons;
mod retry_after;
mod table;

use std::time::Duration;

use ironward::http_retry::Attempt;

/// A Unix time inside the accepted range: 2023-11-14T22:13:20Z.
const NOW: i64 = 1_700_000_000;

/// The first retry of a GET answered 503, one second in, with no jitter: a request every
/// rule lets through, for a test to change one field of.
fn get() -> Attempt<'static> {
    Attempt {
        method: "GET",
        status: 503,
        retry_index: 0,
        elapsed: Duration::from_secs(1),
        body_replayable: true,
        replay_safe: false,
        sample_ppm: 1_000_000,
    }
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn secs(seconds: u64) -> Duration {
    Duration::from_secs(seconds)
}

fn ns(nanos: u64) -> Duration {
    Duration::from_nanos(nanos)
}
