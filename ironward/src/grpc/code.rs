//! [`Code`], the gRPC status codes, and [`Codes`], a set of them.

use core::fmt;
use core::str::FromStr;

/// A gRPC status code: the outcome an RPC ends with, as the server (or the client library)
/// reports it in `grpc-status`.
///
/// The 17 codes of the gRPC status code table, numbered as on the wire. A retry policy names
/// the codes it retries ([`RetryPolicy::retryable_status_codes`](super::RetryPolicy)) and a
/// hedging policy the codes that do not end the call
/// ([`HedgingPolicy::non_fatal_status_codes`](super::HedgingPolicy)), both by these names.
///
/// [`FromStr`] reads the canonical upper-case names the service config writes (`"UNAVAILABLE"`,
/// `"CANCELLED"`), in any case, since gRPC A6 says a code is "specified in the integer form or
/// the case-insensitive string form". [`Display`](fmt::Display) writes the canonical name.
///
/// # Examples
///
/// ```
/// use ironward::grpc::Code;
///
/// let code: Code = "UNAVAILABLE".parse().unwrap();
/// assert_eq!(code, Code::Unavailable);
/// assert_eq!(code.number(), 14);
/// assert_eq!(Code::from_number(14), Some(Code::Unavailable));
/// assert_eq!(code.to_string(), "UNAVAILABLE");
/// assert!("NOT_A_CODE".parse::<Code>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// 0: not an error; the call succeeded.
    Ok = 0,
    /// 1: the call was cancelled, typically by the caller.
    Cancelled = 1,
    /// 2: an unknown error, such as a status from another address space.
    Unknown = 2,
    /// 3: the client sent an invalid argument.
    InvalidArgument = 3,
    /// 4: the deadline expired before the call could complete.
    DeadlineExceeded = 4,
    /// 5: a requested entity was not found.
    NotFound = 5,
    /// 6: the entity the client tried to create already exists.
    AlreadyExists = 6,
    /// 7: the caller may not do this.
    PermissionDenied = 7,
    /// 8: a resource (a quota, the disk) is exhausted.
    ResourceExhausted = 8,
    /// 9: the system is not in the state the call needs.
    FailedPrecondition = 9,
    /// 10: the call was aborted, typically by a concurrency conflict.
    Aborted = 10,
    /// 11: the call went past the valid range.
    OutOfRange = 11,
    /// 12: the call is not implemented or not supported.
    Unimplemented = 12,
    /// 13: an internal error: an invariant the system expects is broken.
    Internal = 13,
    /// 14: the service is unavailable for now; the usual transient failure.
    Unavailable = 14,
    /// 15: unrecoverable data loss or corruption.
    DataLoss = 15,
    /// 16: the call has no valid authentication credentials.
    Unauthenticated = 16,
}

/// Every code, in the order of its number: `ALL[n]` is the code numbered `n`.
const ALL: [Code; 17] = [
    Code::Ok,
    Code::Cancelled,
    Code::Unknown,
    Code::InvalidArgument,
    Code::DeadlineExceeded,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::ResourceExhausted,
    Code::FailedPrecondition,
    Code::Aborted,
    Code::OutOfRange,
    Code::Unimplemented,
    Code::Internal,
    Code::Unavailable,
    Code::DataLoss,
    Code::Unauthenticated,
];

/// The canonical names, indexed by number.
const NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

impl Code {
    /// Every code, in the order of its number.
    pub const ALL: [Code; 17] = ALL;

    /// The code numbered `number` on the wire, or `None` past 16: a number gRPC has not
    /// assigned is not guessed at (grpc-go's `codes.Code` JSON reading rejects it too).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::grpc::Code;
    ///
    /// assert_eq!(Code::from_number(0), Some(Code::Ok));
    /// assert_eq!(Code::from_number(17), None);
    /// ```
    #[must_use]
    pub const fn from_number(number: u32) -> Option<Code> {
        if number < 17 {
            Some(ALL[number as usize])
        } else {
            None
        }
    }

    /// The code's number on the wire (`grpc-status`).
    #[must_use]
    pub const fn number(self) -> u32 {
        self as u32
    }

    /// The canonical name, as the service config writes it: `"UNAVAILABLE"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A status code name that is none of the 17.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{Code, UnknownCode};
///
/// assert_eq!("UNAVAILABLE ".parse::<Code>(), Err(UnknownCode));
/// assert_eq!(UnknownCode.to_string(), "unknown grpc status code");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnknownCode;

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown grpc status code")
    }
}

impl core::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    /// The code a name stands for, in any case (`"UNAVAILABLE"`, `"unavailable"`), as gRPC A6
    /// allows; nothing is trimmed, and the number form (`"14"`) is not a name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NAMES
            .iter()
            .position(|name| name.eq_ignore_ascii_case(s))
            .map(|n| ALL[n])
            .ok_or(UnknownCode)
    }
}

/// A set of status codes, one bit per code: the retryable or non-fatal codes of a policy.
///
/// A bitset rather than a list, since a policy asks "is this code in it?" after every failed
/// attempt, and a set is `Copy` and never allocates.
///
/// # Examples
///
/// ```
/// use ironward::grpc::{Code, Codes};
///
/// let codes = Codes::EMPTY.with(Code::Unavailable).with(Code::Aborted);
/// assert!(codes.contains(Code::Unavailable));
/// assert!(!codes.contains(Code::Internal));
/// assert_eq!(codes.len(), 2);
/// let listed: Codes = [Code::Aborted, Code::Unavailable].into_iter().collect();
/// assert_eq!(listed, codes);
/// assert_eq!(codes.iter().collect::<Vec<_>>(), [Code::Aborted, Code::Unavailable]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Codes(u32);

impl Codes {
    /// No code at all.
    pub const EMPTY: Codes = Codes(0);

    /// The set of the codes listed.
    #[must_use]
    pub const fn of(codes: &[Code]) -> Codes {
        let mut set = Codes::EMPTY;
        let mut i = 0;
        while i < codes.len() {
            set = set.with(codes[i]);
            i += 1;
        }
        set
    }

    /// This set with `code` added.
    #[must_use]
    pub const fn with(self, code: Code) -> Codes {
        Codes(self.0 | 1 << code as u32)
    }

    /// Whether `code` is in the set.
    #[must_use]
    pub const fn contains(self, code: Code) -> bool {
        self.0 & 1 << code as u32 != 0
    }

    /// Whether the set holds no code.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many codes the set holds.
    #[must_use]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The codes in the set, in the order of their numbers.
    pub fn iter(self) -> impl Iterator<Item = Code> {
        ALL.into_iter().filter(move |&code| self.contains(code))
    }
}

impl FromIterator<Code> for Codes {
    fn from_iter<I: IntoIterator<Item = Code>>(iter: I) -> Self {
        iter.into_iter().fold(Codes::EMPTY, Codes::with)
    }
}

impl fmt::Debug for Codes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_from_its_name_and_its_number() {
        for (n, code) in Code::ALL.into_iter().enumerate() {
            assert_eq!(code.number(), n as u32);
            assert_eq!(Code::from_number(n as u32), Some(code));
            assert_eq!(code.name().parse::<Code>(), Ok(code));
            assert_eq!(code.name().to_ascii_lowercase().parse::<Code>(), Ok(code));
        }
        assert_eq!(Code::from_number(u32::MAX), None);
    }

    // grpc-go `codes/codes.go`: the service config spells code 1 "CANCELLED".
    #[test]
    fn cancelled_is_spelled_as_the_service_config_spells_it() {
        assert_eq!("CANCELLED".parse::<Code>(), Ok(Code::Cancelled));
        assert_eq!("CANCELED".parse::<Code>(), Err(UnknownCode));
    }

    #[test]
    fn names_are_not_trimmed_nor_numbers() {
        for s in ["", " OK", "OK ", "14", "UNAVAILABLE\0", "Ok!"] {
            assert_eq!(s.parse::<Code>(), Err(UnknownCode), "{s:?}");
        }
    }

    #[test]
    fn a_set_holds_each_code_once() {
        let all: Codes = Code::ALL.into_iter().collect();
        assert_eq!(all.len(), 17);
        let twice = Codes::of(&[Code::Internal, Code::Internal]);
        assert_eq!(twice.len(), 1);
        assert!(Codes::EMPTY.is_empty());
        assert!(!twice.is_empty());
    }
}
