//! The refusal of a full gate.

use std::fmt;

/// The gate was full: the request was refused at once and never reached the inner service.
///
/// Zero-sized, so boxing it into the service's `Box<dyn Error + Send + Sync>` allocates
/// nothing; test for it with `err.is::<Busy>()`, as with tower's `load_shed::error::Overloaded`.
///
/// Over HTTP it is `503 Service Unavailable` ([`crate::http::status_for`]): a server-wide
/// concurrency limit describes the server's state, not anything the client did, so it is not
/// `429 Too Many Requests`, which RFC 6585 §4 reserves for a client that sent too many.
/// RFC 9110 §15.6.4 gives 503 to a server unable to handle a request "due to a temporary
/// overload", and go-zero's `rest/handler/maxconnshandler.go` answers it past its limit.
///
/// # Examples
///
/// ```
/// use ironward_tower::Busy;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(Busy);
/// assert!(err.is::<Busy>());
/// assert_eq!(err.to_string(), "concurrency limit reached");
/// assert_eq!(size_of::<Busy>(), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Busy;

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("concurrency limit reached")
    }
}

impl std::error::Error for Busy {}
