//! Properties of `bucket`.
