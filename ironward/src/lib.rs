//! Resilience without I/O.
//!
//! (crate docs are written last; see README.md)

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

mod clock;
mod float;

// -- window and breaker pieces (lead) --
mod breaker;
mod shedder;
mod tally;
mod window;

pub use breaker::{Breaker, Permit, SRE, Sre};
pub use shedder::{SHED, Shed, Shedder, Ticket};
pub use tally::{Outcome, Tally, Total};
pub use window::Window;

// -- limiters, gate, backoff, deadline (helper B) --

pub mod http_retry;
