//! One server stack for axum: [`ProtectLayer`], the shedder, the rate limit, the
//! concurrency limit and the deadline as one layer whose service never fails.
//!
//! axum's `Router::layer` takes only services that never fail, and each refusing layer of
//! this crate fails with its refusal, so stacking them alone takes a `HandleErrorLayer` in
//! front and a stack type for every choice of pieces. [`ProtectLayer`] takes the same layers,
//! each optional, and puts them in one order; its service answers each refusal itself, with
//! the response [`handle_error`](crate::axum::handle_error) gives (one rule, called from
//! both: problem details or text as the request's `Accept` asks, `Retry-After`, the
//! `RateLimit` fields), and passes the handler's own response through.
//!
//! # The order
//!
//! The order is fixed, and the same a hand-built stack should take:
//!
//! | | piece | refuses with | why here |
//! | --- | --- | --- | --- |
//! | 1 | [`shed`](ProtectLayer::shed) ([`ShedLayer`](crate::ShedLayer)) | 503 | the cheapest refusal when the CPU is hot, made before any other piece spends anything on a request it would throw away; and it protects the pieces behind it |
//! | 2 | [`quota`](ProtectLayer::quota) ([`QuotaLayer`](crate::QuotaLayer)) | 429, `Retry-After`, `RateLimit` | fairness between clients before concurrency is spent: a client over its quota never holds a permit another client could use |
//! | 3 | [`limiter`](ProtectLayer::limiter) ([`LimiterLayer`](crate::LimiterLayer)) or [`gate`](ProtectLayer::gate) ([`GateLayer`](crate::GateLayer)) | 503 | inside the refusals above, so the limiter's latency samples hold only requests it let through, never the time another piece took to refuse one |
//! | 4 | [`deadline`](ProtectLayer::deadline) ([`DeadlineLayer`](crate::DeadlineLayer)) | 504 | innermost, around the handler alone: its budget is the handler's, not spent waiting in the limiter's queue |
//!
//! Each piece decides exactly as its layer does alone (the stack calls the layers' own
//! decisions on their own state) and reports the same metrics and events, so a stack counts
//! what the four layers stacked by hand in this order would.
//!
//! A limiter made [`with_bypass`](crate::LimiterLayer::with_bypass) lets the requests its
//! predicate matches (health checks) past the limit here as it does alone, uncounted; the
//! shedder, the rate limit and the deadline still decide them as any request.
//!
//! # One reading, one future
//!
//! A request's `call` reads the clock once and decides the shedder, the rate limit and the
//! limiter on that reading; the request then runs in one [`ProtectFuture`], which settles the
//! shedder and the limiter on one more reading as the handler answers (the time taken is
//! what both measure). The clock is the outermost piece's that reads one: give the pieces
//! one [`Clock`](crate::Clock) (each layer's `with_clock`) when a test moves time. Left on
//! their defaults, each piece's monotonic clock counts from its layer's making, and the
//! shared reading is ahead of the inner pieces' own by the microseconds between: a constant
//! no decision tells apart. The deadline runs on tokio's timer, as [`DeadlineLayer`](crate::DeadlineLayer)'s does,
//! and starts on the same reading when the clock is tokio's ([`Clock::monotonic`](crate::Clock::monotonic),
//! the default; [`Clock::instant`](crate::Clock::instant)), rather than reading it again.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use axum::{Router, body::Body, routing::get};
//! use http::{Request, StatusCode};
//! use ironward::SHED;
//! use ironward_tower::{Cpu, CpuSampler, DeadlineLayer, GateLayer, ProtectLayer, Quota};
//! use ironward_tower::{QuotaLayer, ShedLayer};
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let cpu = CpuSampler::new();
//! let stack = ProtectLayer::new()
//!     .shed(ShedLayer::new(SHED, Cpu::from(&cpu)))
//!     .quota(QuotaLayer::new(Quota::bucket(1.0, 1.0)).with_headers(true))
//!     .gate(GateLayer::new(256))
//!     .deadline(DeadlineLayer::new(Duration::from_secs(2)));
//! let app = Router::new().route("/", get(|| async { "hello" })).layer(stack);
//!
//! let response = app.clone().oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert!(response.headers().contains_key("ratelimit"));
//! // The one token is spent: the second request is answered 429, with when to come back.
//! let response = app.oneshot(Request::new(Body::empty())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
//! assert!(response.headers().contains_key("retry-after"));
//! # }
//! ```

mod future;
mod layer;
mod service;

pub use self::future::ProtectFuture;
pub use self::layer::ProtectLayer;
#[cfg(feature = "config")]
pub(crate) use self::layer::Shared;
pub use self::service::ProtectService;
