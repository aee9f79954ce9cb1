//! The meters against `metrics-util`'s debugging recorder: which series each registers, and
//! when.

use metrics_util::debugging::{DebugValue, DebuggingRecorder};

use ironward::classic::{State, Transition};

use super::{Decisions, Level, Retries, States};

/// The series a recorder holds, as `name{labels}` and the counter's value or 0; the chaos
/// piece's tests read it too.
pub(crate) fn series(recorder: &DebuggingRecorder) -> Vec<(String, u64)> {
    let mut all: Vec<_> = recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels: Vec<_> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            let count = match value {
                DebugValue::Counter(n) => n,
                // A gauge's value, which the state gauge holds whole.
                DebugValue::Gauge(v) => v.into_inner() as u64,
                DebugValue::Histogram(_) => 0,
            };
            (format!("{}{{{}}}", key.name(), labels.join(",")), count)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn nothing_is_registered_until_the_handles_are_first_used() {
    let recorder = DebuggingRecorder::new();
    let seen = metrics::with_local_recorder(&recorder, || {
        let decisions = Decisions::new("breaker", "default", "refused", &["throttled"]);
        let ratio = Level::breaker_ratio("default");
        let retries: Retries = Retries::new("default");
        let before = series(&recorder);
        drop((decisions, ratio, retries));
        before
    });
    assert_eq!(seen, vec![]);
    assert_eq!(series(&recorder), vec![]);
}

#[test]
fn registering_shows_every_series_at_zero_once() {
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let decisions =
            Decisions::new("redis_period", String::from("api"), "refused", &["limited"])
                .with_source("redis");
        decisions.register();
        decisions.register();
        decisions.refused(0);
        decisions.refused(1);
    });
    assert_eq!(
        series(&recorder),
        vec![
            (
                "ironward.requests{piece=redis_period,name=api,source=redis,outcome=admitted}"
                    .to_owned(),
                0
            ),
            (
                "ironward.requests{piece=redis_period,name=api,source=redis,outcome=refused,reason=limited}"
                    .to_owned(),
                1
            ),
        ]
    );
}

// A hostile trial found the limiter's handles registering 20 series of zeros (four classes
// admitted, four reasons by four classes refused) when its layer made a service, before any
// request: each now shows when it first counts.
#[test]
fn a_limiters_series_show_only_once_they_count() {
    use ironward::Criticality;
    let recorder = DebuggingRecorder::new();
    let key = |labels: &str| format!("ironward.requests{{piece=limiter,name=api,{labels}}}");
    metrics::with_local_recorder(&recorder, || {
        // The tower limiter's handles, registered as its layer registers them.
        let reasons = &["full", "floor", "queue", "expired"];
        let decisions = Decisions::new("limiter", "api", "refused", reasons).by_criticality();
        decisions.register();
        assert_eq!(series(&recorder), vec![], "no series before a request");
        decisions.refused_as(1, Criticality::Sheddable);
        assert_eq!(
            series(&recorder),
            vec![(key("outcome=refused,reason=floor,criticality=sheddable"), 1)],
            "after one refusal, its series alone"
        );
        decisions.admitted_as(Criticality::Critical);
        decisions.refused_as(1, Criticality::Sheddable);
        // A snapshot reads each counter's count since the one before.
        assert_eq!(
            series(&recorder),
            vec![
                (key("outcome=admitted,criticality=critical"), 1),
                (key("outcome=refused,reason=floor,criticality=sheddable"), 1),
            ]
        );
    });
}

#[test]
fn handles_split_by_class_count_each_class_apart() {
    use ironward::Criticality;
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let decisions =
            Decisions::new("limiter", "api", "refused", &["full", "floor"]).by_criticality();
        decisions.admitted_as(Criticality::Sheddable);
        decisions.admitted(); // as critical
        decisions.refused_as(1, Criticality::SheddableConcurrent);
        decisions.refused_as(1, Criticality::SheddableConcurrent);
        decisions.refused_as(2, Criticality::Critical); // no such reason
        Level::limiter_limit("api").set(17.0);
    });
    let seen = series(&recorder);
    // The three series counted, and the gauge: none of the classes or reasons left at zero.
    assert_eq!(seen.len(), 3 + 1, "{seen:?}");
    let count = |key: &str| seen.iter().find(|(k, _)| k == key).map(|(_, n)| *n);
    assert_eq!(
        count("ironward.requests{piece=limiter,name=api,outcome=admitted,criticality=sheddable}"),
        Some(1)
    );
    assert_eq!(
        count("ironward.requests{piece=limiter,name=api,outcome=admitted,criticality=critical}"),
        Some(1)
    );
    assert_eq!(
        count(
            "ironward.requests{piece=limiter,name=api,outcome=refused,reason=floor,criticality=sheddable_concurrent}"
        ),
        Some(2)
    );
    assert_eq!(
        count(
            "ironward.requests{piece=limiter,name=api,outcome=refused,reason=full,criticality=critical_plus}"
        ),
        None
    );
    assert!(
        seen.iter()
            .any(|(k, _)| k == "ironward.limiter.limit{name=api}")
    );
}

#[test]
fn a_retry_counts_under_the_cores_outcome_labels() {
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let retries: Retries = Retries::new("api");
        retries.attempt(1);
        retries.attempt(2);
        retries.hedge();
        retries.ended(ironward::http_retry::Retried::default().stop);
    });
    let seen = series(&recorder);
    assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=first}".to_owned(), 1)));
    assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=retry}".to_owned(), 1)));
    assert!(seen.contains(&(
        "ironward.retry.calls{name=api,outcome=success}".to_owned(),
        1
    )));
    // An HTTP client does not hedge: no `kind="hedge"` series, even after `hedge()`.
    assert!(
        !seen.iter().any(|(s, _)| s.contains("kind=hedge")),
        "{seen:?}"
    );
}

#[test]
fn a_grpc_call_counts_hedges_and_every_stop_label() {
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let retries = Retries::<ironward::grpc::Halt>::new("api");
        retries.register();
        retries.attempt(1);
        retries.hedge();
        retries.hedge();
        retries.ended(Some(ironward::grpc::Halt::Deadline));
    });
    let seen = series(&recorder);
    // Three kinds, a success and six stops, and the wait histogram.
    assert_eq!(seen.len(), 3 + 7 + 1, "{seen:?}");
    assert!(seen.contains(&("ironward.retry.attempts{name=api,kind=hedge}".to_owned(), 2)));
    assert!(seen.contains(&(
        "ironward.retry.calls{name=api,outcome=deadline}".to_owned(),
        1
    )));
    assert!(seen.contains(&(
        "ironward.retry.calls{name=api,outcome=committed}".to_owned(),
        0
    )));
}

#[test]
fn a_breakers_state_and_changes_count_once_each_and_only_once_registered() {
    let recorder = DebuggingRecorder::new();
    let key = |from: &str, to: &str| {
        format!("ironward.breaker.transitions{{name=api,from={from},to={to}}}")
    };
    metrics::with_local_recorder(&recorder, || {
        let states = States::new("api");
        assert_eq!(series(&recorder), vec![], "nothing before `register`");
        states.register(|| State::Closed);
        states.register(|| panic!("the state is read only when the gauge is made"));
        let mut want = vec![
            ("ironward.breaker.state{name=api}".to_owned(), 0),
            (key("closed", "open"), 0),
            (key("half_open", "closed"), 0),
            (key("half_open", "open"), 0),
            (key("open", "half_open"), 0),
        ];
        want.sort();
        assert_eq!(
            series(&recorder),
            want,
            "the gauge at closed, the four changes at zero"
        );
        let change = |from, to| states.transition(Transition { from, to });
        change(State::Closed, State::Open);
        change(State::Open, State::HalfOpen);
        change(State::HalfOpen, State::Open);
        change(State::Open, State::HalfOpen);
        let seen = series(&recorder);
        assert!(
            seen.contains(&("ironward.breaker.state{name=api}".to_owned(), 2)),
            "{seen:?}"
        );
        assert!(seen.contains(&(key("open", "half_open"), 2)), "{seen:?}");
        assert!(seen.contains(&(key("closed", "open"), 1)), "{seen:?}");
        // A change the record never makes shows once it counts.
        change(State::HalfOpen, State::MetricsOnly);
        let seen = series(&recorder);
        assert!(
            seen.contains(&(key("half_open", "metrics_only"), 1)),
            "{seen:?}"
        );
        assert!(
            seen.contains(&("ironward.breaker.state{name=api}".to_owned(), 5)),
            "{seen:?}"
        );
        assert_eq!(seen.len(), 6, "{seen:?}");
    });
}

#[test]
fn a_breaker_made_in_a_state_put_by_hand_registers_its_gauge_there() {
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        States::new("held").register(|| State::ForcedOpen);
        let seen = series(&recorder);
        assert!(
            seen.contains(&("ironward.breaker.state{name=held}".to_owned(), 4)),
            "{seen:?}"
        );
    });
}
