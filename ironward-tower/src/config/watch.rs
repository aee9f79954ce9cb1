//! [`Watch`]: a configuration file read again on an interval, and reloaded when it changes.

use std::path::PathBuf;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use super::file::Config;
use super::live::Protection;

/// The shortest interval a watch reads its file on: a shorter one is read as this.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// A file watched by [`Protection::watch`]: read every interval, and reloaded when its
/// content changes. Dropping it stops the watch.
#[derive(Debug)]
#[must_use = "the watch stops when this is dropped"]
pub struct Watch {
    task: JoinHandle<()>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the last read of the file found.
#[derive(PartialEq)]
enum Seen {
    Nothing,
    Text(Vec<u8>),
    Failed(std::io::ErrorKind),
}

impl Protection {
    /// Reads the TOML file at `path` every `interval` (at least [`MIN_INTERVAL`]) on a tokio
    /// task, and reloads it ([`reload`](Self::reload)) when its content changed and says
    /// something else than the configuration in force. A reload refused, or a file that
    /// cannot be read, is logged (and counted as refused) once, until the file changes again;
    /// the configuration in force stays meanwhile. No file-system notifications: polling
    /// the content is portable, and sees a file replaced by a rename as well as one written
    /// in place.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, as `tokio::spawn` does.
    pub fn watch(&self, path: impl Into<PathBuf>, interval: Duration) -> Watch {
        let path = path.into();
        let protection = self.clone();
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval.max(MIN_INTERVAL));
            ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
            let mut seen = Seen::Nothing;
            loop {
                ticks.tick().await;
                let now = match std::fs::read(&path) {
                    Ok(text) => Seen::Text(text),
                    Err(err) => Seen::Failed(err.kind()),
                };
                if now == seen {
                    continue;
                }
                // A reload's errors are counted and logged by `reload_*` itself.
                let _ = match &now {
                    Seen::Text(text) => match std::str::from_utf8(text) {
                        Ok(text) => match Config::from_toml(text) {
                            Ok(config) if config == *protection.current() => Ok(()),
                            Ok(config) => protection.reload(config),
                            Err(_) => protection.reload_file(&path),
                        },
                        Err(_) => protection.reload_file(&path),
                    },
                    Seen::Failed(_) | Seen::Nothing => protection.reload_file(&path),
                };
                seen = now;
            }
        });
        Watch { task }
    }
}
