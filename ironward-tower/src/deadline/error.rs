//! The expiry of a request's deadline.

use std::fmt;

/// The request's deadline passed before the inner service answered.
///
/// Zero-sized, so boxing it allocates nothing; test for it with
/// `err.is::<DeadlineExceeded>()`. It is not tower's `timeout::error::Elapsed`, which tower's
/// `Timeout` returns, nor tokio's `time::error::Elapsed`: a classifier that looks for either
/// names each one. The inner future is dropped when it is returned, which cancels whatever it
/// was doing.
///
/// Over HTTP it is `504 Gateway Timeout` ([`crate::http::status_for`]), the status gRPC's
/// `DEADLINE_EXCEEDED` maps to (google.rpc `Code`): the server gave up waiting on its own
/// work. `408 Request Timeout`, which tower-http's `TimeoutLayer` answers by default, is for
/// a client that was too slow to send its request (RFC 9110 §15.5.9).
///
/// Its field is private, so that it can gain one (the budget that ran out, say) without
/// breaking a caller; make one with [`DeadlineExceeded::new`] or `Default`.
///
/// # Examples
///
/// ```
/// use ironward_tower::deadline::DeadlineExceeded;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(DeadlineExceeded::new());
/// assert!(err.is::<DeadlineExceeded>());
/// assert_eq!(err.to_string(), "request deadline exceeded");
/// assert_eq!(size_of::<DeadlineExceeded>(), 0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DeadlineExceeded {
    _p: (),
}

impl DeadlineExceeded {
    /// The expiry of one request's deadline.
    pub const fn new() -> Self {
        Self { _p: () }
    }
}

impl fmt::Debug for DeadlineExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeadlineExceeded")
    }
}

impl fmt::Display for DeadlineExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("request deadline exceeded")
    }
}

impl std::error::Error for DeadlineExceeded {}
