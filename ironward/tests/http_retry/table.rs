//! The shared shape of the decision tables: a row is a request, the settings, what the server
//! said and the clock; `Row::decide` runs it through `decide` or `decide_response` (both, and
//! checks that they agree, when the server said nothing).

use std::time::Duration;

use ironward::http_retry::{
    Attempt, Decision, SETTINGS, Settings, StopReason, decide, decide_response,
};

use crate::http_retry::NOW;

pub(crate) const EARLIEST: i64 = -11_644_473_600;
pub(crate) const LATEST: i64 = 253_402_300_799;

/// What the server said about waiting, and which function the row exercises.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Server {
    /// Nothing: `decide(.., None)` and `decide_response(.., &[], now)` must agree.
    Absent,
    /// `decide(.., Some(delay))`.
    Parsed(Duration),
    /// `decide_response(.., values, now)`.
    Header(&'static [&'static str]),
}

/// One row of a table: a request, what surrounds it, and the expected decision.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    request: Attempt<'static>,
    settings: Settings,
    server: Server,
    now: i64,
}

impl Row {
    pub(crate) fn of(request: Attempt<'static>) -> Self {
        Row {
            request,
            settings: SETTINGS,
            server: Server::Absent,
            now: NOW,
        }
    }

    pub(crate) fn settings(self, settings: Settings) -> Self {
        Row { settings, ..self }
    }

    pub(crate) fn parsed(self, delay: Duration) -> Self {
        Row {
            server: Server::Parsed(delay),
            ..self
        }
    }

    pub(crate) fn header(self, values: &'static [&'static str]) -> Self {
        Row {
            server: Server::Header(values),
            ..self
        }
    }

    pub(crate) fn now(self, now: i64) -> Self {
        Row { now, ..self }
    }

    pub(crate) fn decide(&self) -> Decision {
        let (settings, request) = (&self.settings, &self.request);
        match self.server {
            Server::Absent => {
                let response = decide_response(settings, request, &[], self.now);
                if self.now == NOW {
                    assert_eq!(decide(settings, request, None), response, "{self:?}");
                }
                response
            }
            Server::Parsed(delay) => decide(settings, request, Some(delay)),
            Server::Header(values) => decide_response(settings, request, values, self.now),
        }
    }
}

pub(crate) fn check(table: &[(&str, Row, Decision)]) {
    for (name, row, expected) in table {
        assert_eq!(row.decide(), *expected, "{name}: {row:?}");
    }
}

pub(crate) fn wait(delay: Duration) -> Decision {
    Decision::Wait(delay)
}

pub(crate) fn stop(reason: StopReason) -> Decision {
    Decision::Stop(reason)
}

/// Settings as large as `Duration` allows: a 1 ns base doubling up to `Duration::MAX`.
pub(crate) const HUGE: Settings = Settings {
    max_retries: 1000,
    base_delay: Duration::from_nanos(1),
    max_delay: Duration::MAX,
    total_budget: Duration::MAX,
    request_reserve: Duration::ZERO,
};
