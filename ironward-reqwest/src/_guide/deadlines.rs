//! Deadlines: each attempt under a timeout within the call's time budget.
//!
//! Each attempt runs inside `tokio::time::timeout` for what is left of the time budget (or the
//! [attempt timeout](crate::RetryMiddleware::with_attempt_timeout), when shorter), so a call never
//! ends later than its `total_budget`, even on a reqwest client with no timeout of its own. An
//! attempt the budget cuts short ends the call with a [`GaveUp`] whose stop is
//! `Stop::Decided(StopReason::BudgetExhausted)` and that has no source error. On a client
//! without a timeout, set an attempt timeout, so that one hung attempt does not eat the whole
//! budget and leave no time to retry.
//!
//! [`GaveUp`]: crate::GaveUp
