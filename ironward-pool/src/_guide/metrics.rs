//! Metrics and events: what a ward counts with the `metrics` feature, and what it logs.
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
//! [`Handle::counts`]: crate::Handle::counts
