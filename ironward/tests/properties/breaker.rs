//! Properties of `breaker`.
