//! The one way the services lock the core value their clones share: `ironward-tokio`'s
//! poison-tolerant lock, which every edge uses.

pub(crate) use ironward_tokio::lock;
