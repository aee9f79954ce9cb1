//! Shadow mode: a layer that decides as it would, but lets every call through.
//!
//! The breaker, the shedder, the rate limit, the gate and the deadline each take
//! `with_mode(Mode::Shadow)` (and report it with `mode()`): the layer decides exactly as it
//! would enforcing, state changes and all, but lets a call it would refuse through to the
//! inner service, reporting it as `shadowed`, so that a tighter policy can be tried on real
//! traffic before it refuses anyone. A shadow [`DeadlineLayer`] cuts no call: one that runs
//! past its deadline finishes with its own response and is reported when it ends. [`Mode`]
//! says what each layer does with a shadowed call, and where the would-be refusal can be
//! read.
//!
//! [`DeadlineLayer`]: crate::DeadlineLayer
//! [`Mode`]: crate::Mode
