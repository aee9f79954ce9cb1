//! An adaptive concurrency limit that follows latency: [`LimiterLayer`].
//!
//! A backend that slows down without failing is the case a breaker does not see: every call
//! succeeds, each a little later, and a client that keeps sending piles up calls in flight
//! until they time out together. By Little's law the backend completes `limit / latency`
//! calls a second; past the number it can run at once, more calls in flight add only
//! latency. [`LimiterLayer`] keeps no more in flight than that number and finds it without
//! being told, moving the limit with the latency the calls show (the core's
//! [`ironward::Limiter`], after Netflix's concurrency-limits: Vegas by default, or Aimd or
//! Gradient2), and refuses the rest with [`LimiterRefused`] (over HTTP, `503`), or, with a
//! [`Queue`](crate::Queue), lets them wait a bounded time with failsafe-go's gradual
//! rejection (its `adaptivelimiter` package's `WithQueueing`). Under overload the least
//! critical requests are refused first: each request's class comes from the layer's
//! [`criticality`](crate::criticality) source, the same one [`ShedLayer`](crate::ShedLayer)
//! takes.
//!
//! [`ironward::Limiter`]'s docs say when to use the breaker, the shedder and the limiter: the
//! breaker for a backend that fails, the shedder for this server's own CPU, the limiter for a
//! backend (or a server) that slows down; a breaker and a limiter go together in front of a
//! backend that can do both.
//!
//! The limiter's classes are ceilings by default; [`Adaptive::partitions`](ironward::Adaptive::partitions)
//! reserves each class a part of the limit instead (Netflix's partitions), in this layer as
//! in the core. A request that must never be refused, a health check, is let through by
//! [`LimiterLayer::with_bypass`]: a predicate of the request's head, which the layer, a
//! [`ProtectLayer`](crate::ProtectLayer) and a [`ClientLayer`](crate::ClientLayer) built
//! from it all honour (one rule, [`ReadPass`]). A request it matches takes a
//! [`bypass`](ironward_tokio::SharedLimiter::bypass): never queued nor refused, not counted
//! in flight, and its latency never sampled.
//!
//! As in tower's `limit::concurrency`, the module holds the layer, the service it makes, the
//! service's response future (which settles the call when it completes, keeps the count in
//! flight honest when it is cancelled, and holds a queued request until it is let in) and
//! the refusal, and the layer's [`tuner`](LimiterLayer::tuner) changes the policy while it
//! serves. The shared state is [`ironward_tokio::SharedLimiter`].
//!
//! # Examples
//!
//! A client of a backend limited to four calls at once, which reads each call's class from
//! its `x-criticality` header: two calls in flight fill a sheddable call's half of the limit,
//! while a critical call still gets in.
//!
//! ```
//! use http::{Request, Response};
//! use ironward::limit::{AIMD, Aimd, Algorithm};
//! use ironward::{ADAPTIVE, Adaptive, Criticality};
//! use ironward_tower::criticality::CriticalityHeader;
//! use ironward_tower::{LimiterLayer, LimiterRefused};
//! use tower::{BoxError, Layer, Service, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let four = Adaptive {
//!     algorithm: Algorithm::Aimd(Aimd { initial: 4, min: 1, ..AIMD }),
//!     ..ADAPTIVE
//! };
//! let layer = LimiterLayer::new(four).with_criticality(CriticalityHeader::default());
//! let hangs = service_fn(|_: Request<()>| std::future::pending::<Result<Response<()>, BoxError>>());
//! let mut client = layer.layer(hangs);
//! let with = |class: &str| Request::builder().header("x-criticality", class).body(()).unwrap();
//!
//! let mut held = vec![client.call(with("critical")), client.call(with("critical"))];
//! let err = client.call(with("sheddable")).await.unwrap_err();
//! let reason = err.downcast_ref::<LimiterRefused>().unwrap().reason();
//! assert_eq!((reason.criticality, reason.room, reason.limit), (Criticality::Sheddable, 2, 4));
//! held.push(client.call(with("critical")));
//! assert_eq!(layer.flying(), 3);
//! drop(held); // cancelled: out of flight, and the limit learnt nothing from them
//! assert_eq!(layer.flying(), 0);
//! # }
//! ```

mod bypass;
mod error;
mod future;
mod layer;
mod service;
mod shared;

pub(crate) use self::future::Flight;
pub(crate) use self::shared::Shared;

pub use self::bypass::{Bypassing, Pass, ReadPass};
pub use self::error::LimiterRefused;
pub use self::future::LimiterFuture;
pub use self::layer::LimiterLayer;
pub use self::service::LimiterService;
