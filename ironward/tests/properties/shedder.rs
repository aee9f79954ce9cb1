//! Properties of `shedder`.
