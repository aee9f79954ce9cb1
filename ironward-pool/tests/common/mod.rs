//! What the pool tests share: a redis-server of their own, and the outage drill.

pub mod drill;
pub mod server;
