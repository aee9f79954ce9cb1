//! The CPU reading the shedder is fed at the edge; the clock and the dice come from
//! `ironward-tokio`, which every edge shares.
//!
//! The `ironward` core reads none of these itself. Each layer here owns one value of each kind
//! it needs and hands their readings to the core on every request. The real sources are the
//! defaults; the others exist so that a test or a simulation can script what a layer sees.
//! Each is a cheap `Clone` (an `Arc` inside): clones read the same source.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A CPU reading, in thousandths (0 to 1000), for the shedder.
///
/// The real one is a [`CpuSampler`](crate::CpuSampler)'s (`Cpu::from(&sampler)`); for tests
/// there are [`Cpu::fixed`] and [`Cpu::scripted`], whose reading the test sets as it goes.
///
/// # Examples
///
/// ```
/// use ironward_tower::Cpu;
///
/// let (cpu, dial) = Cpu::scripted(100);
/// assert_eq!(cpu.read(), 100);
/// dial.set(950);
/// assert_eq!(cpu.read(), 950);
/// assert_eq!(Cpu::fixed(300).read(), 300);
/// ```
#[derive(Clone)]
pub struct Cpu(Arc<dyn Fn() -> u32 + Send + Sync>);

impl Cpu {
    /// A reading that never changes.
    pub fn fixed(reading: u32) -> Self {
        Self(Arc::new(move || reading))
    }

    /// A reading the returned [`CpuDial`] sets, starting at `reading`.
    pub fn scripted(reading: u32) -> (Self, CpuDial) {
        let dial = CpuDial(Arc::new(AtomicU32::new(reading)));
        let shared = Arc::clone(&dial.0);
        (Self(Arc::new(move || shared.load(Ordering::Relaxed))), dial)
    }

    /// A reading taken from whatever `read` returns.
    pub fn from_fn(read: impl Fn() -> u32 + Send + Sync + 'static) -> Self {
        Self(Arc::new(read))
    }

    /// The current reading, in thousandths.
    pub fn read(&self) -> u32 {
        (self.0)()
    }
}

/// Names the type only: reading a [`Cpu`] calls its source (a closure, or a sampler's
/// reading), which formatting must not do.
impl fmt::Debug for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cpu")
    }
}

/// Sets the reading of a [`Cpu::scripted`] source.
#[derive(Debug, Clone)]
pub struct CpuDial(Arc<AtomicU32>);

impl CpuDial {
    /// Makes the source read `reading` thousandths from now on.
    pub fn set(&self, reading: u32) {
        self.0.store(reading, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_reads_the_source() {
        let cpu = Cpu::from_fn(|| panic!("Debug must not read the CPU"));
        assert_eq!(format!("{cpu:?}"), "Cpu");
    }
}
