//! grpc-go's `TestRetryStreaming` (`test/retry_test.go`) as retry plans: each case's attempts,
//! and how the plan ends the call.

use core::time::Duration;

use ironward::grpc::{AttemptEnd, Code, Halt, RetryPlan, RetryStep};

use super::retry::{ms, policy};

/// One of `TestRetryStreaming`'s cases as the plan sees it: each attempt's outcome, with
/// `committed` for an attempt whose response headers or messages reached the client.
struct Streaming {
    desc: &'static str,
    attempts: &'static [(Code, bool)],
    /// The call's deadline, for the case whose context ends.
    deadline: Option<Duration>,
    /// How the plan ends the call.
    end: RetryStep,
}

// grpc-go `test/retry_test.go`, `TestRetryStreaming` (MaxAttempts 4, `.01s` backoffs,
// UNAVAILABLE retryable): every case whose decision is the plan's rather than the transport's.
// Its `sAttempts(n)` checks the server saw `grpc-previous-rpc-attempts: n` on attempt n.
#[test]
fn retry_streaming_cases_decide_as_grpc_go() {
    const U: Code = Code::Unavailable;
    let cases = [
        Streaming {
            desc: "Non-retryable error code",
            attempts: &[(Code::Internal, false)],
            deadline: None,
            end: RetryStep::Halt(Halt::NotRetryable),
        },
        Streaming {
            desc: "One retry necessary",
            attempts: &[(U, false), (Code::Ok, true)],
            deadline: None,
            end: RetryStep::Done,
        },
        Streaming {
            desc: "Exceed max attempts (4); check attempts header on server",
            attempts: &[(U, false), (U, false), (U, false), (U, false)],
            deadline: None,
            end: RetryStep::Halt(Halt::AttemptsSpent),
        },
        Streaming {
            desc: "Multiple successive requests",
            attempts: &[(U, false), (U, false), (Code::Ok, true)],
            deadline: None,
            end: RetryStep::Done,
        },
        Streaming {
            desc: "No retry after receiving",
            attempts: &[(U, false), (U, true)],
            deadline: None,
            end: RetryStep::Halt(Halt::Committed),
        },
        Streaming {
            desc: "No retry after header",
            attempts: &[(U, true)],
            deadline: None,
            end: RetryStep::Halt(Halt::Committed),
        },
        Streaming {
            desc: "No retry after context",
            attempts: &[(U, false)],
            deadline: Some(ms(1)),
            end: RetryStep::Halt(Halt::Deadline),
        },
        Streaming {
            desc: "Overflowing buffer - no retry",
            attempts: &[(U, true)],
            deadline: None,
            end: RetryStep::Halt(Halt::Committed),
        },
    ];
    let policy = policy(&[Code::Unavailable]);
    for case in cases {
        let mut plan = RetryPlan::new(&policy, case.deadline, ms(0)).unwrap();
        let mut now = ms(0);
        let mut headers = Vec::new();
        let mut last = None;
        for &(code, committed) in case.attempts {
            headers.push(plan.previous_attempts());
            let outcome = AttemptEnd {
                committed,
                ..AttemptEnd::new(code)
            };
            now += ms(1);
            match plan.on_outcome(outcome, now, 0.5, None) {
                RetryStep::Wait(wait) => now += wait,
                step => last = Some(step),
            }
        }
        assert_eq!(last, Some(case.end), "{}", case.desc);
        let made = case.attempts.len() as u32;
        assert_eq!(plan.attempts(), made, "{}", case.desc);
        assert_eq!(headers, (0..made).collect::<Vec<_>>(), "{}", case.desc);
    }
}
