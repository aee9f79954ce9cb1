//! tower layers for ironward (crate docs are written last).

#![forbid(unsafe_code)]

mod source;

pub use source::{Clock, Cpu, CpuDial, Dice};

// -- breaker, shedder, CPU sampler, classifiers (helper T1) --

// -- rate limits (helper T2) --

// -- gate, deadline, HTTP mapping (helper T3) --
