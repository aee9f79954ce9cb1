//! Where a layer reads how critical a request is: the one source the
//! [`LimiterLayer`](crate::LimiterLayer) and the [`ShedLayer`](crate::ShedLayer) share.
//!
//! Under overload both refuse the least critical requests first (the core's
//! [`Criticality`] docs say how), so each needs to know a request's class before it decides.
//! [`ReadCriticality`] is that question, asked of the request before the inner service sees
//! it:
//!
//! | source | the class is | for |
//! | --- | --- | --- |
//! | a [`Criticality`] | that class, for every request (`Criticality::Critical` is both layers' default) | any request type |
//! | [`CriticalityHeader`] | a header's value, read leniently (`CRITICAL_PLUS`, `critical-plus`, `CriticalPlus`), or `critical` when it is absent or not a class | `http::Request`, HTTP and gRPC alike |
//! | a closure `Fn(&R) -> Criticality` | whatever it answers: a route, a user's plan, an extension an outer layer set | any request type |
//!
//! The default is one class for everything, so that a layer behaves as it does without
//! classes until it is told otherwise: a header that a client sets can say anything, and a
//! public server should trust the class only from its own edge (a proxy that sets the
//! header, or an extractor that reads who the caller is).
//!
//! # Examples
//!
//! ```
//! use http::Request;
//! use ironward::Criticality;
//! use ironward_tower::criticality::{CriticalityHeader, ReadCriticality};
//!
//! let header = CriticalityHeader::default();
//! let marked = Request::builder().header("x-criticality", "SHEDDABLE").body(()).unwrap();
//! assert_eq!(header.criticality(&marked), Criticality::Sheddable);
//! let garbled = Request::builder().header("x-criticality", "urgent!!").body(()).unwrap();
//! assert_eq!(header.criticality(&garbled), Criticality::Critical);
//!
//! let by_path = |request: &Request<()>| match request.uri().path() {
//!     "/batch" => Criticality::Sheddable,
//!     _ => Criticality::Critical,
//! };
//! let batch = Request::builder().uri("/batch").body(()).unwrap();
//! assert_eq!(by_path.criticality(&batch), Criticality::Sheddable);
//! ```

use http::{HeaderName, Request};
use ironward::Criticality;

/// The header a [`CriticalityHeader::default`] reads: `x-criticality`.
pub const CRITICALITY: HeaderName = HeaderName::from_static("x-criticality");

/// Reads the criticality of a request of type `R`.
///
/// A layer asks it once per request, in `call`, before it decides. Ready-made sources: a
/// [`Criticality`] (one class for every request), [`CriticalityHeader`] (a header of an
/// `http::Request`), and any `Fn(&R) -> Criticality`; annotate the closure's argument so that
/// its type is known. None may fail: a request that says nothing, or says something that is
/// not a class, gets the source's default.
///
/// It is a type parameter of the layers rather than a boxed value because what it reads
/// depends on the request type, which a layer's service is generic over; the ready-made
/// sources are small values.
///
/// # Examples
///
/// ```
/// use ironward::Criticality;
/// use ironward_tower::criticality::ReadCriticality;
///
/// let by_priority = |priority: &u8| if *priority > 5 { Criticality::CriticalPlus } else { Criticality::Sheddable };
/// assert_eq!(by_priority.criticality(&9), Criticality::CriticalPlus);
/// assert_eq!(Criticality::Critical.criticality(&9), Criticality::Critical);
/// ```
pub trait ReadCriticality<R> {
    /// The class of `request`.
    fn criticality(&self, request: &R) -> Criticality;
}

/// One class for every request, whatever its type.
impl<R> ReadCriticality<R> for Criticality {
    fn criticality(&self, _request: &R) -> Criticality {
        *self
    }
}

impl<R, F> ReadCriticality<R> for F
where
    F: Fn(&R) -> Criticality,
{
    fn criticality(&self, request: &R) -> Criticality {
        self(request)
    }
}

/// Reads a request's class from one of its headers, by [`Criticality`]'s lenient names: any
/// case, the words joined by `_`, `-` or nothing, surrounding whitespace ignored.
///
/// A request without the header, or whose value is not valid text or not a class's name,
/// gets the fallback (by default `Critical`, the class the SRE book gives a request that
/// states none), so a malformed header never fails a request. Of several values, the first
/// is read. The header is looked up by a name made once, never parsed per request.
///
/// gRPC metadata is sent as headers, so the same source reads a gRPC client's
/// `x-criticality` metadata.
///
/// # Examples
///
/// ```
/// use http::{HeaderName, Request};
/// use ironward::Criticality;
/// use ironward_tower::criticality::{CriticalityHeader, ReadCriticality};
///
/// let priority = CriticalityHeader::new(HeaderName::from_static("x-priority"))
///     .or(Criticality::Sheddable);
/// let unmarked = Request::new(());
/// assert_eq!(priority.criticality(&unmarked), Criticality::Sheddable);
/// let marked = Request::builder().header("x-priority", "critical-plus").body(()).unwrap();
/// assert_eq!(priority.criticality(&marked), Criticality::CriticalPlus);
/// assert_eq!(priority.name(), "x-priority");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CriticalityHeader {
    name: HeaderName,
    fallback: Criticality,
}

impl CriticalityHeader {
    /// Reads the header `name`, with `Critical` for a request without a class.
    pub fn new(name: HeaderName) -> Self {
        Self {
            name,
            fallback: Criticality::Critical,
        }
    }

    /// The same source, giving `fallback` to a request whose header is absent or malformed.
    #[must_use]
    pub fn or(self, fallback: Criticality) -> Self {
        Self { fallback, ..self }
    }

    /// The header read.
    pub fn name(&self) -> &HeaderName {
        &self.name
    }

    /// The class given to a request without a readable one.
    pub fn fallback(&self) -> Criticality {
        self.fallback
    }
}

impl Default for CriticalityHeader {
    /// Reads [`CRITICALITY`] (`x-criticality`), `Critical` when it is absent or malformed.
    fn default() -> Self {
        Self::new(CRITICALITY)
    }
}

impl<B> ReadCriticality<Request<B>> for CriticalityHeader {
    fn criticality(&self, request: &Request<B>) -> Criticality {
        request
            .headers()
            .get(&self.name)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse().ok())
            .unwrap_or(self.fallback)
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn with(value: &'static [u8]) -> Request<()> {
        let mut request = Request::new(());
        request.headers_mut().insert(
            CRITICALITY,
            HeaderValue::from_bytes(value).expect("a valid header value"),
        );
        request
    }

    #[test]
    fn each_class_reads_in_the_books_spelling_and_in_kebab_case() {
        let header = CriticalityHeader::default();
        let table: [(&[u8], Criticality); 6] = [
            (b"CRITICAL_PLUS", Criticality::CriticalPlus),
            (b"critical", Criticality::Critical),
            (b"Sheddable-Concurrent", Criticality::SheddableConcurrent),
            (b" sheddable ", Criticality::Sheddable),
            (b"SheddableConcurrent", Criticality::SheddableConcurrent),
            (b"critical-plus", Criticality::CriticalPlus),
        ];
        for (value, class) in table {
            assert_eq!(header.criticality(&with(value)), class, "{value:?}");
        }
    }

    #[test]
    fn a_missing_or_malformed_header_is_the_fallback() {
        let header = CriticalityHeader::default();
        assert_eq!(header.criticality(&Request::new(())), Criticality::Critical);
        // Not a class, empty, and not text at all (an obs-text byte): never an error.
        for value in [&b"urgent"[..], b"", b"critical\xff", b"critical plus"] {
            assert_eq!(
                header.criticality(&with(value)),
                Criticality::Critical,
                "{value:?}"
            );
        }
        let lenient = header.clone().or(Criticality::SheddableConcurrent);
        assert_eq!(
            lenient.criticality(&with(b"??")),
            Criticality::SheddableConcurrent
        );
        assert_eq!(lenient.fallback(), Criticality::SheddableConcurrent);
        assert_eq!(
            lenient.criticality(&with(b"sheddable")),
            Criticality::Sheddable
        );
    }

    #[test]
    fn of_several_values_the_first_is_read() {
        let mut request = with(b"sheddable");
        request
            .headers_mut()
            .append(CRITICALITY, HeaderValue::from_static("critical_plus"));
        assert_eq!(
            CriticalityHeader::default().criticality(&request),
            Criticality::Sheddable
        );
    }

    #[test]
    fn a_fixed_class_and_a_closure_read_any_request_type() {
        assert_eq!(
            Criticality::SheddableConcurrent.criticality(&()),
            Criticality::SheddableConcurrent
        );
        let odd = |n: &u32| {
            if n % 2 == 1 {
                Criticality::Sheddable
            } else {
                Criticality::Critical
            }
        };
        assert_eq!(odd.criticality(&3), Criticality::Sheddable);
        assert_eq!(odd.criticality(&4), Criticality::Critical);
    }
}
