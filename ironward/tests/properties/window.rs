//! Properties of `window`.
