//! The error a shed request fails with.

use std::fmt;

/// The server is overloaded and shed the request: it failed at once, without reaching the
/// inner service.
///
/// A [`ShedService`](crate::ShedService) returns it boxed, as tower's `load_shed` returns its
/// own `Overloaded`, so a caller tests the boxed error with `err.is::<Overloaded>()`. It is
/// zero-sized, and boxing a zero-sized value does not allocate, so shedding costs no
/// allocation. The conventional answers are HTTP `503 Service Unavailable` (go-zero's HTTP
/// shedding handler) and gRPC `RESOURCE_EXHAUSTED` (its gRPC interceptor).
///
/// # Examples
///
/// ```
/// use ironward_tower::Overloaded;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(Overloaded);
/// assert!(err.is::<Overloaded>());
/// assert_eq!(err.to_string(), "server overloaded, request shed");
/// assert_eq!(size_of::<Overloaded>(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Overloaded;

impl fmt::Display for Overloaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("server overloaded, request shed")
    }
}

impl std::error::Error for Overloaded {}
