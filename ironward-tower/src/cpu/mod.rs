//! The real CPU reading: go-zero's sampler, on a thread of its own.
//!
//! [`CpuSampler`] reads the process's cgroup (v2 or v1) and `/proc/stat` every 250 ms on a
//! plain `std::thread`, folds each reading into a truncating moving average, and publishes it
//! in an atomic that any number of [`ShedLayer`](crate::ShedLayer)s read for the price of a
//! load. How one reading is taken is in `read.rs`, as pure functions of the files' contents;
//! the reference is go-zero's `core/stat/usage.go` (the sampling loop and the average) with
//! `core/stat/internal/cpu_linux.go` and `cgroup_linux.go` (the reading).
//!
//! # Examples
//!
//! ```
//! use ironward::SHED;
//! use ironward_tower::{Cpu, CpuSampler, ShedLayer};
//!
//! let sampler = CpuSampler::new();
//! let api = ShedLayer::new(SHED, Cpu::from(&sampler));
//! let admin = ShedLayer::new(SHED, Cpu::from(&sampler));
//! assert!(sampler.read() <= 1000);
//! # drop((api, admin));
//! ```

mod read;

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::Cpu;
use read::{Files, Probe};

/// The process's CPU use, in thousandths of what its cgroup may use, sampled every 250 ms in
/// the background: the reading go-zero's shedder runs on.
///
/// Every [`INTERVAL`](Self::INTERVAL) a background thread takes the CPU time the cgroup used
/// since the last sample over the host's CPU time in the same stretch, scaled by the cgroup's
/// cores and divided by its limit (its CPU quota when that is lower than its cores), capped at
/// 1000 ‰, and folds it into `cpu = trunc(0.95·prev + 0.05·current)`, which weighs roughly the
/// last five seconds. It reads cgroup v2 (`cpu.stat`'s `usage_usec`, `cpu.max`,
/// `cpuset.cpus.effective`) or v1 (`cpuacct.usage`, `cpu.cfs_quota_us` over
/// `cpu.cfs_period_us`, `cpuset.cpus`) under `/sys/fs/cgroup`, and `/proc/stat`, as go-zero's
/// `core/stat` does; see SPEC.md, "CPU reading".
///
/// Any read error gives 0, as in go-zero: on a system without these files (not Linux, or a
/// sandbox without them) the reading stays 0 and a shedder never sheds for heat. The first
/// reading is 0 and climbs over the following seconds, so a freshly started server does not
/// shed on its first samples.
///
/// [`read`](Self::read) is one atomic load. `Clone` shares the sampler, and so does
/// `Cpu::from(&sampler)`, so one sampler serves every layer of a process. The thread needs no
/// async runtime, and stops within one interval once the last sampler and the last [`Cpu`]
/// made from it have been dropped.
///
/// # Examples
///
/// ```
/// use ironward_tower::{Cpu, CpuSampler};
///
/// let sampler = CpuSampler::new();
/// let cpu = Cpu::from(&sampler);
/// assert!(cpu.read() <= 1000);
/// assert_eq!(CpuSampler::INTERVAL.as_millis(), 250);
/// ```
#[derive(Clone)]
pub struct CpuSampler {
    reading: Arc<AtomicU32>,
}

impl CpuSampler {
    /// How often the background thread samples (go-zero's `cpuRefreshInterval`).
    pub const INTERVAL: Duration = Duration::from_millis(250);

    /// Starts sampling on a background thread; the reading is 0 until the first sample. If the
    /// thread cannot be started, the reading stays 0.
    pub fn new() -> Self {
        Self::start(Self::INTERVAL, || {
            let mut probe = Probe::open(Files::system());
            move || probe.as_mut().map_or(0, Probe::current)
        })
        .0
    }

    /// The moving average of the CPU readings, in thousandths (0 to 1000).
    pub fn read(&self) -> u32 {
        self.reading.load(Ordering::Relaxed)
    }

    /// Samples what `open`'s function returns every `interval`, on a thread that stops once
    /// every handle to the reading is gone; the thread's handle, if it started.
    fn start<O, R>(interval: Duration, open: O) -> (Self, Option<JoinHandle<()>>)
    where
        O: FnOnce() -> R + Send + 'static,
        R: FnMut() -> u32,
    {
        let reading = Arc::new(AtomicU32::new(0));
        let weak = Arc::downgrade(&reading);
        let thread = thread::Builder::new()
            .name("ironward-cpu".into())
            .spawn(move || sample(&weak, interval, open()))
            .ok();
        (Self { reading }, thread)
    }
}

/// The sampling loop: sleep, stop if nobody reads any more, fold a reading into the average.
fn sample(reading: &Weak<AtomicU32>, interval: Duration, mut current: impl FnMut() -> u32) {
    loop {
        thread::sleep(interval);
        let Some(reading) = reading.upgrade() else {
            return;
        };
        let next = average(reading.load(Ordering::Relaxed), current());
        reading.store(next, Ordering::Relaxed);
    }
}

/// go-zero's moving average (`core/stat/usage.go`): `trunc(0.95·prev + 0.05·current)`, capped at
/// 1000. The weights are the literals, as Go's untyped constant `1 - beta` is exactly 0.05.
fn average(prev: u32, current: u32) -> u32 {
    let next = f64::from(prev) * 0.95 + f64::from(current.min(1000)) * 0.05;
    (next as u32).min(1000)
}

impl Default for CpuSampler {
    /// [`CpuSampler::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CpuSampler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CpuSampler").field(&self.read()).finish()
    }
}

impl From<&CpuSampler> for Cpu {
    /// A [`Cpu`] source that reads `sampler`, and keeps it sampling while it lives.
    fn from(sampler: &CpuSampler) -> Self {
        let reading = Arc::clone(&sampler.reading);
        Cpu::from_fn(move || reading.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// Polls `done` every few milliseconds until it holds or `limit` passes; whether it held.
    fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if done() {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        done()
    }

    #[test]
    fn the_average_truncates_as_go_zeros_does() {
        // core/stat/usage.go: int64(float64(prev)*0.95 + float64(cur)*0.05).
        let mut cpu = 0;
        let steps: Vec<u32> = (0..6)
            .map(|_| {
                cpu = average(cpu, 1000);
                cpu
            })
            .collect();
        assert_eq!(steps, [50, 97, 142, 184, 224, 262]);
        // Truncation stalls a constant 1000 ‰ at 981, and a reading under 20 ‰ from 0 at 0.
        assert_eq!((0..400).fold(0, |cpu, _| average(cpu, 1000)), 981);
        assert_eq!(average(0, 19), 0);
        assert_eq!(average(500, 300), 490);
        assert_eq!(average(1000, u32::MAX), 1000);
    }

    #[test]
    fn a_scripted_sampler_folds_its_readings_into_the_average() {
        let (sampler, thread) = CpuSampler::start(Duration::from_millis(1), || || 1000);
        let cpu = Cpu::from(&sampler);
        assert!(
            within(Duration::from_secs(10), || sampler.read() == 981),
            "reading {}",
            sampler.read()
        );
        // One sampler, read through a `Cpu` and a clone alike.
        assert_eq!(cpu.read(), 981);
        assert_eq!(sampler.clone().read(), 981);
        drop((sampler, cpu));
        let thread = thread.expect("sampling thread");
        assert!(within(Duration::from_secs(5), || thread.is_finished()));
    }

    #[test]
    fn the_sampling_thread_stops_when_the_last_handle_is_dropped() {
        let (sampler, thread) = CpuSampler::start(Duration::from_millis(10), || || 500);
        let thread = thread.expect("sampling thread");
        let cpu = Cpu::from(&sampler);
        drop(sampler);
        // A `Cpu` made from the sampler is a handle too: the thread keeps sampling for it.
        thread::sleep(Duration::from_millis(50));
        assert!(!thread.is_finished());
        assert!(within(Duration::from_secs(10), || cpu.read() > 0));
        drop(cpu);
        assert!(within(Duration::from_secs(5), || thread.is_finished()));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_real_sampler_reads_this_machine_within_a_second() {
        let start = Instant::now();
        let sampler = CpuSampler::new();
        // Keep a core busy so that the reading climbs off 0 (under 20 ‰ it truncates to 0).
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinner = {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        // Four samples fit in a second; the bound is wider for a loaded machine.
        let read = within(Duration::from_secs(3), || sampler.read() > 0);
        let elapsed = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        spinner.join().expect("spinner");
        assert!(read, "no reading after {elapsed:?}");
        assert!(sampler.read() <= 1000);
        eprintln!("first reading {} ‰ after {elapsed:?}", sampler.read());
    }
}
