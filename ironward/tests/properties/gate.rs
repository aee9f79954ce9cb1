//! Properties of `gate`.
