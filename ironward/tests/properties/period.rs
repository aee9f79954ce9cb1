//! Properties of `period`.
