//! Resilience without I/O.
//!
//! (crate docs are written last; see README.md)

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

mod clock;
mod float;

// -- window and breaker pieces (lead) --

// -- limiters, gate, backoff, deadline (helper B) --

pub mod http_retry;
