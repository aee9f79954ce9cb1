//! loom models of the shared forms: every interleaving of two or three threads on one
//! handle (up to loom's bound on preemptions), each checked against what the form's docs
//! promise under overlap. Built only under `--cfg loom` (see the parent module).
//!
//! The many-thread stress tests in `tests/` try millions of interleavings at random; these
//! try all of a small case, which is where a retune racing a take, or two openings of one
//! period, go wrong if they can.

extern crate std;

use core::time::Duration;
use std::vec::Vec;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use crate::{Budget, Period, SharedBucket, SharedBudget, SharedGate, SharedPeriod, Usage};

/// Explores `f` under loom, every interleaving with at most three preemptions (or
/// `LOOM_MAX_PREEMPTIONS`): loom's own advice is that two or three find what more would, and
/// the three-thread models take minutes without a bound.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound.get_or_insert(3);
    builder.check(f);
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Runs `each` on `threads` threads sharing `shared`, and returns their answers in order.
fn race<T, R>(shared: &Arc<T>, threads: usize, each: fn(&T, usize) -> R) -> Vec<R>
where
    T: Send + Sync + 'static,
    R: Send + 'static,
{
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let shared = Arc::clone(shared);
            thread::spawn(move || each(&shared, i))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn loom_bucket_takes_never_share_a_token() {
    model(|| {
        // Two tokens, three takes at one reading: no time passes, nothing refills.
        let bucket = Arc::new(SharedBucket::new(1.0, 2.0, Duration::ZERO));
        let taken = race(&bucket, 3, |b, _| b.take(secs(5), 1.0));
        assert_eq!(taken.iter().filter(|&&t| t).count(), 2);
        assert!(!bucket.take(secs(5), 1.0));
    });
}

#[test]
fn loom_bucket_retune_at_an_earlier_reading_gives_back_nothing_spent() {
    model(|| {
        // A full bucket of one; one thread takes the token at 10 s while another retunes
        // with a reading of 5 s (its clock read before the take's). Whichever lands first,
        // the token is spent once: a take at 10 s after both is refused. Converting the
        // tokens at the retune's own reading, before the takes that emptied the bucket,
        // handed the token back.
        let bucket = Arc::new(SharedBucket::new(1.0, 1.0, Duration::ZERO));
        let took = race(&bucket, 2, |b, i| match i {
            0 => b.take(secs(10), 1.0),
            _ => {
                b.retune(2.0, 1.0, secs(5));
                false
            }
        });
        assert!(took[0], "a full bucket admits the first take");
        assert!(!bucket.take(secs(10), 1.0));
        assert_eq!(bucket.rate(), 2.0);
    });
}

#[test]
fn loom_gate_never_holds_more_than_its_limit() {
    model(|| {
        let gate = Arc::new((SharedGate::new(1), AtomicUsize::new(0)));
        let entered = race(&gate, 2, |(gate, inside), _| {
            if !gate.enter() {
                return false;
            }
            let before = inside.fetch_add(1, Ordering::SeqCst);
            assert_eq!(before, 0, "two inside a gate of one");
            inside.fetch_sub(1, Ordering::SeqCst);
            gate.leave();
            true
        });
        assert!(entered.iter().any(|&e| e), "one of the two gets in");
        assert_eq!(gate.0.held(), 0);
    });
}

#[test]
fn loom_gate_retune_decides_each_enter_under_one_limit() {
    model(|| {
        // One inside a gate of two, lowered to one while another enters: the enter sees the
        // old limit (and gets in) or the new one (and is refused), never a count past both.
        let gate = Arc::new(SharedGate::new(2));
        assert!(gate.enter());
        let answers = race(&gate, 2, |g, i| match i {
            0 => u32::from(g.enter()),
            _ => g.retune(1),
        });
        assert_eq!(answers[1], 2, "the retune replaced the limit of two");
        assert_eq!(gate.held(), 1 + answers[0]);
        assert_eq!(gate.limit(), 1);
    });
}

#[test]
fn loom_budget_ends_where_some_order_of_its_calls_would() {
    model(|| {
        let budget = Arc::new(SharedBudget::new(2, 1.0));
        let ops: [fn(&mut Budget); 3] = [Budget::fail, Budget::fail, Budget::pass];
        race(&budget, 3, |b, i| match i {
            2 => b.pass(),
            _ => b.fail(),
        });
        let tokens = budget.tokens();
        assert!((0.0..=2.0).contains(&tokens));
        // The orders the three calls could have run in one at a time.
        let orders = [[0, 1, 2], [0, 2, 1], [2, 0, 1]];
        let possible: Vec<f64> = orders
            .iter()
            .map(|order| {
                let mut alone = Budget::new(2, 1.0);
                order.iter().for_each(|&op| ops[op](&mut alone));
                alone.tokens()
            })
            .collect();
        assert!(
            possible.contains(&tokens),
            "{tokens} from no order of {possible:?}"
        );
    });
}

#[test]
fn loom_period_admits_its_quota_exactly() {
    model(|| {
        let period = Arc::new(SharedPeriod::new(2, secs(60)));
        let answers = race(&period, 3, |p, _| p.take(secs(1)));
        let admitted = answers.iter().filter(|&&q| q != Usage::Over).count();
        assert_eq!(admitted, 2);
        assert_eq!(answers.iter().filter(|&&q| q == Usage::Hit).count(), 1);
    });
}

#[test]
fn loom_period_opens_once_when_two_takes_find_it_ended() {
    model(|| {
        // A quota of one, spent in the period opened at 0 s; at 60 s it has ended, and two
        // takes race to open the next: one opens it and is admitted, the other is refused
        // in it, and it ends at 120 s whichever won.
        let period = Arc::new(SharedPeriod::new(1, secs(60)));
        assert_eq!(period.take(Duration::ZERO), Usage::Hit);
        let answers = race(&period, 2, |p, _| p.take(secs(60)));
        assert_eq!(answers.iter().filter(|&&q| q == Usage::Hit).count(), 1);
        assert_eq!(answers.iter().filter(|&&q| q == Usage::Over).count(), 1);
        assert_eq!(period.next(secs(60)), secs(60));
    });
}

#[test]
fn loom_period_retune_decides_each_take_as_some_order_would() {
    model(|| {
        // One event of a quota of one counted at 0 s, then a take races a retune to a quota
        // of two, and one more take follows both. Every event counts, a refused one too (as
        // go-zero's `PeriodLimit` counts it), and the count is carried whole: the answers
        // are those of the take before the retune or after it, one at a time, never more
        // than the larger quota admits.
        let period = Arc::new(SharedPeriod::new(1, secs(60)));
        assert_eq!(period.take(Duration::ZERO), Usage::Hit);
        let answers = race(&period, 2, |p, i| match i {
            0 => p.take(secs(1)),
            _ => {
                p.retune(2, secs(60), secs(1));
                Usage::Over
            }
        });
        let seen = [answers[0], period.take(secs(1))];
        let alone = |retune_first: bool| {
            let mut alone = Period::new(1, secs(60));
            let _ = alone.take(Duration::ZERO);
            if retune_first {
                alone.retune(2, secs(60), secs(1));
            }
            let racing = alone.take(secs(1));
            if !retune_first {
                alone.retune(2, secs(60), secs(1));
            }
            [racing, alone.take(secs(1))]
        };
        assert!(seen == alone(true) || seen == alone(false), "{seen:?}");
        assert_eq!(period.quota(), 2);
    });
}
