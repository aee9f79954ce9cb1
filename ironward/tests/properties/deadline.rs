//! Properties of `deadline`.
