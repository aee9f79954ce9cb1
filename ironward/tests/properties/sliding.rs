//! Properties of `sliding`.
