//! A call as the run carries it: its attempt, what its attempt holds, and the events
//! scheduled for it.

use core::time::Duration;

use ironward::{Criticality, Grant, SrePermit, Ticket};

use ironward::ClassicPermit;

/// One call: when it first arrived, which attempt is next, the last backoff, its class,
/// and the closed-loop source whose client waits for it (or [`OPEN`](super::closed::OPEN)).
#[derive(Debug, Clone, Copy)]
pub(super) struct Call {
    pub(super) start: u64,
    pub(super) attempt: u32,
    pub(super) previous: Option<Duration>,
    pub(super) class: Criticality,
    pub(super) source: u16,
}

impl Call {
    /// A call's first attempt, starting at `start`.
    #[inline(always)]
    pub(super) fn first(start: u64, class: Criticality, source: u16) -> Self {
        Self {
            start,
            attempt: 1,
            previous: None,
            class,
            source,
        }
    }
}

/// What the client's limiter and breaker handed out for an attempt.
#[derive(Debug)]
pub(super) struct Guard {
    pub(super) pass: Pass,
    pub(super) grant: Option<Grant>,
}

/// What the client's breaker handed out for an attempt.
#[derive(Debug)]
pub(super) enum Pass {
    Unguarded,
    Sre(SrePermit),
    Classic(ClassicPermit),
}

/// What the server-side pieces hold while the backend works on an attempt.
#[derive(Debug)]
pub(super) struct Inside {
    pub(super) ticket: Option<Ticket>,
    pub(super) gate: bool,
}

/// Something that happens at a set time.
#[derive(Debug)]
pub(super) enum What {
    /// The backend finishes an attempt, and the client hears back at once.
    Done {
        call: Call,
        guard: Guard,
        inside: Inside,
        ok: bool,
        /// The client's chaos policy replaces the answer with a failure.
        replace: bool,
    },
    /// An attempt the client's chaos policy delayed, started at `since`, leaves the client.
    Delayed {
        call: Call,
        guard: Guard,
        since: u64,
    },
    /// The client stops waiting for an attempt the backend has not finished.
    Timeout { call: Call, guard: Guard },
    /// The backend finishes an attempt the client gave up on.
    Finish { inside: Inside, ok: bool },
    /// An attempt starts: a call's retry, or the first attempt of a closed-loop client's
    /// next call.
    Start { call: Call },
}
