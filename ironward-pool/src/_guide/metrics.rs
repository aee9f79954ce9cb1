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
//! | `ironward.breaker.state` | gauge (state number) | `name`: a classic breaker's state, as resilience4j's `CircuitBreaker.State` numbers it (closed 0, open 1, half-open 2, disabled 3, forced open 4, metrics only 5), set when it changes |
//! | `ironward.breaker.transitions` | counter (changes) | `name`, `from`, `to` (`closed`, `open`, `half_open`, ...): a classic breaker's changes of state |
//!
//! The state gauge and the transitions counter are a stateful breaker's (a ward made with a
//! `Reconnect<Classic>`, such as [`RECONNECT_CLASSIC`]): registered with the others when a
//! handle is taken (the gauge at 0, closed, and the four changes the record makes at zero),
//! and reported after the connect, the settle or the check that made the change. A ward
//! running the SRE breaker, which has no states, registers neither.
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
//! A classic breaker's every change of state is an `INFO` event, `the ward's breaker changed
//! state`, with the ward's `name`, `from` and `to` (the states' names) and `from_number` and
//! `to_number` (the gauge's numbers): a breaker that opens or closes is news an operator acts
//! on.
//!
//! [`Handle::counts`]: crate::Handle::counts
//! [`RECONNECT_CLASSIC`]: ironward::RECONNECT_CLASSIC
