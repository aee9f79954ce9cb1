//! HTTP retry decisions: what [`http_retry`] decides, and the whole retry loop it drives.
//!
//! `ironward::http_retry` decides what to do after a failed HTTP response, `Wait(delay)` or
//! `Stop(reason)`, from its status and method, whether the request can safely be sent again, which
//! retry it would be, the time already spent and the raw `Retry-After` values (RFC 9110 §9.2.2,
//! §10.2.3). The server's minimum delay is honoured, never jittered down or clipped to the cap, and
//! every wait plus a reserve for the next attempt must fit strictly inside the total budget. It reads
//! no clock: the caller passes the elapsed time and the wall clock, and re-checks its deadline after
//! waking.
//!
//! ```rust
//! use core::time::Duration;
//! use ironward::http_retry::{Attempt, Decision, Settings, decide_response};
//!
//! // HTTP/1.1 503 Service Unavailable
//! // Retry-After: Wed, 21 Oct 2015 07:28:00 GMT
//! let attempt = Attempt {
//!     method: "GET",
//!     status: 503,
//!     retry_index: 0,                      // the first retry
//!     elapsed: Duration::from_millis(850), // monotonic, since the first attempt began
//!     body_replayable: true,
//!     replay_safe: false,
//!     sample_ppm: 730_000,                 // the caller's uniform draw, for full jitter
//! };
//! let now_unix = 1_445_412_468; // 2015-10-21T07:27:48Z, from the wall clock
//! let retry_after = ["Wed, 21 Oct 2015 07:28:00 GMT"];
//! let decision = decide_response(&Settings::default(), &attempt, &retry_after, now_unix);
//! // The server's 12 s outweigh the jittered 146 ms backoff.
//! assert_eq!(decision, Decision::Wait(Duration::from_secs(12)));
//! ```
//!
//! The MoonBit package `http_retry`'s three scenarios run with `cargo run -p ironward --example http_retry`.
//!
//! A whole retry loop, from the first attempt to the last, is `http_retry::Run`: it re-checks the
//! budget after each wait, caps each attempt at what is left of it, reads the raw `Retry-After`
//! bytes and tells a shared retry budget how each attempt went. It is the core's retry engine
//! ([`retry::Engine`](crate::retry::Engine)) under these rules: the status, the method and the
//! replay facts decide whether a failure is retryable, `Retry-After` is the wait it names, and
//! the engine does the rest, as it does for a loop around any other operation. `ironward-tower`'s
//! `HttpRetryLayer` and `ironward-reqwest`'s middleware both drive it, so they retry alike and
//! leave the same `Retried` record.
//!
//! [`http_retry`]: crate::http_retry
