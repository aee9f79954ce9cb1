//! The `metrics` feature: the middleware's attempts by kind, its finished calls by outcome
//! (the core's labels: `success` or the stop's `as_str`) and its waits, and the shared
//! breaker's decisions, equal what a scripted local server saw, read from `metrics-util`'s
//! `DebuggingRecorder`, set as the test thread's recorder for the whole test: the middleware
//! and the breaker register their handles on first use, inside the call, which runs on the
//! test's thread (the future the test blocks on), so they record to that test's recorder
//! alone. Time is a manual clock: every wait is exact and takes no real time.
#![cfg(feature = "metrics")]

// The table's server; this file reads what it saw, not the effects it performed.
#[allow(dead_code)]
use crate::edges::server;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ironward::http_retry::{Settings, Stop, StopReason};
use ironward::{SRE, SharedBudget};
use ironward_reqwest::{ClientBreaker, Clock, Dice, Retried, RetryMiddleware};
use ironward_tokio::SharedCircuitBreaker;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use reqwest_middleware::ClientBuilder;

use server::{Reply, Server};

/// How long one test may take in real time: its waits are free, its requests local.
const LIMIT: Duration = Duration::from_secs(20);

/// A metric's labels, sorted by key.
type Labels = Vec<(String, String)>;

/// A fresh `DebuggingRecorder`, set as this thread's recorder while this lives.
struct Recording {
    snapshotter: Snapshotter,
    _guard: metrics::LocalRecorderGuard<'static>,
}

impl Recording {
    fn start() -> Self {
        // Leaked so that the guard may borrow it for the rest of the test: a few bytes.
        let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
        Self {
            snapshotter: recorder.snapshotter(),
            _guard: metrics::set_default_local_recorder(recorder),
        }
    }

    fn seen(&self) -> Seen {
        Seen::take(&self.snapshotter)
    }
}

/// One snapshot of a recorder: every value by name and sorted labels.
struct Seen(Vec<(String, Labels, DebugValue)>);

impl Seen {
    fn take(snapshotter: &Snapshotter) -> Self {
        let values = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<_> = key
                    .labels()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                labels.sort();
                (key.name().to_owned(), labels, value)
            })
            .collect();
        Self(values)
    }

    fn find(&self, metric: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        let mut want: Vec<_> = labels
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        want.sort();
        self.0
            .iter()
            .find(|(n, l, _)| n == metric && *l == want)
            .map(|(_, _, value)| value)
    }

    fn counter(&self, metric: &str, labels: &[(&str, &str)]) -> u64 {
        match self.find(metric, labels) {
            Some(DebugValue::Counter(count)) => *count,
            other => panic!("{metric} {labels:?} is a registered counter, not {other:?}"),
        }
    }

    fn attempts(&self, name: &str, kind: &str) -> u64 {
        self.counter("ironward.retry.attempts", &[("name", name), ("kind", kind)])
    }

    fn calls(&self, name: &str, outcome: &str) -> u64 {
        self.counter(
            "ironward.retry.calls",
            &[("name", name), ("outcome", outcome)],
        )
    }

    /// Every call the middleware `name` finished, whatever the outcome.
    fn all_calls(&self, name: &str) -> u64 {
        let label = ("name".to_owned(), name.to_owned());
        self.0
            .iter()
            .filter(|(n, l, _)| n == "ironward.retry.calls" && l.contains(&label))
            .map(|(_, _, value)| match value {
                DebugValue::Counter(count) => *count,
                other => panic!("a calls counter, not {other:?}"),
            })
            .sum()
    }

    fn waits(&self, name: &str) -> Vec<f64> {
        match self.find("ironward.retry.wait", &[("name", name)]) {
            Some(DebugValue::Histogram(values)) => values.iter().map(|v| v.0).collect(),
            other => panic!("ironward.retry.wait is a histogram, not {other:?}"),
        }
    }

    /// The breaker `name`'s count of `outcome`, as `ironward-tower`'s breaker labels it.
    fn breaker(&self, name: &str, outcome: &str) -> u64 {
        let mut labels = vec![("piece", "breaker"), ("name", name), ("outcome", outcome)];
        if outcome == "refused" {
            labels.push(("reason", "throttled"));
        }
        self.counter("ironward.requests", &labels)
    }

    fn gauge(&self, metric: &str, labels: &[(&str, &str)]) -> f64 {
        match self.find(metric, labels) {
            Some(DebugValue::Gauge(value)) => value.0,
            other => panic!("{metric} {labels:?} is a gauge, not {other:?}"),
        }
    }
}

/// A middleware on `clock` with no jitter: the waits are 200, 400 and 800 ms exactly.
fn middleware(settings: Settings, clock: &Clock) -> RetryMiddleware {
    RetryMiddleware::new(settings)
        .with_clock(clock.clone())
        .with_dice(Dice::from_fn(|| 1.0))
}

/// Sends a GET to `server` through `middleware`: the status and the record, or `None` and the
/// record for a call that gave up without a response.
async fn get<B: SharedCircuitBreaker>(
    middleware: RetryMiddleware<B>,
    server: &Server,
) -> (Option<u16>, Retried) {
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let url = format!("http://{}/items", server.addr);
    match client.get(url).send().await {
        Ok(response) => {
            let retried = *response.extensions().get::<Retried>().expect("a record");
            (Some(response.status().as_u16()), retried)
        }
        Err(err) => {
            let gave_up = ironward_reqwest::gave_up(&err).expect("the middleware's error");
            (None, gave_up.retried())
        }
    }
}

async fn bounded<F: Future>(test: F) -> F::Output {
    tokio::time::timeout(LIMIT, test)
        .await
        .expect("the test finishes in time")
}

fn statuses(script: &[u16]) -> Vec<Reply> {
    script.iter().map(|&s| Reply::status(s)).collect()
}

#[tokio::test]
async fn a_call_that_recovers_counts_one_first_two_retries_and_a_success() {
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let server = Server::start(statuses(&[503, 503, 200]), false, clock.clone()).await;
        let recording = Recording::start();
        let retry = middleware(Settings::default(), &clock);

        let (status, retried) = get(retry, &server).await;
        assert_eq!((status, retried.attempts), (Some(200), 3));
        assert_eq!(server.hits().len(), 3);

        let seen = recording.seen();
        assert_eq!(seen.attempts("default", "first"), 1);
        assert_eq!(seen.attempts("default", "retry"), 2);
        assert_eq!(seen.calls("default", "success"), 1);
        assert_eq!(seen.all_calls("default"), 1);
        assert_eq!(seen.waits("default"), [0.2, 0.4]);
    })
    .await;
}

#[tokio::test]
async fn a_call_that_runs_out_of_retries_counts_attempts_exhausted() {
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let server = Server::start(statuses(&[503]), false, clock.clone()).await;
        let recording = Recording::start();
        let retry = middleware(Settings::default(), &clock);

        let (status, retried) = get(retry, &server).await;
        let exhausted = Stop::Decided(StopReason::AttemptsExhausted);
        assert_eq!((status, retried.stop), (Some(503), Some(exhausted)));

        let seen = recording.seen();
        assert_eq!(seen.attempts("default", "first"), 1);
        assert_eq!(seen.attempts("default", "retry"), 3);
        assert_eq!(seen.calls("default", "attempts_exhausted"), 1);
        assert_eq!(seen.calls("default", "success"), 0);
        assert_eq!(seen.all_calls("default"), 1);
        assert_eq!(seen.waits("default"), [0.2, 0.4, 0.8]);
    })
    .await;
}

#[tokio::test]
async fn a_retry_the_budget_holds_back_counts_throttled_and_no_retry() {
    // gRPC A6: two tokens, one lost to the first 503, leaves the budget at half: no retry.
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let server = Server::start(statuses(&[503]), false, clock.clone()).await;
        let budget = Arc::new(SharedBudget::new(2, 0.5));
        let recording = Recording::start();
        let retry = { middleware(Settings::default(), &clock).with_budget(Arc::clone(&budget)) };

        let (status, retried) = get(retry, &server).await;
        assert_eq!((status, retried.stop), (Some(503), Some(Stop::Throttled)));
        assert_eq!(server.hits().len(), 1);

        let seen = recording.seen();
        assert_eq!(seen.attempts("default", "first"), 1);
        assert_eq!(seen.attempts("default", "retry"), 0);
        assert_eq!(seen.calls("default", "throttled"), 1);
        assert_eq!(seen.all_calls("default"), 1);
        assert!(seen.waits("default").is_empty());
    })
    .await;
}

// Google SRE client-side throttling: under a server that always fails the breaker refuses a
// growing share of attempts. Each call asks it at most until the first refusal, which ends
// the call as `refused`, so its refusals are exactly the calls ending so; its admissions are
// exactly the attempts sent, and the requests the server saw.
#[tokio::test]
async fn the_breaker_counts_what_it_admits_and_refuses_as_the_tower_breaker_does() {
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let server = Server::start(statuses(&[503]), false, clock.clone()).await;
        let settings = Settings {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            ..Settings::default()
        };
        let recording = Recording::start();
        let (retry, breaker) = {
            let breaker = ClientBreaker::new(SRE)
                .with_clock(clock.clone())
                .with_dice(Dice::seeded(11))
                .with_name("payments");
            let retry = middleware(settings, &clock)
                .with_breaker(breaker.clone())
                .with_name("payments");
            (retry, breaker)
        };
        assert_eq!(breaker.name(), "payments");

        let mut refused_first = 0;
        for _ in 0..60 {
            let (status, retried) = get(retry.clone(), &server).await;
            if status.is_none() {
                assert_eq!((retried.attempts, retried.stop), (0, Some(Stop::Refused)));
                refused_first += 1;
            }
        }

        let seen = recording.seen();
        let sent = seen.attempts("payments", "first") + seen.attempts("payments", "retry");
        assert_eq!(seen.breaker("payments", "admitted"), sent);
        assert_eq!(server.hits().len() as u64, sent);
        let refused = seen.breaker("payments", "refused");
        assert_eq!(seen.calls("payments", "refused"), refused);
        assert!(
            refused > refused_first as u64 && refused_first > 20,
            "{refused}, {refused_first}"
        );
        assert_eq!(
            seen.attempts("payments", "first"),
            60 - refused_first as u64
        );
        assert_eq!(
            seen.calls("payments", "refused") + seen.calls("payments", "attempts_exhausted"),
            60
        );
        assert_eq!(seen.all_calls("payments"), 60);
        println!(
            "breaker: {sent} attempts admitted, {refused} refused ({refused_first} first attempts) over 60 calls"
        );
        let drop = seen.gauge("ironward.breaker.ratio", &[("name", "payments")]);
        assert!(drop > 0.5 && drop <= 1.0, "drop {drop}");
        // The middleware and the breaker were renamed after `new`, before their first use:
        // no series at all is left under the default name.
        let default = ("name".to_owned(), "default".to_owned());
        let strays: Vec<_> = seen.0.iter().filter(|(_, l, _)| l.contains(&default)).collect();
        assert!(strays.is_empty(), "{strays:?}");
    })
    .await;
}

// The classic breaker, by its policy value: three 503s in a row open it, a probe after its
// wait fails and opens it again, the next passes and closes it. Its state gauge reads each
// state's number as it is entered, each change counts once, and its refusals count under
// `reason="open"`.
#[tokio::test]
async fn a_classic_breaker_counts_each_state_and_each_change_once() {
    use ironward::classic::{OpenWait, Record};
    use ironward::{CLASSIC, Classic};

    bounded(async {
        let (clock, hand) = Clock::manual(Duration::ZERO);
        let server =
            Server::start(statuses(&[503, 503, 503, 503, 200]), false, clock.clone()).await;
        let settings = Settings {
            max_retries: 0,
            ..Settings::default()
        };
        let recording = Recording::start();
        let retry = {
            let policy = Classic {
                record: Record::Consecutive { failures: 3 },
                open: OpenWait::Fixed(Duration::from_secs(1)),
                probes: 1,
                ..CLASSIC
            };
            let breaker = ClientBreaker::new(policy)
                .with_clock(clock.clone())
                .with_name("payments");
            middleware(settings, &clock)
                .with_breaker(breaker)
                .with_name("payments")
        };
        let changes = |seen: &Seen, from: &str, to: &str| {
            seen.counter(
                "ironward.breaker.transitions",
                &[("name", "payments"), ("from", from), ("to", to)],
            )
        };
        let state = |seen: &Seen| seen.gauge("ironward.breaker.state", &[("name", "payments")]);
        let open = [
            ("piece", "breaker"),
            ("name", "payments"),
            ("outcome", "refused"),
            ("reason", "open"),
        ];

        for _ in 0..3 {
            assert_eq!(get(retry.clone(), &server).await.0, Some(503));
        }
        let (status, retried) = get(retry.clone(), &server).await;
        assert_eq!((status, retried.stop), (None, Some(Stop::Refused)));
        let seen = recording.seen();
        assert_eq!((state(&seen), changes(&seen, "closed", "open")), (1.0, 1));
        assert_eq!(seen.counter("ironward.requests", &open), 1);
        assert_eq!(seen.breaker("payments", "admitted"), 3);

        // The probe fails: half-open, then open again.
        hand.advance(Duration::from_secs(1));
        assert_eq!(get(retry.clone(), &server).await.0, Some(503));
        let seen = recording.seen();
        assert_eq!(changes(&seen, "open", "half_open"), 1);
        assert_eq!(
            (state(&seen), changes(&seen, "half_open", "open")),
            (1.0, 1)
        );

        // The next probe passes: closed.
        hand.advance(Duration::from_secs(1));
        assert_eq!(get(retry.clone(), &server).await.0, Some(200));
        let seen = recording.seen();
        assert_eq!(changes(&seen, "open", "half_open"), 1);
        assert_eq!(changes(&seen, "half_open", "closed"), 1);
        assert_eq!(changes(&seen, "closed", "open"), 0);
        assert_eq!(state(&seen), 0.0);
        assert_eq!(
            server.hits().len(),
            5,
            "the refused call never reached the server"
        );
    })
    .await;
}

// The SRE breaker has no states: no state gauge and no changes, whatever it decides.
#[tokio::test]
async fn an_sre_breaker_reports_no_state() {
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let server = Server::start(statuses(&[503]), false, clock.clone()).await;
        let recording = Recording::start();
        let retry = middleware(Settings::default(), &clock).with_breaker(
            ClientBreaker::new(SRE)
                .with_clock(clock.clone())
                .with_name("sre"),
        );
        for _ in 0..20 {
            let _ = get(retry.clone(), &server).await;
        }
        let seen = recording.seen();
        assert!(seen.breaker("sre", "admitted") > 0);
        let states: Vec<_> = seen
            .0
            .iter()
            .filter(|(n, _, _)| n.starts_with("ironward.breaker.") && n != "ironward.breaker.ratio")
            .collect();
        assert!(states.is_empty(), "{states:?}");
    })
    .await;
}

#[tokio::test]
async fn two_named_middlewares_count_apart() {
    bounded(async {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let healthy = Server::start(statuses(&[200]), false, clock.clone()).await;
        let failing = Server::start(statuses(&[404]), false, clock.clone()).await;
        let recording = Recording::start();
        let (search, reports) = {
            let search = middleware(Settings::default(), &clock).with_name("search");
            let reports = middleware(Settings::default(), &clock).with_name("reports");
            (search, reports)
        };
        assert_eq!((search.name(), reports.name()), ("search", "reports"));
        for _ in 0..3 {
            assert_eq!(get(search.clone(), &healthy).await.0, Some(200));
        }
        assert_eq!(get(reports, &failing).await.0, Some(404));

        let seen = recording.seen();
        assert_eq!(seen.attempts("search", "first"), 3);
        assert_eq!(seen.calls("search", "success"), 3);
        assert_eq!(seen.all_calls("search"), 3);
        assert_eq!(seen.attempts("reports", "first"), 1);
        assert_eq!(seen.attempts("reports", "retry"), 0);
        assert_eq!(seen.calls("reports", "not_retryable"), 1);
        assert_eq!(seen.all_calls("reports"), 1);
    })
    .await;
}
