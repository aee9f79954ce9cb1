//! ironward-tower's rate limit with its budgets in Redis: [`RateLimitLayer`],
//! [`RateLimitService`] and [`RateLimitFuture`], laid out as ironward-tower's middleware
//! are (tower's `limit/concurrency/` layout).

mod future;
mod layer;
mod service;

pub use self::future::RateLimitFuture;
pub use self::layer::RateLimitLayer;
pub use self::service::RateLimitService;
