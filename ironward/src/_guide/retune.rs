//! Changing a policy live: `retune` on every piece that keeps state, and what each keeps.
//!
//! Every piece that keeps state changes its policy in place with `retune`, keeping its
//! history, so that reloading a configuration neither forgets an outage nor hands out a fresh
//! allowance. Retuning to the policy a piece already has changes nothing.
//!
//! | method | keeps |
//! | --- | --- |
//! | [`SreBreaker::retune`] | the window's outcomes (moved into one bucket when the bucket count or width changes) and the probe's clock |
//! | [`Shedder::retune`] | the calls in flight, their moving average, the heat, and the windows as far as the bucket width allows |
//! | [`Bucket::retune`] | the tokens, refilled to `now` at the old rate, capped at the new burst |
//! | [`Sliding::retune`] | the events inside the window, the newest `quota` of them |
//! | [`Period::retune`], [`SharedPeriod::retune`] | the open period's start and its count |
//! | [`Gate::retune`], [`SharedGate::retune`] | everyone inside: a lower limit admits nobody until enough leave |
//! | [`Budget::retune`], [`SharedBudget::retune`] | the tokens, capped at the new maximum |
//! | [`Ward::retune`] | the breaker's window, the bucket's tokens, the failures in a row and the wait in force, and a gate's or shedder's holders when the kind stays |
//! | [`Limiter::retune`] | the calls in flight, the limit reached (held to the new bounds), what the algorithm remembers, the open sampling window and the floor |
//!
//! [`SreBreaker::retune`]: crate::SreBreaker::retune
//! [`Shedder::retune`]: crate::Shedder::retune
//! [`Bucket::retune`]: crate::Bucket::retune
//! [`Sliding::retune`]: crate::Sliding::retune
//! [`Period::retune`]: crate::Period::retune
//! [`SharedPeriod::retune`]: crate::SharedPeriod::retune
//! [`Gate::retune`]: crate::Gate::retune
//! [`SharedGate::retune`]: crate::SharedGate::retune
//! [`Budget::retune`]: crate::Budget::retune
//! [`SharedBudget::retune`]: crate::SharedBudget::retune
//! [`Ward::retune`]: crate::Ward::retune
//! [`Limiter::retune`]: crate::Limiter::retune
