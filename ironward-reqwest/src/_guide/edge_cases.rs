//! Edge cases: streaming bodies, idempotency keys, `Retry-After`, transport errors, clocks and counts.
//!
//! - **Streaming bodies** cannot be copied (`Request::try_clone` fails), so such a request is
//!   sent once and a failure stops with `NotReplayable`, even a refused connection.
//! - **Idempotency keys** vouch only when present and not blank
//!   ([`vouches`](ironward::http_retry::vouches)): an empty `Idempotency-Key` does not make a
//!   POST replay-safe.
//! - **Retry-After** fields are handed to the core as raw bytes: one that is not UTF-8 is
//!   malformed (`InvalidRetryAfter`), like any other malformed value; two fields, even equal
//!   ones, are ambiguous and stop too.
//! - **Transport errors** are decided as a 503 without a server delay; only a connect failure
//!   may be retried for a method that is not idempotent and not vouched for.
//! - **The wall clock** (for HTTP-dates) is read once per failed attempt; one set before 1970
//!   reads as 1970. Clock skew between client and server shifts an HTTP-date's delay.
//! - **A clock that steps back** is read by the core as the latest reading seen.
//! - **Waiting** holds the failed response, unread, until the retry is sent.
//! - **Counts** saturate: attempts at `u32::MAX`, the summed wait at `Duration::MAX`.
//! - **Invalid settings** retry nothing: every failure stops with `InvalidSettings` (and a
//!   zero `total_budget` leaves even the first attempt no time: it is cut short at once).
//! - **Poisoned locks** (a panic elsewhere while a budget or breaker was held) are used as
//!   they are: neither can be left half-updated.
