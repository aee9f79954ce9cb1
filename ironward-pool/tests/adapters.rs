//! The deadpool and bb8 adapters on a passed-in clock: a fake backend that is up or down,
//! each manager's methods called as the pool calls them, the time moved by a manual clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use ironward::{Checkouts, RECONNECT, Reconnect, WardPiece};
use ironward_pool::{WardError, Warded};
use ironward_tokio::{Clock, Dice, Hand};

/// A backend that refuses connects and breaks connections while `down`, and counts the
/// connects it was asked for.
#[derive(Clone, Default)]
struct Backend {
    down: Arc<AtomicBool>,
    asked: Arc<AtomicU64>,
    /// Connects that never end, to be cancelled.
    hang: Arc<AtomicBool>,
}

#[derive(Debug, PartialEq)]
struct Down;

impl std::fmt::Display for Down {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("backend down")
    }
}

impl std::error::Error for Down {}

impl Backend {
    async fn connect(&self) -> Result<u32, Down> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        if self.hang.load(Ordering::Relaxed) {
            std::future::pending::<()>().await;
        }
        if self.down.load(Ordering::Relaxed) {
            Err(Down)
        } else {
            Ok(7)
        }
    }

    fn check(&self) -> Result<(), Down> {
        if self.down.load(Ordering::Relaxed) {
            Err(Down)
        } else {
            Ok(())
        }
    }

    fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }
}

impl deadpool::managed::Manager for Backend {
    type Type = u32;
    type Error = Down;

    async fn create(&self) -> Result<u32, Down> {
        self.connect().await
    }

    async fn recycle(
        &self,
        _: &mut u32,
        _: &deadpool::managed::Metrics,
    ) -> deadpool::managed::RecycleResult<Down> {
        self.check()
            .map_err(deadpool::managed::RecycleError::Backend)
    }
}

impl bb8::ManageConnection for Backend {
    type Connection = u32;
    type Error = Down;

    async fn connect(&self) -> Result<u32, Down> {
        Backend::connect(self).await
    }

    async fn is_valid(&self, _: &mut u32) -> Result<(), Down> {
        self.check()
    }

    fn has_broken(&self, _: &mut u32) -> bool {
        false
    }
}

/// A backend behind a ward on a manual clock, drawing `roll` every time.
fn warded(policy: Reconnect, roll: f64) -> (Backend, Warded<Backend>, Hand) {
    let backend = Backend::default();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let warded = Warded::with_policy(backend.clone(), policy)
        .with_clock(clock)
        .with_dice(Dice::from_fn(move || roll));
    (backend, warded, hand)
}

#[tokio::test]
async fn deadpool_refuses_a_connect_inside_the_backoff_without_asking_the_backend() {
    use deadpool::managed::Manager;

    let (backend, warded, hand) = warded(RECONNECT, 0.5);
    backend.down.store(true, Ordering::Relaxed);
    assert!(matches!(
        warded.create().await,
        Err(WardError::Backend(Down))
    ));
    let Err(WardError::Refused(refused)) = warded.create().await else {
        panic!("inside the backoff's wait");
    };
    assert_eq!(
        (refused.piece(), refused.next()),
        (WardPiece::Backoff, Duration::from_millis(250))
    );
    assert_eq!(backend.asked(), 1);
    hand.advance(refused.next());
    backend.down.store(false, Ordering::Relaxed);
    assert_eq!(warded.create().await.ok(), Some(7));
    let counts = warded.handle().counts();
    assert_eq!(
        (
            counts.attempts,
            counts.connected,
            counts.failed,
            counts.refused_by_backoff
        ),
        (2, 1, 1, 1)
    );
    assert!(!warded.handle().is_failing());
}

#[tokio::test]
async fn recycle_failures_open_the_breaker_to_new_connects() {
    use deadpool::managed::{Manager, Metrics, RecycleError};

    // A draw of 0 is refused by any drop fraction above 0.
    let (backend, warded, _hand) = warded(RECONNECT, 0.0);
    backend.down.store(true, Ordering::Relaxed);
    for _ in 0..20 {
        let recycled = warded.recycle(&mut 7, &Metrics::default()).await;
        assert!(matches!(
            recycled,
            Err(RecycleError::Backend(WardError::Backend(Down)))
        ));
    }
    let Err(WardError::Refused(refused)) = warded.create().await else {
        panic!("the breaker refuses");
    };
    assert_eq!(refused.piece(), WardPiece::Breaker);
    assert_eq!(backend.asked(), 0);
    assert_eq!(warded.handle().counts().refused_by_breaker, 1);
}

#[tokio::test]
async fn a_connect_cancelled_midway_counts_as_failed() {
    use deadpool::managed::Manager;

    let (backend, warded, _hand) = warded(RECONNECT, 0.5);
    backend.hang.store(true, Ordering::Relaxed);
    let cancelled = tokio::time::timeout(Duration::from_millis(5), warded.create()).await;
    assert!(cancelled.is_err());
    let handle = warded.handle();
    assert_eq!(handle.counts().failed, 1);
    assert!(handle.is_failing());
    assert!(handle.next() > Duration::ZERO);
}

#[tokio::test]
async fn bb8_spaces_its_connects_and_forgets_the_failures_on_a_success() {
    use bb8::ManageConnection;

    let (backend, warded, hand) = warded(RECONNECT, 0.5);
    backend.down.store(true, Ordering::Relaxed);
    let mut refused = 0;
    // 10 s of a dead backend, a connect asked for every 10 ms: the backoff lets a handful
    // through.
    for _ in 0..1_000 {
        match warded.connect().await {
            Err(WardError::Refused(_)) => refused += 1,
            Err(WardError::Backend(Down)) => {}
            other => panic!("the backend is down: {other:?}"),
        }
        hand.advance(Duration::from_millis(10));
    }
    let asked = backend.asked();
    assert!((5..=12).contains(&asked), "{asked} connects in 10 s");
    assert_eq!(refused + asked, 1_000);
    backend.down.store(false, Ordering::Relaxed);
    hand.advance(RECONNECT.backoff.cap.mul_f64(1.2));
    let mut connection = warded.connect().await.expect("the backend is back");
    assert!(warded.is_valid(&mut connection).await.is_ok());
    assert!(!warded.has_broken(&mut connection));
    // Back: the bucket's burst at once, then its rate.
    let burst: Vec<_> = (0..3).map(|_| warded.connect()).collect();
    for connect in burst {
        assert!(connect.await.is_ok());
    }
    let Err(WardError::Refused(refused)) = warded.connect().await else {
        panic!("the burst is spent");
    };
    assert_eq!(
        (refused.piece(), refused.next()),
        (WardPiece::Bucket, Duration::from_millis(250))
    );
}

#[tokio::test]
async fn a_gate_refuses_checkouts_past_its_limit_and_a_dropped_checkout_frees_its_place() {
    let policy = Reconnect {
        checkouts: Checkouts::Gate(2),
        ..RECONNECT
    };
    let (_backend, warded, _hand) = warded(policy, 0.5);
    let handle = warded.handle();
    let (a, b) = (handle.checkout().unwrap(), handle.checkout().unwrap());
    let refused = handle.checkout().expect_err("two held");
    assert_eq!(
        refused.to_string(),
        "checkout refused: gate full: 2 held against a limit of 2"
    );
    a.abandon();
    drop(b);
    assert!(handle.checkout().is_ok());
    assert_eq!(handle.counts().checkouts_refused, 1);
}

#[tokio::test]
async fn retuning_through_the_handle_keeps_the_failures() {
    use deadpool::managed::Manager;

    let (backend, warded, _hand) = warded(RECONNECT, 0.5);
    backend.down.store(true, Ordering::Relaxed);
    let _ = warded.create().await;
    let handle = warded.handle();
    handle.retune(Reconnect {
        rate: 1.0,
        ..RECONNECT
    });
    assert_eq!(handle.policy().rate, 1.0);
    assert!(handle.is_failing());
    assert!(warded.create().await.is_err());
    assert_eq!(backend.asked(), 1);
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn refusals_are_counted_by_piece_through_the_metrics_facade() {
    use bb8::ManageConnection;
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let (backend, warded, _hand) = metrics::with_local_recorder(&recorder, || {
        let (backend, warded, hand) = warded(RECONNECT, 0.5);
        let warded = warded.with_name("orders");
        // Taking the handle registers the series, with the recorder in scope.
        let _ = warded.handle();
        (backend, warded, hand)
    });
    backend.down.store(true, Ordering::Relaxed);
    for _ in 0..3 {
        let _ = warded.connect().await;
    }
    // One snapshot: it drains what it reads.
    let seen = snapshotter.snapshot().into_vec();
    let count = |outcome: &str, reason: Option<&str>| {
        seen.iter()
            .filter_map(|(key, _, _, value)| {
                let key = key.key();
                let label = |name: &str| {
                    key.labels()
                        .find(|l| l.key() == name)
                        .map(|l| l.value().to_owned())
                };
                let matches = key.name() == "ironward.requests"
                    && label("piece").as_deref() == Some("pool_connect")
                    && label("name").as_deref() == Some("orders")
                    && label("outcome").as_deref() == Some(outcome)
                    && label("reason").as_deref() == reason;
                match value {
                    DebugValue::Counter(n) if matches => Some(*n),
                    _ => None,
                }
            })
            .sum::<u64>()
    };
    assert_eq!(count("refused", Some("backoff")), 2);
    assert_eq!(count("admitted", None), 1);
    assert_eq!(count("refused", Some("bucket")), 0);
}
