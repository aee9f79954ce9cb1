//! The stop reasons themselves: the precedence of every pair (the first rule that applies
//! answers), their `Display` and `Error`, and the plain-value traits of the public types.

use std::error::Error;
use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use ironward::http_retry::{
    Attempt, Decision, SETTINGS, Settings, StopReason, StopReason::*, decide, decide_response,
};

use crate::http_retry::table::{LATEST, Row, stop, wait};
use crate::http_retry::{NOW, get, ms, secs};

/// One cause of each stop reason, applied to a row; any two apply together, in either order.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Settings,
    Input,
    Status,
    Replay,
    Attempts,
    Budget,
    RetryAfter,
    Cap,
    LateBudget,
}

/// In rule order: each fault's reason must win over the reason of every later one.
const FAULTS: [(Fault, StopReason); 9] = [
    (Fault::Settings, InvalidSettings),
    (Fault::Input, InvalidInput),
    (Fault::Status, NotRetryable),
    (Fault::Replay, NotReplayable),
    (Fault::Attempts, AttemptsExhausted),
    (Fault::Budget, BudgetExhausted),
    (Fault::RetryAfter, InvalidRetryAfter),
    (Fault::Cap, ServerDelayExceedsCap),
    (Fault::LateBudget, BudgetExhausted),
];

/// A request under some faults, to be decided by both functions.
#[derive(Debug, Clone)]
struct Faulty {
    settings: Settings,
    request: Attempt<'static>,
    header: Vec<&'static str>,
    server: Option<Duration>,
    late: bool,
}

impl Faulty {
    fn new(faults: &[Fault]) -> Self {
        let mut faulty = Faulty {
            settings: SETTINGS,
            request: get(),
            header: Vec::new(),
            server: None,
            late: false,
        };
        for fault in faults {
            faulty.apply(*fault);
        }
        faulty
    }

    fn apply(&mut self, fault: Fault) {
        let request = &mut self.request;
        match fault {
            Fault::Settings => self.settings.max_retries = 1001,
            Fault::Input => request.sample_ppm = 1_000_001,
            Fault::Status => request.status = 404,
            Fault::Replay => request.body_replayable = false,
            Fault::Attempts => request.retry_index = 3,
            Fault::Budget => request.elapsed = request.elapsed.max(secs(120)),
            Fault::RetryAfter => self.header.push("soon"),
            Fault::Cap => {
                self.header.push("31");
                self.server = Some(secs(31));
            }
            // 20 s left: room for the client delay, not for a 20 s server delay.
            Fault::LateBudget => {
                request.elapsed = request.elapsed.max(secs(100));
                self.late = true;
            }
        }
    }

    fn decide_response(&self) -> Decision {
        let mut header = self.header.clone();
        if self.late && header.is_empty() {
            header.push("20");
        }
        decide_response(&self.settings, &self.request, &header, NOW)
    }

    fn decide(&self) -> Decision {
        let server = if self.late {
            self.server.or(Some(secs(20)))
        } else {
            self.server
        };
        decide(&self.settings, &self.request, server)
    }
}

#[test]
fn each_fault_alone_stops_for_its_own_reason() {
    for (fault, reason) in FAULTS {
        let faulty = Faulty::new(&[fault]);
        assert_eq!(faulty.decide_response(), stop(reason), "{fault:?}");
        if fault != Fault::RetryAfter {
            assert_eq!(faulty.decide(), stop(reason), "{fault:?}");
        }
    }
    assert_eq!(Faulty::new(&[]).decide_response(), wait(ms(200)));
}

#[test]
fn every_earlier_reason_takes_precedence_over_every_later_one() {
    // The MoonBit package `http_retry`: "Earlier invalid input, status, replay, attempt or baseline budget failures
    // take precedence"; The rule order: the first rule that applies answers.
    let mut pairs = 0;
    for (i, (first, reason)) in FAULTS.iter().enumerate() {
        for (later, _) in &FAULTS[i + 1..] {
            for faults in [[*first, *later], [*later, *first]] {
                let faulty = Faulty::new(&faults);
                assert_eq!(faulty.decide_response(), stop(*reason), "{faults:?}");
                if !faults.contains(&Fault::RetryAfter) {
                    assert_eq!(faulty.decide(), stop(*reason), "{faults:?}");
                }
            }
            pairs += 1;
        }
        // And over all later faults at once.
        let all: Vec<Fault> = FAULTS[i..].iter().map(|(fault, _)| *fault).collect();
        assert_eq!(
            Faulty::new(&all).decide_response(),
            stop(*reason),
            "{all:?}"
        );
    }
    assert_eq!(pairs, 36);
}

#[test]
fn a_clock_outside_1601_to_9999_is_invalid_input_before_later_reasons() {
    // Rule 2 (decide_response only): checked even when there is no date to read.
    for (fault, reason) in FAULTS {
        let faulty = Faulty::new(&[fault]);
        let expected = if fault == Fault::Settings {
            InvalidSettings
        } else {
            InvalidInput
        };
        let decision = decide_response(
            &faulty.settings,
            &faulty.request,
            &faulty.header,
            LATEST + 1,
        );
        assert_eq!(decision, stop(expected), "{fault:?} ({reason:?})");
    }
}

#[test]
fn stop_reasons_display_in_lower_case_without_a_full_stop() {
    let all = [
        InvalidSettings,
        InvalidInput,
        NotRetryable,
        NotReplayable,
        AttemptsExhausted,
        BudgetExhausted,
        ServerDelayExceedsCap,
        InvalidRetryAfter,
    ];
    let mut seen = Vec::new();
    for reason in all {
        let text = reason.to_string();
        assert!(!text.is_empty() && !text.ends_with('.'), "{text:?}");
        assert!(!text.chars().any(char::is_uppercase), "{text:?}");
        assert!(!seen.contains(&text), "{text:?} twice");
        seen.push(text);
        let boxed: Box<dyn Error + Send + Sync> = Box::new(reason);
        assert!(boxed.source().is_none());
    }
    assert_eq!(BudgetExhausted.to_string(), "time budget exhausted");
}

#[test]
fn the_public_types_are_plain_copyable_values() {
    fn plain<T: Debug + Clone + Copy + PartialEq + Eq + Hash + Send + Sync>() {}
    plain::<Settings>();
    plain::<Attempt<'static>>();
    plain::<Decision>();
    plain::<StopReason>();
    // Exhaustive matches compile: neither enum is #[non_exhaustive].
    let describe = |decision: Decision| match decision {
        Decision::Wait(_) => "wait",
        Decision::Stop(
            InvalidSettings
            | InvalidInput
            | NotRetryable
            | NotReplayable
            | AttemptsExhausted
            | BudgetExhausted
            | ServerDelayExceedsCap
            | InvalidRetryAfter,
        ) => "stop",
    };
    assert_eq!(describe(Row::of(get()).decide()), "wait");
}
