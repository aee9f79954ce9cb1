//! A client-side circuit breaker: Google SRE adaptive throttling, or the classic three-state
//! breaker, as a tower layer.
//!
//! [`BreakerLayer`] wraps a service that calls a backend (a hyper, reqwest or tonic client) in
//! an [`ironward::SreBreaker`], or, given a [`Classic`](ironward::Classic) policy, an
//! [`ironward::ClassicBreaker`]. The core decides and keeps the record; this module only feeds it
//! the clock and the draw, asks the classifier how each call went, and turns a refusal into a
//! typed error that never reaches the backend. The reference is go-zero's client breaker
//! (`core/breaker/googlebreaker.go`, `zrpc/internal/clientinterceptors/breakerinterceptor.go`)
//! and the SRE book's chapter 21. As in tower's `limit::concurrency`, the module holds the
//! layer, the service it makes, the service's response future and the refusal; the layer's
//! [`tuner`](BreakerLayer::tuner) changes the policy of its breaker while it serves.
//!
//! # Examples
//!
//! A timeout inside the breaker, so that a backend that hangs counts as failing:
//!
//! ```
//! use std::time::Duration;
//! use ironward::SRE;
//! use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, Dice};
//! use tower::timeout::TimeoutLayer;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let hangs = service_fn(|_request: ()| std::future::pending::<Result<(), &'static str>>());
//! let client = ServiceBuilder::new()
//!     .layer(BreakerLayer::new(SRE).with_classifier(AnyError).with_dice(Dice::seeded(3)))
//!     .layer(TimeoutLayer::new(Duration::from_millis(100)))
//!     .service(hangs);
//!
//! let mut refused = 0;
//! for _ in 0..100 {
//!     let err = client.clone().oneshot(()).await.unwrap_err();
//!     refused += usize::from(err.is::<BreakerRefused>());
//! }
//! assert!(refused > 50, "refused {refused} of 100");
//! # }
//! ```

mod error;
mod future;
mod layer;
mod service;
mod shared;

pub(crate) use shared::Shared;

pub use error::BreakerRefused;
pub use future::BreakerFuture;
pub use layer::BreakerLayer;
pub use service::BreakerService;
