//! Adaptive load shedding: go-zero's shedder as a tower layer, fed a real CPU reading.
//!
//! [`ShedLayer`] puts an [`ironward::Shedder`] in front of a server's handlers. The core
//! decides and keeps the count; this module feeds it the clock and the CPU reading, asks the
//! classifier how each request went, and turns a refusal into a typed error that never reaches
//! the handler. The reference is go-zero's `core/load/adaptiveshedder.go` and its HTTP and gRPC
//! shedding handlers. As in tower's `limit::concurrency`, the module holds the layer, the
//! service it makes, the service's response future (which keeps the count in flight honest
//! when a request is cancelled) and the refusal, and the layer's
//! [`tuner`](ShedLayer::tuner) changes the policy of its shedder while it serves. Given a
//! [`criticality`](crate::criticality) source ([`ShedLayer::with_criticality`]), the
//! shedder refuses the less critical requests first, as the core's
//! [`Shedder::check_as`](ironward::Shedder::check_as) decides.
//!
//! # Examples
//!
//! A hot, full server sheds; the same server cooled admits again:
//!
//! ```
//! use std::time::Duration;
//! use ironward::SHED;
//! use ironward_tower::{Cpu, ShedLayer, ShedRefused};
//! use tower::{Layer, Service, ServiceExt, service_fn};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let (cpu, dial) = Cpu::scripted(950);
//! let hangs = service_fn(|_request: ()| {
//!     std::future::pending::<Result<http::Response<()>, &'static str>>()
//! });
//! let mut server = ShedLayer::new(SHED, cpu).layer(hangs);
//!
//! // Nothing has finished yet, so the server is assumed to finish ten requests at a time,
//! // halved at 950 ‰; the moving average of requests in flight has to climb past that too.
//! let mut held = Vec::new();
//! for _ in 0..40 {
//!     held.push(server.ready().await.unwrap().call(()));
//! }
//! held.truncate(20); // twenty give up, and leave flight as they go
//! let err = server.ready().await.unwrap().call(()).await.unwrap_err();
//! assert!(err.is::<ShedRefused>());
//!
//! // Cool for longer than the policy's cooling time, and the server admits again.
//! dial.set(300);
//! tokio::time::sleep(SHED.cool + Duration::from_millis(1)).await;
//! held.push(server.ready().await.unwrap().call(()));
//! assert_eq!(server.flying(), 21);
//! # }
//! ```

mod error;
mod future;
mod layer;
mod service;
pub(crate) mod shared;

pub use error::ShedRefused;
pub use future::ShedFuture;
pub use layer::ShedLayer;
pub use service::ShedService;
