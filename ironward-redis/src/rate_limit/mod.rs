//! ironward-tower's rate limit with its budgets in Redis: [`FleetQuotaLayer`],
//! [`FleetQuotaService`] and [`FleetQuotaFuture`], laid out as ironward-tower's middleware
//! are (tower's `limit/concurrency/` layout).

mod future;
mod layer;
mod service;

pub use self::future::FleetQuotaFuture;
pub use self::layer::FleetQuotaLayer;
pub use self::service::FleetQuotaService;
