//! [`Error`]: why a call was refused without an answer.

use std::fmt;

/// Why a limiter's call has no answer. Either way nothing was admitted: treat it as a
/// refusal.
///
/// A Redis that fails outright is not an error here: the limiter fails over and answers
/// from its local fallback (see [`Store`](crate::Store)). These are the two cases where it
/// must not.
///
/// # Examples
///
/// ```
/// use ironward_redis::Error;
///
/// assert_eq!(Error::Timeout.to_string(), "redis did not answer in time");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("redis did not answer in time"),
            Self::Reply { script, reply } => {
                write!(f, "unexpected reply from the {script} script: {reply}")
            }
        }
    }
}

impl std::error::Error for Error {}
