//! Shared state: one core value per layer, shared by every service and clone it makes.
//!
//! A layer holds one core value behind an `Arc`: every service it makes, on every route and
//! connection, and every clone of those, share it, so cloning never multiplies capacity and a
//! limit holds across connections. The lock is a `std::sync::Mutex` held only for the core's
//! decision, never across an await. The gate takes none: its count and limit are one atomic
//! word ([`ironward::SharedGate`]), entered and left by a compare-and-swap.
