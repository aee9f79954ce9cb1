//! The CPU reading the shedder runs on: go-zero's cgroup sampler, on a thread of its own.
//!
//! [`CpuSampler`] reads how busy the cgroup this process runs in is, against the CPU that
//! cgroup may use, every 250 ms on a plain `std::thread`; folds each reading into a truncating
//! moving average; and publishes it in an atomic that any number of
//! [`ShedLayer`](crate::ShedLayer)s read for the price of a load. [`Cpu`] is the source a
//! layer holds: a sampler's reading (`Cpu::from(&sampler)`), or one a test sets
//! ([`Cpu::fixed`], [`Cpu::scripted`] with its [`CpuDial`]). The reference is go-zero's
//! `core/stat/usage.go` (the sampling loop and the average) with
//! `core/stat/internal/cpu_linux.go` and `cgroup_linux.go` (the reading).
//!
//! # What it measures
//!
//! Not this process's CPU use, but its cgroup's: every process in the cgroup counts. Which
//! cgroup that is depends on where the process runs:
//!
//! - **In a container** (Docker, Kubernetes, anything that gives the container its own
//!   cgroup namespace or mounts its cgroup at `/sys/fs/cgroup`), it is the container's: the
//!   CPU time all of the container's processes used, over the CPU its quota allows (or over
//!   the cores of its cpuset, when it has no quota or a larger one).
//! - **Straight on a host**, `/sys/fs/cgroup` is the root cgroup, which has no quota: the
//!   reading is the whole host's CPU use over all its cores, whatever this process's own
//!   share of it. A service in a systemd slice is read the same way, not by its slice.
//! - **Anywhere the files cannot be read** (not Linux, a sandbox without them), it is 0, as
//!   in go-zero, and a shedder then never sheds for heat.
//!
//! One reading, in thousandths, is the CPU time the cgroup used since the last one, over the
//! CPU time the host had in the same stretch (all its CPUs, busy or idle, from `/proc/stat`,
//! which a container sees unchanged), scaled by the cgroup's cores and divided by its limit
//! in cores, truncated and capped at 1000:
//!
//! ```text
//! reading = min(1000, cgroup Δ · cores · 1000 / (host Δ · limit))
//! limit   = min(quota, cores)      (cores, without a quota)
//! ```
//!
//! The host's time counts every host CPU, so a cgroup whose cpuset holds only some of them
//! reads low by that fraction, as go-zero's does: a cpuset of 2 of the host's 8 CPUs, both
//! busy, with no quota, reads 250 ‰.
//!
//! | what | cgroup v2 (`/sys/fs/cgroup/…`) | cgroup v1 (`/sys/fs/cgroup/…`) |
//! | --- | --- | --- |
//! | which | a `cgroup.controllers` file at the root | anything else |
//! | CPU time used | `cpu.stat`, `usage_usec` | `cpuacct/cpuacct.usage` (ns) |
//! | quota | `cpu.max`: `$QUOTA $PERIOD`, or `max $PERIOD` for none | `cpu/cpu.cfs_quota_us` (−1 for none) ÷ `cpu/cpu.cfs_period_us` |
//! | cores | `cpuset.cpus.effective` | `cpuset/cpuset.cpus` |
//!
//! The host's CPU time is the sum of the first seven fields of the `cpu` line of `/proc/stat`
//! (user, nice, system, idle, iowait, irq, softirq), in ticks of 1/100 s. The cores and the
//! quota are read once, when the sampler starts; a quota that cannot be read is no quota, as
//! in go-zero. A cpuset without cores, or a counter that went backwards, reads 0 rather than
//! dividing by zero or wrapping around as go-zero's arithmetic would.
//!
//! # Examples
//!
//! ```
//! use ironward::SHED;
//! use ironward_tower::cpu::{Cpu, CpuSampler};
//! use ironward_tower::shed::ShedLayer;
//!
//! // One sampler serves every shedder of the process.
//! let sampler = CpuSampler::new();
//! let api = ShedLayer::new(SHED, Cpu::from(&sampler));
//! let admin = ShedLayer::new(SHED, Cpu::from(&sampler));
//! assert!(sampler.read() <= 1000);
//! assert_eq!((api.flying(), admin.flying()), (0, 0));
//!
//! // A test sets the reading itself.
//! let (cpu, dial) = Cpu::scripted(100);
//! dial.set(950);
//! assert_eq!(cpu.read(), 950);
//! ```

mod read;

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use read::{Files, Probe};

pub use crate::source::{Cpu, CpuDial};

/// The CPU use of the cgroup this process runs in (its container's, or the whole host's
/// outside a container), in thousandths of what the cgroup may use, sampled every 250 ms in
/// the background: the reading go-zero's shedder runs on.
///
/// Every [`INTERVAL`](Self::INTERVAL) a background thread takes one reading (the [module
/// docs](crate::cpu) say what it measures, and how) and folds it into
/// `cpu = trunc(0.95·prev + 0.05·current)`, which weighs roughly the last five seconds, as
/// go-zero's `core/stat/usage.go` does. The first reading is 0 and climbs over the following
/// seconds, so a freshly started server does not shed on its first samples. Any read error
/// gives 0, as in go-zero.
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
