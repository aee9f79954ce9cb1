//! The refusal of a full gate.

use std::fmt;

/// The gate was full: the request was refused at once and never reached the inner service.
///
/// Zero-sized, so boxing it into the service's `Box<dyn Error + Send + Sync>` allocates
/// nothing; test for it with `err.is::<GateFull>()`, as with tower's
/// `load_shed::error::Overloaded`.
///
/// Over HTTP it is `503 Service Unavailable` ([`crate::http::status_for`]): a server-wide
/// concurrency limit describes the server's state, not anything the client did, so it is not
/// `429 Too Many Requests`, which RFC 6585 §4 reserves for a client that sent too many.
/// RFC 9110 §15.6.4 gives 503 to a server unable to handle a request "due to a temporary
/// overload", and go-zero's `rest/handler/maxconnshandler.go` answers it past its limit.
///
/// Its field is private, so that it can gain one (the limit that was full, say) without
/// breaking a caller; make one with [`GateFull::new`] or `Default`.
///
/// # Examples
///
/// ```
/// use ironward_tower::gate::GateFull;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(GateFull::new());
/// assert!(err.is::<GateFull>());
/// assert_eq!(err.to_string(), "concurrency limit reached");
/// assert_eq!(size_of::<GateFull>(), 0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GateFull {
    _p: (),
}

impl GateFull {
    /// The refusal of one request.
    pub const fn new() -> Self {
        Self { _p: () }
    }
}

impl fmt::Debug for GateFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GateFull")
    }
}

impl fmt::Display for GateFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("concurrency limit reached")
    }
}

impl std::error::Error for GateFull {}
