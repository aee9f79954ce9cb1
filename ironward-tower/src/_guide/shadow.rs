//! Shadow mode: a layer that decides as it would, but lets every call through.
//!
//! The breaker, the shedder, the rate limit, the gate and the deadline each take
//! `with_mode(Mode::Shadow)` (and report it with `mode()`), so that a tighter policy can be
//! tried on real traffic before it refuses anyone.
//!
//! A [`ChaosLayer`](crate::ChaosLayer) has its shadow mode in its policy instead
//! (`ironward::chaos::Chaos::shadow`), so that a reload turns it on and off: each fault is
//! decided as it would be, counted under `ironward.chaos.injected{shadow="true"}` and logged, and the call
//! goes through untouched.
//!
//! A layer in [`Mode::Shadow`] decides exactly as the enforcing one does, with the same core
//! check and the same changes to its state; where the enforcing layer would fail the call
//! with its refusal, the shadow one lets it through to the inner service and reports the
//! refusal it would have made: the `tracing` event, with `outcome = "shadowed"`, and the
//! `ironward.requests` counter under `outcome="shadowed"` and the refusal's `reason` (see
//! the guide's [metrics](crate::_guide::metrics)). What the shadowed call then does is not
//! the layer's business:
//!
//! - a shadowed breaker call holds no permit, so its outcome is not recorded, exactly as the
//!   enforcing breaker never ran it (the core records its refusal as a drop either way);
//! - a shadowed shed request is not in flight, as a refused one is not;
//! - a shadowed gate entry holds no room, and a shadowed rate-limited request took nothing
//!   from the budget;
//! - a shadow deadline sets no timer: a request whose time had run out when it arrived
//!   (reason `exceeded`) goes through, and a call that runs past its deadline is let finish
//!   with its own response and reported when it ends (reason `elapsed`).
//!
//! A shadow layer therefore sees the traffic its enforcing twin would have let in, and
//! refuses nothing: its decisions are the twin's, not those of a layer that let the
//! shadowed calls count.
//!
//! Where the service serves `http::Request`s ([`QuotaLayer`](crate::QuotaLayer),
//! [`DeadlineLayer`](crate::DeadlineLayer)), the refusal value ([`Limited`](crate::Limited),
//! [`DeadlineExceeded`](crate::DeadlineExceeded)) is also put in the *request's* extensions,
//! so that the handler or an outer layer can read it. A deadline can do so only for a
//! request that arrived out of time: whether a call will run out inside is not known when
//! it goes in (its handler reads [`RequestDeadline`](crate::RequestDeadline) for that). The
//! breaker, the shedder and the gate serve any request type, so they report a shadowed
//! refusal through the event and the counter alone; and none of the layers can put it in
//! the response's extensions, since the response type is the inner service's, whatever it
//! is.
//!
//! The mode is checked on the refusal path only: an admitted call costs what it did. The
//! deadline is the exception, since it decides when a call ends: a shadow deadline reads
//! the clock once when the call ends, in place of the enforcing layer's timer.
//!
//! # Examples
//!
//! ```
//! use ironward_tower::{GateLayer, Mode};
//! use tower::{Layer, Service, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let layer = GateLayer::new(1).with_mode(Mode::Shadow);
//! assert_eq!(layer.mode(), Mode::Shadow);
//! let mut service = layer.layer(service_fn(|n: u32| async move {
//!     Ok::<_, std::convert::Infallible>(n)
//! }));
//! let first = service.call(1);
//! // Past the limit: the enforcing gate would refuse, the shadow one lets it through,
//! // holding no room.
//! let second = service.call(2);
//! assert_eq!(layer.held(), 1);
//! assert_eq!(first.await.unwrap() + second.await.unwrap(), 3);
//! # }
//! ```
//!
//! [`Mode::Shadow`]: crate::Mode::Shadow
