//! One CPU reading, taken the way go-zero takes it (`core/stat/internal/cpu_linux.go`,
//! `cgroup_linux.go`).
//!
//! The [module docs](super) give the formula and the files it reads. The parsers here are pure
//! functions of the files' contents; only [`Probe`] touches the file system.
//!
//! Where this differs from go-zero, which gives the same readings on a sound system:
//! - v2 is recognised by a `cgroup.controllers` file at the root of `/sys/fs/cgroup`, where
//!   go-zero asks `statfs` for the file system's magic number (which needs `unsafe` here).
//! - v1 controllers are read at `/sys/fs/cgroup/<controller>`, the paths go-zero builds from
//!   the controller names in `/proc/self/cgroup`, without reading that file.
//! - No cores (an empty cpuset) is a read error, and so is a counter that went backwards,
//!   where go-zero's arithmetic divides by zero or wraps around.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

/// Nanoseconds in a tick of `/proc/stat` (`USER_HZ` is 100 on Linux, as go-zero assumes).
const TICK_NANOS: u64 = 10_000_000;

/// The most CPUs a cpuset list may name; a larger number is read as a malformed file.
const MAX_CPUS: u64 = 1 << 16;

/// Where the readings come from: the real files, or a copy of them in a test.
#[derive(Debug, Clone)]
pub(super) struct Files {
    /// The cgroup file system's root (`/sys/fs/cgroup`).
    pub(super) cgroup: PathBuf,
    /// The kernel's CPU statistics (`/proc/stat`).
    pub(super) proc_stat: PathBuf,
}

impl Files {
    /// The files of the system this runs on.
    pub(super) fn system() -> Self {
        Self {
            cgroup: PathBuf::from("/sys/fs/cgroup"),
            proc_stat: PathBuf::from("/proc/stat"),
        }
    }

    fn read(&self, relative: &str) -> Option<String> {
        fs::read_to_string(self.cgroup.join(relative)).ok()
    }
}

/// The cgroup hierarchy in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// Takes successive readings: each is the CPU used since the one before.
#[derive(Debug)]
pub(super) struct Probe {
    files: Files,
    version: Version,
    cores: u64,
    /// The cores the cgroup may use: its cores, or its quota when that is lower.
    limit: f64,
    /// Cgroup CPU time at the last reading, in nanoseconds.
    used: u64,
    /// Host CPU time at the last reading, in nanoseconds.
    host: u64,
}

impl Probe {
    /// Reads the cores, the quota and the first totals; `None` if any of them cannot be read
    /// (go-zero then reads 0 for good). A quota that cannot be read is no quota, as in go-zero.
    pub(super) fn open(files: Files) -> Option<Self> {
        let version = if files.cgroup.join("cgroup.controllers").is_file() {
            Version::V2
        } else {
            Version::V1
        };
        let (cpuset, quota) = match version {
            Version::V2 => (
                files.read("cpuset.cpus.effective")?,
                files.read("cpu.max").and_then(|max| quota_v2(&max)),
            ),
            Version::V1 => (
                files.read("cpuset/cpuset.cpus")?,
                files
                    .read("cpu/cpu.cfs_quota_us")
                    .zip(files.read("cpu/cpu.cfs_period_us"))
                    .and_then(|(quota, period)| quota_v1(&quota, &period)),
            ),
        };
        let cores = cpu_count(&cpuset).filter(|&cores| cores > 0)?;
        let limit = quota.map_or(cores as f64, |quota| quota.min(cores as f64));
        let mut probe = Self {
            files,
            version,
            cores,
            limit,
            used: 0,
            host: 0,
        };
        probe.host = probe.host_time()?;
        probe.used = probe.cgroup_time()?;
        Some(probe)
    }

    /// The CPU used since the last reading, in ‰ of the cgroup's limit; 0 if a file cannot be
    /// read, in which case the next reading covers both stretches.
    pub(super) fn current(&mut self) -> u32 {
        let Some(used) = self.cgroup_time() else {
            return 0;
        };
        let Some(host) = self.host_time() else {
            return 0;
        };
        let reading = usage(
            used.saturating_sub(self.used),
            host.saturating_sub(self.host),
            self.cores,
            self.limit,
        );
        self.used = used;
        self.host = host;
        reading
    }

    fn cgroup_time(&self) -> Option<u64> {
        match self.version {
            Version::V2 => cgroup_v2_usage(&self.files.read("cpu.stat")?),
            Version::V1 => cgroup_v1_usage(&self.files.read("cpuacct/cpuacct.usage")?),
        }
    }

    fn host_time(&self) -> Option<u64> {
        host_time(&fs::read_to_string(&self.files.proc_stat).ok()?)
    }
}

/// The reading, in ‰, for `used` nanoseconds of cgroup CPU time over `host` nanoseconds of host
/// CPU time, with `cores` cores and a limit of `limit` cores; capped at 1000, and 0 unless both
/// spans are positive (go-zero's `RefreshCpu`).
pub(super) fn usage(used: u64, host: u64, cores: u64, limit: f64) -> u32 {
    if used == 0 || host == 0 {
        return 0;
    }
    let scaled = u128::from(used) * u128::from(cores) * 1000;
    let reading = scaled as f64 / (host as f64 * limit);
    if reading.is_nan() {
        return 0;
    }
    // `as` truncates, as Go's conversion does.
    reading.min(1000.0) as u32
}

/// Host CPU time in nanoseconds, from the contents of `/proc/stat`.
pub(super) fn host_time(proc_stat: &str) -> Option<u64> {
    let line = proc_stat
        .lines()
        .find(|line| line.split_whitespace().next() == Some("cpu"))?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 8 {
        return None;
    }
    let mut ticks = 0u64;
    for field in &fields[1..8] {
        ticks = ticks.saturating_add(count(field)?);
    }
    Some(ticks.saturating_mul(TICK_NANOS))
}

/// Cgroup v1 CPU time in nanoseconds, from the contents of `cpuacct.usage`.
pub(super) fn cgroup_v1_usage(cpuacct_usage: &str) -> Option<u64> {
    count(cpuacct_usage.trim())
}

/// Cgroup v2 CPU time in nanoseconds, from the contents of `cpu.stat` (`usage_usec`). Every
/// line must be a key and a value, as go-zero requires.
pub(super) fn cgroup_v2_usage(cpu_stat: &str) -> Option<u64> {
    let mut usage = None;
    for line in cpu_stat.lines().filter(|line| !line.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
            return None;
        };
        if key == "usage_usec" {
            usage = Some(value);
        }
    }
    Some(count(usage?)?.saturating_mul(1000))
}

/// A cgroup v2 quota in cores, from the contents of `cpu.max`; `None` for `max` (no quota) or a
/// malformed file.
pub(super) fn quota_v2(cpu_max: &str) -> Option<f64> {
    let mut fields = cpu_max.split_whitespace();
    let (Some(quota), Some(period), None) = (fields.next(), fields.next(), fields.next()) else {
        return None;
    };
    if quota == "max" {
        return None;
    }
    cores(quota.parse().ok()?, period.parse().ok()?)
}

/// A cgroup v1 quota in cores, from the contents of `cpu.cfs_quota_us` and
/// `cpu.cfs_period_us`; `None` for −1 (no quota) or malformed files.
pub(super) fn quota_v1(quota_us: &str, period_us: &str) -> Option<f64> {
    cores(quota_us.trim().parse().ok()?, count(period_us.trim())?)
}

/// A quota of `quota` µs every `period` µs, in cores; only a positive quota over a positive
/// period is one.
fn cores(quota: i64, period: u64) -> Option<f64> {
    (quota > 0 && period > 0).then(|| quota as f64 / period as f64)
}

/// How many CPUs a cpuset list such as `0-3,8,10-11` names, each counted once.
pub(super) fn cpu_count(list: &str) -> Option<u64> {
    let list = list.trim();
    if list.is_empty() {
        return Some(0);
    }
    let mut cpus = BTreeSet::new();
    for part in list.split(',') {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (count(low)?, count(high)?),
            None => {
                let cpu = count(part)?;
                (cpu, cpu)
            }
        };
        if high < low || high >= MAX_CPUS {
            return None;
        }
        cpus.extend(low..=high);
    }
    Some(cpus.len() as u64)
}

/// A count as go-zero's `parseUint` reads one: a decimal integer, where a negative number or
/// one out of the 64-bit range reads as 0.
fn count(text: &str) -> Option<u64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    if text.starts_with('-') {
        return Some(0);
    }
    Some(text.parse::<i64>().map_or(0, |value| value as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel 6.x `/proc/stat`, two CPUs, abridged.
    const PROC_STAT: &str = "\
cpu  100351 0 12675 190262 538 0 108 1999 0 0
cpu0 47111 0 6259 98378 146 0 19 1018 0 0
cpu1 53239 0 6416 91884 392 0 89 981 0 0
intr 10424853 0 9 0 0
ctxt 23140985
btime 1718000000
";

    /// A cgroup v2 `cpu.stat`.
    const CPU_STAT: &str = "\
usage_usec 8127436
user_usec 5632841
system_usec 2494595
nr_periods 0
nr_throttled 0
throttled_usec 0
";

    #[test]
    fn host_time_sums_the_first_seven_fields_of_the_cpu_line() {
        // cpu_linux.go systemCpuUsage: fields[1:8], in ticks of 1/100 s, to nanoseconds.
        let ticks = 100_351 + 12_675 + 190_262 + 538 + 108;
        assert_eq!(host_time(PROC_STAT), Some(ticks * 10_000_000));
    }

    #[test]
    fn host_time_refuses_a_short_or_missing_cpu_line() {
        assert_eq!(host_time("cpu  1 2 3 4 5 6\n"), None);
        assert_eq!(host_time("cpu0 1 2 3 4 5 6 7 8\n"), None);
        assert_eq!(host_time(""), None);
        assert_eq!(host_time("cpu  1 2 x 4 5 6 7 8\n"), None);
    }

    #[test]
    fn cgroup_v1_usage_reads_nanoseconds_from_cpuacct_usage() {
        assert_eq!(cgroup_v1_usage("1141391121575\n"), Some(1_141_391_121_575));
        // parseUint: a negative number, or one past the 64-bit range, reads as 0.
        assert_eq!(cgroup_v1_usage("-5\n"), Some(0));
        assert_eq!(cgroup_v1_usage("99999999999999999999\n"), Some(0));
        assert_eq!(cgroup_v1_usage("lots\n"), None);
        assert_eq!(cgroup_v1_usage(""), None);
    }

    #[test]
    fn cgroup_v2_usage_reads_usage_usec_in_nanoseconds() {
        assert_eq!(cgroup_v2_usage(CPU_STAT), Some(8_127_436_000));
        assert_eq!(cgroup_v2_usage("user_usec 5\n"), None);
        // currentCgroupV2: every line must be a key and a value.
        assert_eq!(cgroup_v2_usage("usage_usec 5\nnr_periods\n"), None);
        assert_eq!(cgroup_v2_usage("usage_usec five\n"), None);
    }

    #[test]
    fn quota_v2_reads_cpu_max_and_max_is_no_quota() {
        assert_eq!(quota_v2("max 100000\n"), None);
        assert_eq!(quota_v2("50000 100000\n"), Some(0.5));
        assert_eq!(quota_v2("150000 100000\n"), Some(1.5));
        assert_eq!(quota_v2("50000\n"), None);
        assert_eq!(quota_v2("50000 100000 7\n"), None);
        assert_eq!(quota_v2("half 100000\n"), None);
        assert_eq!(quota_v2("50000 0\n"), None);
    }

    #[test]
    fn quota_v1_reads_quota_over_period_and_minus_one_is_no_quota() {
        assert_eq!(quota_v1("-1\n", "100000\n"), None);
        assert_eq!(quota_v1("200000\n", "100000\n"), Some(2.0));
        assert_eq!(quota_v1("25000\n", "100000\n"), Some(0.25));
        assert_eq!(quota_v1("25000\n", "0\n"), None);
        assert_eq!(quota_v1("quarter\n", "100000\n"), None);
    }

    #[test]
    fn cpu_count_counts_each_cpu_of_a_cpuset_list_once() {
        // cgroup_linux_test.go TestParseUints, as counts.
        assert_eq!(cpu_count("0-1\n"), Some(2));
        assert_eq!(cpu_count("1,2,3"), Some(3));
        assert_eq!(cpu_count("1-3,5,7-9"), Some(7));
        assert_eq!(cpu_count("0-3,2-5"), Some(6));
        assert_eq!(cpu_count("\n"), Some(0));
        assert_eq!(cpu_count("foo"), None);
        assert_eq!(cpu_count("1-bar"), None);
        assert_eq!(cpu_count("3-1"), None);
        assert_eq!(cpu_count("0-4294967295"), None);
    }

    #[test]
    fn usage_scales_by_cores_over_the_limit_and_caps_at_1000() {
        // cpu_linux.go RefreshCpu: cpuDelta·cores·1000 / (systemDelta·limit).
        let second = 1_000_000_000;
        // Host: 2 cores for 1 s. The cgroup used half a core: 25 % of the host, 250 ‰.
        assert_eq!(usage(second / 2, 2 * second, 2, 2.0), 250);
        // The same with a quota of one core: half the quota, 500 ‰.
        assert_eq!(usage(second / 2, 2 * second, 2, 1.0), 500);
        // Over a quota of a quarter core: capped.
        assert_eq!(usage(second / 2, 2 * second, 2, 0.25), 1000);
        // Truncated, not rounded.
        assert_eq!(usage(2_999_999, 10_000_000, 1, 1.0), 299);
        // No time on either side: 0.
        assert_eq!(usage(0, second, 2, 2.0), 0);
        assert_eq!(usage(second, 0, 2, 2.0), 0);
        assert_eq!(usage(second, second, 2, 0.0), 1000);
        assert_eq!(usage(second, second, 0, 0.0), 0);
    }

    /// A cgroup file system and `/proc/stat` in a directory of their own.
    struct Fixture {
        root: PathBuf,
    }

    impl Fixture {
        fn new(name: &str) -> Self {
            let root =
                std::env::temp_dir().join(format!("ironward-cpu-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&root);
            fs::create_dir_all(&root).expect("fixture directory");
            Self { root }
        }

        fn write(&self, path: &str, contents: &str) {
            let path = self.root.join("cgroup").join(path);
            fs::create_dir_all(path.parent().expect("parent")).expect("fixture directory");
            fs::write(path, contents).expect("fixture file");
        }

        fn stat(&self, ticks: u64) {
            fs::write(
                self.root.join("stat"),
                format!("cpu  {ticks} 0 0 0 0 0 0 0 0 0\n"),
            )
            .expect("fixture file");
        }

        fn files(&self) -> Files {
            Files {
                cgroup: self.root.join("cgroup"),
                proc_stat: self.root.join("stat"),
            }
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.root);
        }
    }

    #[test]
    fn a_probe_reads_a_cgroup_v2_hierarchy_against_its_quota() {
        let fixture = Fixture::new("v2");
        fixture.write("cgroup.controllers", "cpuset cpu io memory pids\n");
        fixture.write("cpuset.cpus.effective", "0-3\n");
        fixture.write("cpu.max", "100000 100000\n");
        fixture.write("cpu.stat", "usage_usec 1000000\nuser_usec 1000000\n");
        fixture.stat(1_000);
        let mut probe = Probe::open(fixture.files()).expect("v2 fixture");
        // The host ran 4 cores for 1 s (400 ticks); the cgroup used 0.5 s of its one core.
        fixture.write("cpu.stat", "usage_usec 1500000\nuser_usec 1500000\n");
        fixture.stat(1_400);
        assert_eq!(probe.current(), 500);
        // Without a quota the limit is the 4 cores: 125 ‰.
        fixture.write("cpu.max", "max 100000\n");
        let mut probe = Probe::open(fixture.files()).expect("v2 fixture");
        fixture.write("cpu.stat", "usage_usec 2000000\nuser_usec 2000000\n");
        fixture.stat(1_800);
        assert_eq!(probe.current(), 125);
    }

    #[test]
    fn a_probe_reads_a_cgroup_v1_hierarchy_against_its_quota() {
        let fixture = Fixture::new("v1");
        fixture.write("cpuset/cpuset.cpus", "0-1\n");
        fixture.write("cpu/cpu.cfs_quota_us", "50000\n");
        fixture.write("cpu/cpu.cfs_period_us", "100000\n");
        fixture.write("cpuacct/cpuacct.usage", "0\n");
        fixture.stat(0);
        let mut probe = Probe::open(fixture.files()).expect("v1 fixture");
        // The host ran 2 cores for 1 s; the cgroup used 0.25 s against half a core.
        fixture.write("cpuacct/cpuacct.usage", "250000000\n");
        fixture.stat(200);
        assert_eq!(probe.current(), 500);
        // Nothing moved: 0, as go-zero reads an idle stretch.
        assert_eq!(probe.current(), 0);
    }

    #[test]
    fn a_probe_reads_0_while_a_file_is_missing_or_malformed() {
        let fixture = Fixture::new("broken");
        fixture.write("cpuset/cpuset.cpus", "0-1\n");
        fixture.write("cpuacct/cpuacct.usage", "0\n");
        fixture.stat(0);
        let mut probe = Probe::open(fixture.files()).expect("v1 fixture without a quota");
        fixture.write("cpuacct/cpuacct.usage", "garbage\n");
        fixture.stat(200);
        assert_eq!(probe.current(), 0);
        // Once the file reads again, the reading covers the whole stretch since the last one.
        fixture.write("cpuacct/cpuacct.usage", "1000000000\n");
        fixture.stat(200);
        assert_eq!(probe.current(), 500);
        // A counter that went backwards reads 0 rather than wrapping around.
        fixture.write("cpuacct/cpuacct.usage", "5\n");
        fixture.stat(400);
        assert_eq!(probe.current(), 0);
    }

    #[test]
    fn a_probe_does_not_open_without_cores_or_totals() {
        let fixture = Fixture::new("empty");
        assert!(Probe::open(fixture.files()).is_none());
        fixture.write("cpuset/cpuset.cpus", "\n");
        fixture.write("cpuacct/cpuacct.usage", "0\n");
        fixture.stat(0);
        assert!(Probe::open(fixture.files()).is_none(), "no cores");
        fixture.write("cpuset/cpuset.cpus", "0\n");
        fs::write(fixture.root.join("stat"), "cpu 1 2\n").expect("fixture file");
        assert!(
            Probe::open(fixture.files()).is_none(),
            "malformed /proc/stat"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_probe_opens_on_this_linux_machine() {
        let mut probe = Probe::open(Files::system()).expect("cgroup and /proc/stat readable");
        assert!(probe.current() <= 1000);
    }
}
