//! The refusal of a full gate.

use std::fmt;

use ironward::GateReason;

/// The gate was full: the request was refused at once and never reached the inner service.
///
/// Test for it with `err.is::<GateFull>()` and read it with `err.downcast_ref::<GateFull>()`,
/// as with tower's `load_shed::error::Overloaded`.
///
/// Over HTTP it is `503 Service Unavailable` ([`crate::http::status_for`]): a server-wide
/// concurrency limit describes the server's state, not anything the client did, so it is not
/// `429 Too Many Requests`, which RFC 6585 §4 reserves for a client that sent too many.
/// RFC 9110 §15.6.4 gives 503 to a server unable to handle a request "due to a temporary
/// overload", and go-zero's `rest/handler/maxconnshandler.go` answers it past its limit.
///
/// It carries the [`GateReason`] the core's [`SharedGate::check`](ironward::SharedGate::check)
/// (the layer's gate; [`Gate::check`](ironward::Gate::check) gives the same) refused with:
/// how many were inside, and the limit. The reason is `Copy` and was read by the decision
/// anyway, so a refusal costs the one `Box` that makes it a boxed error and nothing
/// else; nothing is formatted until it is displayed. `Display` is one line, what refused and
/// then the reason's own line; because the reason is in it,
/// [`source`](std::error::Error::source) is `None`, so that a report walking the chain does
/// not print it twice.
///
/// Its field is private, so that it can gain another without breaking a caller; make one
/// with [`GateFull::new`].
///
/// # Examples
///
/// ```
/// use ironward::Gate;
/// use ironward_tower::gate::GateFull;
///
/// let mut gate = Gate::new(2);
/// assert!(gate.enter() && gate.enter());
/// let reason = gate.check().expect_err("full");
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(GateFull::new(reason));
/// assert!(err.is::<GateFull>());
/// assert_eq!(err.downcast_ref::<GateFull>().unwrap().reason().held, 2);
/// assert_eq!(
///     err.to_string(),
///     "concurrency cap refused the request: gate full: 2 held against a limit of 2",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GateFull {
    reason: GateReason,
}

impl GateFull {
    /// The refusal of one request, for the reason the core gave.
    ///
    /// The layer makes these; this is for other gates and for tests of what a caller does
    /// with one.
    pub const fn new(reason: GateReason) -> Self {
        Self { reason }
    }

    /// Why the gate refused: the numbers [`SharedGate::check`](ironward::SharedGate::check)
    /// decided by.
    pub const fn reason(&self) -> GateReason {
        self.reason
    }
}

impl fmt::Display for GateFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written straight to `f`: one formatting of the reason, not one inside another.
        f.write_str("concurrency cap refused the request: ")?;
        fmt::Display::fmt(&self.reason, f)
    }
}

impl std::error::Error for GateFull {}
