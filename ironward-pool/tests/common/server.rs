//! A `redis-server` of its own on a free loopback port, which can be killed (SIGKILL) and
//! started again on the same port, and is killed when dropped.
//!
//! `redis-server` has no `--port 0`: a free port is found by binding 127.0.0.1:0 and letting
//! it go, and the server is started there with no persistence in a directory of its own. If
//! another process takes the port in between, the server exits and another port is tried.
//! Shared by the outage test and the example (`#[path]`), so both start the server alike.

#![allow(dead_code, unreachable_pub)]

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first `PING`.
const READY: Duration = Duration::from_secs(20);

/// A running `redis-server`, killed (and its directory removed) on drop.
pub struct Server {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// A server on a free loopback port, or why none could be started (`redis-server` not on
    /// the `PATH`, or no port free after 20 tries).
    pub fn start() -> io::Result<Self> {
        for _ in 0..20 {
            let port = free_port()?;
            if let Some(server) = Self::start_on(port)? {
                return Ok(server);
            }
        }
        Err(io::Error::other(
            "no redis-server could be started on a free port",
        ))
    }

    /// A server on `port`, `None` if it did not come up there (the port was taken).
    fn start_on(port: u16) -> io::Result<Option<Self>> {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("ironward-pool-{}-{port}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mut server = Self {
            child: None,
            port,
            dir,
        };
        Ok(server.spawn()?.then_some(server))
    }

    /// Starts the server process on the port and waits for its `PONG`: `false` if it exited
    /// or did not answer in time.
    fn spawn(&mut self) -> io::Result<bool> {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--loglevel", "warning", "--logfile", ""])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "redis-server could not be run ({err}): install it (Debian's package \
                         redis-server, which scripts/test installs) and put it on the PATH"
                    ),
                )
            })?;
        self.child = Some(child);
        let deadline = Instant::now() + READY;
        while Instant::now() < deadline {
            if self.exited() {
                return Ok(false);
            }
            if ping(self.port) {
                return Ok(true);
            }
            thread::sleep(Duration::from_millis(10));
        }
        self.kill();
        Ok(false)
    }

    /// The server's URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills the server at once (SIGKILL), as a crash or an OOM kill would, and waits for the
    /// process to end.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, after [`kill`](Server::kill).
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        // The port was ours a moment ago; a few tries cover a slow release.
        for _ in 0..50 {
            if self.spawn()? {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Err(io::Error::other(format!(
            "redis-server did not start again on port {}",
            self.port
        )))
    }

    fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|child| matches!(child.try_wait(), Ok(Some(_))))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on right now.
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Whether a server on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut reply = [0; 7];
    stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}
