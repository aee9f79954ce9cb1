//! What an attempt ended with ([`AttemptEnd`], [`Pushback`]) and why a plan stops ([`Halt`]):
//! the words the retry and the hedging plans share.

use core::fmt;
use core::time::Duration;

use super::code::Code;

/// The metadata key a server sets to push back: `grpc-retry-pushback-ms` (gRPC A6, "Pushback").
pub const PUSHBACK: &str = "grpc-retry-pushback-ms";

/// The metadata key a client sets on every attempt after the first: `grpc-previous-rpc-attempts`
/// (gRPC A6), whose value is the number of attempts before it.
pub const PREVIOUS_ATTEMPTS: &str = "grpc-previous-rpc-attempts";

/// What one attempt ended with, as the client saw it.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{AttemptEnd, Code};
///
/// // A trailers-only UNAVAILABLE whose server asks for a 250 ms wait.
/// let outcome = AttemptEnd { code: Code::Unavailable, committed: false, pushback: &["250"] };
/// assert_eq!(AttemptEnd::new(Code::Unavailable), AttemptEnd { pushback: &[], ..outcome });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttemptEnd<'a> {
    /// The status code the attempt ended with ([`Code::Ok`] for a success).
    pub code: Code,
    /// Whether the call was committed to this attempt before it ended: gRPC A6 commits a call
    /// once the response headers arrive (grpc-go retries only a trailers-only response), and a
    /// committed call is never retried.
    pub committed: bool,
    /// The raw values of `grpc-retry-pushback-ms` in the trailers, none when the server set
    /// none (read by [`Pushback::from_values`]). A value that is not UTF-8 is malformed: pass
    /// it as any string that is not a number (`""` will do), and it stops the retries as
    /// grpc-go's reading of it would.
    pub pushback: &'a [&'a str],
}

impl AttemptEnd<'static> {
    /// An uncommitted outcome with this code and no pushback.
    #[must_use]
    pub const fn new(code: Code) -> Self {
        AttemptEnd {
            code,
            committed: false,
            pushback: &[],
        }
    }
}

/// What the server's `grpc-retry-pushback-ms` says.
///
/// gRPC A6: the value is a count of milliseconds to wait before the retry; "if the value for
/// pushback is negative or unparseable, then it will be seen as the server asking the client
/// not to retry at all". The reading is grpc-go's (`stream.go`, `strconv.Atoi`): an optional
/// `+` or `-` and ASCII digits, in the range of an `i64`, with nothing trimmed; two values or
/// more are read as "stop" too.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::grpc::Pushback;
///
/// assert_eq!(Pushback::from_values(&[]), Pushback::Absent);
/// assert_eq!(Pushback::from_values(&["1000"]), Pushback::Wait(Duration::from_secs(1)));
/// assert_eq!(Pushback::from_values(&["-1"]), Pushback::Halt);
/// assert_eq!(Pushback::from_values(&["xxx"]), Pushback::Halt);
/// assert_eq!(Pushback::from_values(&["100", "10"]), Pushback::Halt);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pushback {
    /// No pushback: the policy's backoff applies.
    Absent,
    /// Retry after exactly this long, and start the backoff again from its first step.
    Wait(Duration),
    /// Do not retry (a negative, malformed or repeated value).
    Halt,
}

impl Pushback {
    /// What the raw values of `grpc-retry-pushback-ms` say.
    #[must_use]
    pub fn from_values(values: &[&str]) -> Pushback {
        match values {
            [] => Pushback::Absent,
            [value] => millis(value).map_or(Pushback::Halt, |ms| {
                Pushback::Wait(Duration::from_millis(ms))
            }),
            _ => Pushback::Halt,
        }
    }
}

/// A pushback value's milliseconds, as grpc-go's `strconv.Atoi` reads it, `None` when that
/// fails or gives a negative number.
fn millis(value: &str) -> Option<u64> {
    let (negative, digits) = match value.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    // `Atoi` fails past `i64::MAX` (and past `i64::MIN`, which is negative anyway).
    if n > i64::MAX as u64 {
        return None;
    }
    // "-0" is zero, which is not negative: a wait of nothing.
    if negative && n > 0 { None } else { Some(n) }
}

/// Why a plan sends no more attempts.
///
/// Its [`Display`](fmt::Display) is a short lower-case phrase.
///
/// # Examples
///
/// ```
/// use ironward::grpc::Halt;
///
/// assert_eq!(Halt::Throttled.to_string(), "retries throttled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Halt {
    /// The status code is not one the policy retries (or, for hedging, is fatal).
    NotRetryable,
    /// The policy's attempts (at most 5) are all made.
    AttemptsSpent,
    /// The retry budget is at or below half full (gRPC A6 retry throttling).
    Throttled,
    /// The server's pushback said not to retry.
    Pushback,
    /// The call was committed to an attempt (its response headers arrived, or the plan had
    /// already ended), so no other attempt may be made.
    Committed,
    /// The next attempt would start at or after the call's deadline.
    Deadline,
}

impl fmt::Display for Halt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotRetryable => "status code not retryable",
            Self::AttemptsSpent => "attempts spent",
            Self::Throttled => "retries throttled",
            Self::Pushback => "server pushback said stop",
            Self::Committed => "call committed",
            Self::Deadline => "deadline would pass",
        })
    }
}

impl core::error::Error for Halt {}

#[cfg(test)]
mod tests {
    use super::*;

    // grpc-go `test/retry_test.go`, `TestRetryStreaming`: "Negative server pushback",
    // "Non-numeric server pushback", "Multiple server pushback values" stop; "1s server
    // pushback" waits a second.
    #[test]
    fn reads_pushback_as_grpc_go_does() {
        let ms = Duration::from_millis;
        assert_eq!(Pushback::from_values(&["-1"]), Pushback::Halt);
        assert_eq!(Pushback::from_values(&["xxx"]), Pushback::Halt);
        assert_eq!(Pushback::from_values(&["100", "10"]), Pushback::Halt);
        assert_eq!(Pushback::from_values(&["1000"]), Pushback::Wait(ms(1000)));
        assert_eq!(Pushback::from_values(&["0"]), Pushback::Wait(ms(0)));
        assert_eq!(Pushback::from_values(&["-0"]), Pushback::Wait(ms(0)));
        assert_eq!(Pushback::from_values(&["+5"]), Pushback::Wait(ms(5)));
        assert_eq!(Pushback::from_values(&["007"]), Pushback::Wait(ms(7)));
        let most = "9223372036854775807";
        assert_eq!(
            Pushback::from_values(&[most]),
            Pushback::Wait(ms(i64::MAX as u64))
        );
        for bad in [
            "",
            "+",
            "-",
            " 5",
            "5 ",
            "1.5",
            "1e3",
            "0x10",
            "9223372036854775808",
            "99999999999999999999999",
            "-9223372036854775808",
            "５",
        ] {
            assert_eq!(Pushback::from_values(&[bad]), Pushback::Halt, "{bad:?}");
        }
    }
}
