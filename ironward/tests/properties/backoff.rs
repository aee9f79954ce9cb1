//! Properties of `backoff`.
