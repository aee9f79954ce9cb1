//! The expiry of a request's deadline.

use std::fmt;

/// The request's deadline passed before the inner service answered.
///
/// Zero-sized, so boxing it allocates nothing; test for it with `err.is::<Elapsed>()`, as
/// with tower's `timeout::error::Elapsed`. The inner future is dropped when it is returned,
/// which cancels whatever it was doing.
///
/// Over HTTP it is `504 Gateway Timeout` ([`crate::http::status_for`]), the status gRPC's
/// `DEADLINE_EXCEEDED` maps to (google.rpc `Code`): the server gave up waiting on its own
/// work. `408 Request Timeout`, which tower-http's `TimeoutLayer` answers by default, is for
/// a client that was too slow to send its request (RFC 9110 §15.5.9).
///
/// # Examples
///
/// ```
/// use ironward_tower::Elapsed;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(Elapsed);
/// assert!(err.is::<Elapsed>());
/// assert_eq!(err.to_string(), "request deadline elapsed");
/// assert_eq!(size_of::<Elapsed>(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("request deadline elapsed")
    }
}

impl std::error::Error for Elapsed {}
