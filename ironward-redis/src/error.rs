//! [`StoreError`]: why a call was refused without an answer.

use std::fmt;

/// Why a limiter's call has no answer. Either way nothing was admitted: treat it as a
/// refusal.
///
/// A Redis that fails outright is not an error here: the limiter fails over and answers
/// from its local fallback (see [`Store`](crate::Store)). These are the cases where it
/// must not: a slow Redis, a reply no script gives, and an error about one key's data,
/// which says nothing of the server's health.
///
/// # Examples
///
/// ```
/// use ironward_redis::StoreError;
///
/// assert_eq!(StoreError::Timeout.to_string(), "redis did not answer in time");
/// let key = StoreError::Key { script: "sliding", code: "WRONGTYPE".into(), message: "…".into() };
/// assert_eq!(key.to_string(), "redis refused the sliding script on this key: WRONGTYPE …");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Redis did not answer within [`Options::timeout`](crate::Options::timeout). The
    /// script may still have run, so the event may have been counted; the store stays on
    /// Redis, as go-zero's limiters refuse on a deadline rather than fail over.
    Timeout,
    /// Redis answered with a reply the script never gives: another program's data under
    /// the limiter's keys, or a script of another version. Not guessed at.
    Reply {
        /// The script's file under `lua/`, without `.lua`.
        script: &'static str,
        /// The reply, as its debug form, cut to 200 characters.
        reply: String,
    },
    /// Redis refused the script for a reason that belongs to the key, not to the server:
    /// `WRONGTYPE` (another program's data under the limiter's keys), `OOM` (the server is
    /// at `maxmemory` under `noeviction` and refuses writes), `NOPERM` (the ACL denies the
    /// keys). Failing over would not help (the next `PING` succeeds and the same call fails
    /// again) and would hand every other key of the store to the fallback, so this call
    /// alone is refused and the store stays on Redis. Nothing was counted.
    Key {
        /// The script's file under `lua/`, without `.lua`.
        script: &'static str,
        /// Redis's error code: `WRONGTYPE`, `OOM` or `NOPERM`.
        code: String,
        /// Redis's error, as its text, cut to 200 characters.
        message: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("redis did not answer in time"),
            Self::Reply { script, reply } => {
                write!(f, "unexpected reply from the {script} script: {reply}")
            }
            Self::Key {
                script,
                code,
                message,
            } => write!(
                f,
                "redis refused the {script} script on this key: {code} {message}"
            ),
        }
    }
}

impl std::error::Error for StoreError {}
