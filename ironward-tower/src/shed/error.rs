//! The error a shed request fails with.

use std::fmt;

/// The server is overloaded and shed the request: it failed at once, without reaching the
/// inner service.
///
/// A [`ShedService`](crate::ShedService) returns it boxed, as tower's `load_shed` returns its
/// own `Overloaded` (a different type, which this one does not shadow), so a caller tests the
/// boxed error with `err.is::<ShedRefused>()`. It is zero-sized, and boxing a zero-sized value
/// does not allocate, so shedding costs no allocation. The conventional answers are HTTP
/// `503 Service Unavailable` (go-zero's HTTP shedding handler) and gRPC `RESOURCE_EXHAUSTED`
/// (its gRPC interceptor).
///
/// Its field is private, so that it can gain one (the CPU reading and the count in flight
/// that shed the request, say) without breaking a caller; make one with
/// [`ShedRefused::new`] or `Default`.
///
/// # Examples
///
/// ```
/// use ironward_tower::shed::ShedRefused;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(ShedRefused::new());
/// assert!(err.is::<ShedRefused>());
/// assert_eq!(err.to_string(), "server overloaded, request shed");
/// assert_eq!(size_of::<ShedRefused>(), 0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ShedRefused {
    _p: (),
}

impl ShedRefused {
    /// The refusal of one request.
    pub const fn new() -> Self {
        Self { _p: () }
    }
}

impl fmt::Debug for ShedRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ShedRefused")
    }
}

impl fmt::Display for ShedRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("server overloaded, request shed")
    }
}

impl std::error::Error for ShedRefused {}
