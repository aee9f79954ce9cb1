//! A ward in front of a connection pool: the `ironward` core's breaker, token bucket and
//! backoff decide every new connection, so a pool stops connecting to a failing backend and
//! spaces out its reconnections.
//!
//! A pool that keeps reconnecting to a failing database becomes part of the outage: every
//! checkout tries a fresh connection, the database's accept queue fills, and when it recovers
//! every worker reconnects at once. deadpool and bb8 retry a connect with no breaker and no
//! rate. The MoonBit package `moonward` puts a ward in front of a resource pool for this;
//! this crate is that ward for Rust's pools: a [`Warded`] manager wraps the pool's own
//! manager in one line, and asks the core's [`Ward`](ironward::Ward) before every connect.
//!
//! # Wrapping a manager
//!
//! deadpool (feature `deadpool`): any `deadpool::managed::Manager`, such as
//! deadpool-redis's or deadpool-postgres's.
//!
//! ```no_run
//! # #[cfg(feature = "deadpool")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use deadpool::managed::Pool;
//! use ironward_pool::Warded;
//!
//! let manager = deadpool_redis::Manager::new("redis://127.0.0.1:6379")?;
//! let pool = Pool::<Warded<deadpool_redis::Manager>>::builder(Warded::new(manager))
//!     .max_size(8)
//!     .build()?;
//! let mut connection = pool.get().await?;
//! # let _ = &mut connection;
//! # Ok(())
//! # }
//! ```
//!
//! bb8 (feature `bb8`): any `bb8::ManageConnection`, such as bb8-redis's or bb8-postgres's.
//!
//! ```no_run
//! # #[cfg(feature = "bb8")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use ironward_pool::Warded;
//!
//! let manager = bb8_redis::RedisConnectionManager::new("redis://127.0.0.1:6379")?;
//! let pool = bb8::Pool::builder()
//!     .max_size(8)
//!     .connection_timeout(std::time::Duration::from_secs(2)) // how long a checkout waits
//!     .build(Warded::new(manager))
//!     .await?;
//! let connection = pool.get().await?;
//! # drop(connection);
//! # Ok(())
//! # }
//! ```
//!
//! A refused connect fails at once with [`WardError::Refused`], which says which piece
//! refused and when a connect may next be tried ([`ConnectRefused::next`]). deadpool hands it
//! to the checkout inside its own error (`PoolError::Backend`), so a checkout during an
//! outage fails in microseconds. bb8 never hands a connect's error to a checkout: the
//! checkout waits for a connection up to the pool's `connection_timeout` and the error goes
//! to the pool's `error_sink`, so with bb8 the ward spaces the connects and a short
//! `connection_timeout` is what makes checkouts fail fast.
//!
//! # Features
//!
//! - `deadpool` (off by default): [`Warded`] implements `deadpool::managed::Manager`
//!   (deadpool 0.13, the version deadpool-redis 0.23 builds on).
//! - `bb8` (off by default): [`Warded`] implements `bb8::ManageConnection` (bb8 0.9).
//! - `metrics` (off by default): counts through the `metrics` facade ([`_guide::metrics`]).
//!
//! Both pool features are off by default, so that a deadpool user does not build bb8;
//! turn on the one for your pool.
//!
//! # Guide
//!
//! The [`_guide`] has the long form: [what the ward does](_guide::ward), its defaults and when to
//! use which piece, [clock and dice](_guide::testing) in tests, and
//! [metrics and events](_guide::metrics). `cargo run -p ironward-pool --features deadpool
//! --example redis_outage` runs an outage drill against a local `redis-server`.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod _guide;
#[cfg(feature = "bb8")]
mod bb8;
#[cfg(feature = "deadpool")]
mod deadpool;
mod error;
mod warded;

pub use error::{CheckoutRefused, ConnectRefused, WardError};
pub use warded::{Checkout, Counts, Handle, Warded};

/// The README's examples, compiled as doc tests.
#[cfg(all(doctest, feature = "deadpool"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
