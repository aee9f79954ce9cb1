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
//! # What the ward does
//!
//! Every connect asks, in order ([`Ward`](ironward::Ward) has the details):
//!
//! - **the backoff**: after a failed connect, none until a wait has passed (growing with each
//!   failure in a row, by [`Backoff::delay`](ironward::Backoff::delay), forgotten on a
//!   success), and while connects are failing only one at a time. This is what stops a pool
//!   from hammering a database that is down.
//! - **the bucket**: at most `burst` connects at once and `rate` a second. This is what stops
//!   a reconnect storm when it comes back.
//! - **the breaker**: the SRE throttle, fed by connects, by the pool's checks of the
//!   connections it holds (a recycle, a validity check) and by the commands a caller reports
//!   ([`Handle::record`]). This is what thins the connects to a backend that flaps, which the
//!   backoff forgets on each success. A pool checks a connection once before it drops it, so
//!   a backend that accepts connections and fails their commands shows as one failed check
//!   per successful connect: two calls a success, which the breaker (refusing past 5 calls
//!   plus 1.5 × its successes) refuses on only once its window holds more than 10 such pairs,
//!   and then a small share. Report the commands' outcomes to it, and each connect is one
//!   success among three calls or more.
//!
//! The policy is a [`Reconnect`](ironward::Reconnect); its default, [`RECONNECT`](ironward::RECONNECT):
//!
//! | piece | default |
//! | --- | --- |
//! | breaker | go-zero's SRE preset: 5 calls never refused, `k` 1.5, a probe after 1 s, 10 s of history |
//! | bucket | 4 connects a second, 4 at once |
//! | backoff | 250 ms, growing by 1.6 to 4 s, spread by a fifth either way (gRPC's connection backoff, with a shorter start and cap) |
//! | checkouts | open: the pool's size bounds them |
//!
//! **When to use which piece.** Keep all three for a database or a cache: the backoff is the
//! one that matters while it is down, the bucket when it comes back, the breaker when it
//! flaps. Lower `rate` and `burst` for a backend whose connects are expensive (TLS, auth, a
//! process per connection); raise `backoff.cap` for one whose outages last minutes. A gate
//! on checkouts ([`Checkouts::Gate`](ironward::Checkouts::Gate), through
//! [`Handle::checkout`]) turns a backlog of waiters into fast refusals; a shedder
//! ([`Checkouts::Shed`](ironward::Checkouts::Shed)) refuses checkouts when this server is hot
//! and full, by the CPU reading given to [`Warded::with_cpu`].
//!
//! **What differs from the pools' own retry.** deadpool tries a fresh connect on every
//! checkout that finds no idle connection. bb8 retries each failed connect on its own, after
//! 400 ms doubling to half its connection timeout, while the checkout waits up to that timeout
//! (30 s by default). Neither knows that the last hundred connects failed, nor how many of its
//! connects are in flight at once. With the ward, the database sees one connect per backoff
//! wait, a deadpool checkout during an outage fails in microseconds with the ward's refusal
//! instead of waiting out a connect, and when the database is back the pool refills at the
//! bucket's pace. bb8's own retry loop stays: each of its attempts asks the ward, which
//! refuses those that come too soon.
//!
//! # Clock and dice
//!
//! The ward reads tokio's monotonic clock and real randomness by default; a test passes its
//! own with [`Warded::with_clock`] ([`Clock::manual`](ironward_tokio::Clock::manual)) and
//! [`Warded::with_dice`] (a [`Dice::from_fn`](ironward_tokio::Dice::from_fn) of fixed draws).
//!
//! # Metrics
//!
//! Under the `metrics` feature, through the `metrics` facade, with the names the other
//! edges use (`ironward_tokio::meter`):
//!
//! | metric | kind | labels |
//! | --- | --- | --- |
//! | `ironward.requests` | counter (connects) | `piece="pool_connect"`, `name`, `outcome` (`admitted`, `refused`), for a refusal `reason` (`breaker`, `bucket`, `backoff`) |
//! | `ironward.requests` | counter (checkouts) | `piece="pool_checkout"`, `name`, `outcome`, for a refusal `reason` (`gate`, `shed`) |
//! | `ironward.breaker.ratio` | gauge (fraction) | `name`: the ward's breaker's drop fraction when it starts or stops throttling, or refuses |
//!
//! The same counts are kept in-process whatever the features, in [`Handle::counts`].
//!
//! # Events
//!
//! `tracing` DEBUG events, each with the ward's `name`: every refused connect (`piece`,
//! `next`, `reason`) and checkout (`reason`); the first failed connect of a run
//! (`failures`, `next`) and the success that ends it; the breaker starting (`ratio`) and
//! stopping throttling. A refusal is not an error, and is never logged as one.
//!
//! # Features
//!
//! - `deadpool` (off by default): [`Warded`] implements `deadpool::managed::Manager`
//!   (deadpool 0.13, the version deadpool-redis 0.23 builds on).
//! - `bb8` (off by default): [`Warded`] implements `bb8::ManageConnection` (bb8 0.9).
//! - `metrics` (off by default): the table above.
//!
//! Both pool features are off by default, so that a deadpool user does not build bb8;
//! turn on the one for your pool.

#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

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
