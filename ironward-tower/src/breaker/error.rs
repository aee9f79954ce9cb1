//! The error a refused call fails with.

use std::fmt;

/// The breaker refused the call: it failed fast, without reaching the inner service.
///
/// A [`BreakerService`](crate::BreakerService) returns it boxed, as tower's middleware return
/// their refusals (`tower::load_shed::error::Overloaded`), so a caller tests the boxed error
/// with `err.is::<Refused>()`. It is zero-sized, and boxing a zero-sized value does not
/// allocate, so a refusal costs no allocation. The conventional HTTP answer is
/// `503 Service Unavailable`, which go-zero's breaker handler gives.
///
/// # Examples
///
/// ```
/// use ironward_tower::Refused;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(Refused);
/// assert!(err.is::<Refused>());
/// assert_eq!(err.to_string(), "circuit breaker refused the call");
/// assert_eq!(size_of::<Refused>(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("circuit breaker refused the call")
    }
}

impl std::error::Error for Refused {}
