//! Properties of the classic breaker, against a naive model that keeps every outcome in a
//! list (with its time) and reads the rules off it as `Classic`'s and `HalfOpen`'s docs
//! state them: count, consecutive and time records, the probes and the progressive stages,
//! retunes and forces, and a clock that goes backwards.

use core::time::Duration;

use ironward::classic::{Force, HalfOpen, OpenWait, Record, State, Transition};
use ironward::{CLASSIC, Classic, ClassicBreaker, ClassicPermit};
use proptest::prelude::*;

/// What the model hands out for a call, beside the breaker's own permit.
#[derive(Debug, Clone, Copy)]
struct Ticket {
    epoch: u64,
    at: u64,
    probe: Option<u64>,
}

/// The half-open trial, as plain lists.
#[derive(Debug, Clone)]
enum Trial {
    Probes {
        out: Vec<(u64, u64)>,
        heard: Vec<(bool, bool)>,
    },
    Share {
        stage: u32,
        share: f64,
        until: u64,
        asked: u64,
        admitted: u64,
        heard: Vec<(bool, bool)>,
    },
}

#[derive(Debug, Clone)]
enum Stage {
    Closed,
    Open { until: u64 },
    HalfOpen(Trial),
}

/// The rules, read off plain lists.
struct Model {
    policy: Classic,
    /// Every outcome the closed record heard since it last started, with its time.
    log: Vec<(u64, bool, bool)>,
    stage: Stage,
    epoch: u64,
    next: u64,
    latest: u64,
    reopened: u32,
    opened_by: (f64, f64),
    transitions: u64,
    transition: Option<Transition>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The share of failed and of slow calls in `calls`.
fn shares(calls: &[(bool, bool)]) -> (f64, f64) {
    let n = calls.len() as f64;
    let failed = calls.iter().filter(|c| c.0).count() as f64;
    let slow = calls.iter().filter(|c| c.1).count() as f64;
    (failed / n, slow / n)
}

impl Model {
    fn new(policy: Classic) -> Self {
        Self {
            policy,
            log: Vec::new(),
            stage: Stage::Closed,
            epoch: 0,
            next: 0,
            latest: 0,
            reopened: 0,
            opened_by: (0.0, 0.0),
            transitions: 0,
            transition: None,
        }
    }

    fn state(&self) -> State {
        match (self.policy.force, &self.stage) {
            (Force::Open, _) => State::ForcedOpen,
            (Force::Disabled, _) => State::Disabled,
            (Force::MetricsOnly, _) => State::MetricsOnly,
            (Force::None, Stage::Closed) => State::Closed,
            (Force::None, Stage::Open { .. }) => State::Open,
            (Force::None, Stage::HalfOpen(_)) => State::HalfOpen,
        }
    }

    fn go(&mut self, stage: Stage, from: State) {
        self.stage = stage;
        let to = self.state();
        self.changed(from, to);
    }

    fn changed(&mut self, from: State, to: State) {
        self.epoch += 1;
        self.transitions += 1;
        self.transition = Some(Transition { from, to });
    }

    /// Stage `k`'s share, as `HalfOpen`'s docs give it (the generated values are in range).
    fn share(&self, k: u32) -> Option<f64> {
        match self.policy.half_open {
            HalfOpen::Progressive {
                first,
                factor,
                stages,
                ..
            } if k < stages => Some((first * factor.powi(k as i32)).min(1.0)),
            _ => None,
        }
    }

    fn hold(&self) -> u64 {
        nanos(self.policy.half_open.hold())
    }

    fn open(&mut self, t: u64, by: (f64, f64), from: State) {
        let OpenWait::Fixed(wait) = self.policy.open else {
            unreachable!("the model runs fixed waits")
        };
        self.opened_by = by;
        self.go(
            Stage::Open {
                until: t.saturating_add(nanos(wait)),
            },
            from,
        );
    }

    /// Whether the record opens the breaker after an outcome at `t`.
    fn trips(&self, t: u64) -> Option<(f64, f64)> {
        let calls: Vec<(bool, bool)> = match self.policy.record {
            Record::Count { calls } => {
                let n = calls.max(1) as usize;
                self.log[self.log.len().saturating_sub(n)..]
                    .iter()
                    .map(|&(_, f, s)| (f, s))
                    .collect()
            }
            Record::Consecutive { failures } => {
                let run = self.log.iter().rev().take_while(|c| c.1).count();
                let reached = run >= failures.max(1) as usize;
                let run = vec![(true, false); run];
                return reached.then(|| {
                    if run.is_empty() {
                        (0.0, 0.0)
                    } else {
                        shares(&run)
                    }
                });
            }
            Record::Time { span, buckets } => {
                // Every outcome whose bucket is one of the `buckets` latest, `t`'s included.
                let n = u64::from(buckets.max(1));
                let width = (nanos(span) / n).max(1);
                let bucket = |at: u64| at / width;
                self.log
                    .iter()
                    .filter(|&&(at, _, _)| bucket(t) - bucket(at) < n)
                    .map(|&(_, f, s)| (f, s))
                    .collect()
            }
        };
        let minimum = match self.policy.record {
            Record::Count { calls } => self.policy.minimum.min(calls.max(1)),
            _ => self.policy.minimum,
        };
        let by = shares(&calls);
        let reached = calls.len() >= minimum.max(1) as usize
            && (by.0 >= self.policy.failure_rate || by.1 >= self.policy.slow_rate);
        reached.then_some(by)
    }

    /// Reads a half-open trial at `t`, and moves on if it is done.
    fn judge(&mut self, t: u64) {
        let Stage::HalfOpen(trial) = &mut self.stage else {
            return;
        };
        let (heard, next) = match trial {
            Trial::Probes { heard, .. } if heard.len() >= self.policy.probes.max(1) as usize => {
                (heard.clone(), 0)
            }
            Trial::Share { until, .. } if t < *until => return,
            Trial::Share {
                until,
                asked,
                admitted,
                heard,
                ..
            } if heard.is_empty() => {
                *until = t.saturating_add(nanos(self.policy.half_open.hold()));
                (*asked, *admitted) = (0, 0);
                return;
            }
            Trial::Share { stage, heard, .. } => (heard.clone(), *stage + 1),
            Trial::Probes { .. } => return,
        };
        let by = shares(&heard);
        if by.0 >= self.policy.failure_rate || by.1 >= self.policy.slow_rate {
            self.reopened += 1;
            self.open(t, by, State::HalfOpen);
        } else if let Some(share) = self.share(next) {
            self.stage = Stage::HalfOpen(Trial::Share {
                stage: next,
                share,
                until: t.saturating_add(self.hold()),
                asked: 0,
                admitted: 0,
                heard: Vec::new(),
            });
        } else {
            self.log.clear();
            self.reopened = 0;
            self.go(Stage::Closed, State::HalfOpen);
        }
    }

    /// A call asked at the clock reading `now`: a ticket, or the state that refused.
    fn check(&mut self, now: u64) -> Result<Ticket, State> {
        let t = self.latest.max(now);
        self.latest = t;
        let ticket = |epoch, probe| Ticket {
            epoch,
            at: t,
            probe,
        };
        match self.policy.force {
            Force::Open => return Err(State::ForcedOpen),
            Force::Disabled | Force::MetricsOnly => return Ok(ticket(self.epoch, None)),
            Force::None => {}
        }
        match self.stage {
            Stage::Open { until } if t < until => return Err(State::Open),
            Stage::Open { .. } => {
                let trial = Trial::Probes {
                    out: Vec::new(),
                    heard: Vec::new(),
                };
                self.go(Stage::HalfOpen(trial), State::Open);
            }
            _ => self.judge(t),
        }
        let (epoch, probes, lease) = (self.epoch, self.policy.probes.max(1), self.policy.lease);
        match &mut self.stage {
            Stage::Closed => Ok(ticket(epoch, None)),
            Stage::Open { .. } => Err(State::Open),
            Stage::HalfOpen(Trial::Probes { out, heard }) => {
                out.retain(|&(_, expires)| expires > t);
                if out.len() + heard.len() >= probes as usize {
                    return Err(State::HalfOpen);
                }
                self.next += 1;
                out.push((self.next, t.saturating_add(nanos(lease))));
                Ok(ticket(epoch, Some(self.next)))
            }
            Stage::HalfOpen(Trial::Share {
                share,
                asked,
                admitted,
                ..
            }) => {
                // The first call, then one more each `1 / share` calls asked.
                let quota = 1 + (*asked as f64 * *share).floor() as u64;
                *asked += 1;
                if *admitted >= quota {
                    return Err(State::HalfOpen);
                }
                *admitted += 1;
                Ok(ticket(epoch, None))
            }
        }
    }

    fn settle(&mut self, ticket: Ticket, failed: bool, now: u64) {
        let t = self.latest.max(now);
        self.latest = t;
        let slow = t - ticket.at > nanos(self.policy.slow_call);
        match self.policy.force {
            Force::MetricsOnly => return self.log.push((t, failed, slow)),
            Force::Open | Force::Disabled => return,
            Force::None => {}
        }
        if ticket.epoch != self.epoch {
            return;
        }
        match &mut self.stage {
            Stage::Closed => {
                self.log.push((t, failed, slow));
                if let Some(by) = self.trips(t) {
                    self.open(t, by, State::Closed);
                }
            }
            Stage::Open { .. } => {}
            Stage::HalfOpen(Trial::Probes { out, heard }) => {
                let Some(i) = out.iter().position(|&(id, _)| Some(id) == ticket.probe) else {
                    return;
                };
                out.remove(i);
                heard.push((failed, slow));
                self.judge(t);
            }
            Stage::HalfOpen(Trial::Share { heard, .. }) => {
                heard.push((failed, slow));
                self.judge(t);
            }
        }
    }

    fn retune(&mut self, policy: Classic, now: u64) {
        self.latest = self.latest.max(now);
        let before = self.state();
        let shape = |r: Record| match r {
            Record::Count { calls } => (0, u64::from(calls.max(1)), 0),
            Record::Time { span, buckets } => {
                let n = u64::from(buckets.max(1));
                (1, n, (nanos(span) / n).max(1))
            }
            Record::Consecutive { .. } => (2, 0, 0),
        };
        if shape(policy.record) != shape(self.policy.record) {
            self.log.clear();
        }
        self.policy = policy;
        let after = self.state();
        if before != after {
            if let Stage::HalfOpen(trial) = &mut self.stage {
                *trial = Trial::Probes {
                    out: Vec::new(),
                    heard: Vec::new(),
                };
            }
            self.changed(before, after);
        }
    }

    fn probes_out(&self, t: u64) -> usize {
        match &self.stage {
            Stage::HalfOpen(Trial::Probes { out, .. }) => {
                out.iter().filter(|&&(_, e)| e > t).count()
            }
            _ => 0,
        }
    }
}

/// One step: a call asked after `wait` ms (or `wait` ms before the latest reading, a clock
/// going backwards), the `index`-th call out settled after `wait` ms, or a retune to the
/// other policy or to a force.
#[derive(Debug, Clone, Copy)]
enum Op {
    Check {
        wait: u64,
        back: bool,
    },
    Settle {
        index: usize,
        wait: u64,
        failed: bool,
    },
    Retune {
        other: bool,
        force: Force,
    },
}

/// Waits in ms, on a coarse grid as often as not, so that events meet the ends of waits,
/// leases and stages exactly.
fn waits() -> impl Strategy<Value = u64> {
    prop_oneof![
        2 => Just(0_u64),
        2 => (1..5_u64).prop_map(|k| k * 100),
        3 => 0..400_u64,
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let force = prop_oneof![
        6 => Just(Force::None),
        1 => Just(Force::Open),
        1 => Just(Force::Disabled),
        1 => Just(Force::MetricsOnly),
    ];
    prop::collection::vec(
        prop_oneof![
            8 => (waits(), prop::bool::weighted(0.1))
                .prop_map(|(wait, back)| Op::Check { wait, back }),
            8 => (any::<usize>(), waits(), prop::bool::weighted(0.6)).prop_map(
                |(index, wait, failed)| Op::Settle {
                    index,
                    wait,
                    failed
                }
            ),
            1 => (any::<bool>(), force).prop_map(|(other, force)| Op::Retune { other, force }),
        ],
        0..300,
    )
}

fn policies() -> impl Strategy<Value = Classic> {
    let record = prop_oneof![
        (1..8_u32).prop_map(|calls| Record::Count { calls }),
        (1..4_u32).prop_map(|failures| Record::Consecutive { failures }),
        (100..2_000_u64, 1..10_u32).prop_map(|(span, buckets)| Record::Time {
            span: Duration::from_millis(span),
            buckets,
        }),
    ];
    // Shares of a power of two, so that the model's float products are exact.
    let half_open = prop_oneof![
        Just(HalfOpen::Probes),
        (0..3_i32, 0..3_i32, 0..4_u32, 0..15_u64).prop_map(|(first, factor, stages, hold)| {
            HalfOpen::Progressive {
                first: 0.5_f64.powi(first + 1),
                factor: 2.0_f64.powi(factor),
                stages,
                hold: Duration::from_millis(hold * 100),
            }
        }),
    ];
    (
        record,
        prop_oneof![Just(0.25), Just(0.5), Just(1.0)],
        prop_oneof![Just(0.5), Just(1.0)],
        0..10_u32,
        1..4_u32,
        (0..20_u64, 50..500_u64, 1..15_u64),
        half_open,
    )
        .prop_map(
            |(record, failure_rate, slow_rate, minimum, probes, (open, slow, lease), half_open)| {
                Classic {
                    record,
                    failure_rate,
                    slow_rate,
                    slow_call: Duration::from_millis(slow),
                    minimum,
                    open: OpenWait::Fixed(Duration::from_millis(open * 100)),
                    probes,
                    lease: Duration::from_millis(lease * 100),
                    half_open,
                    ..CLASSIC
                }
            },
        )
}

proptest! {
    // Any run of calls, settles and retunes, in any order, at any pace, the clock sometimes
    // going back: the breaker admits and refuses as the model does, stands in the model's
    // state, reports the model's changes of state one by one, opens on the shares the
    // model's window counts, and never has more probes out than its policy permits; a probe
    // whose lease ran out gives its place up.
    #[test]
    fn decides_as_the_naive_model_and_never_has_more_probes_out_than_permitted(
        first in policies(),
        second in policies(),
        ops in ops(),
    ) {
        let mut breaker = ClassicBreaker::new(first, Duration::ZERO);
        let mut model = Model::new(first);
        let mut out: Vec<(ClassicPermit, Ticket)> = Vec::new();
        let mut t = 0_u64;
        for op in ops {
            // The reading this step passes; `t` is the latest forward one.
            let mut reading = t;
            let mut new_probe = false;
            match op {
                Op::Check { wait, back } => {
                    if back {
                        reading = t.saturating_sub(wait * 1_000_000);
                    } else {
                        t += wait * 1_000_000;
                        reading = t;
                    }
                    let now = Duration::from_nanos(reading);
                    let refusing = breaker.ratio(now) == 1.0;
                    let mine = breaker.check(now);
                    let theirs = model.check(reading);
                    prop_assert_eq!(mine.is_ok(), theirs.is_ok(), "at {:?}", now);
                    prop_assert_eq!(refusing, mine.is_err(), "ratio at {:?}", now);
                    match (mine, theirs) {
                        (Ok(permit), Ok(ticket)) => {
                            new_probe = ticket.probe.is_some();
                            out.push((permit, ticket));
                        }
                        (Err(reason), Err(state)) => {
                            prop_assert_eq!(reason.state, state);
                            if state == State::Open {
                                prop_assert_eq!(
                                    (reason.failure_rate, reason.slow_rate),
                                    model.opened_by,
                                    "the shares the window counted"
                                );
                            }
                        }
                        _ => unreachable!(),
                    }
                }
                Op::Settle { index, wait, failed } => {
                    if out.is_empty() {
                        continue;
                    }
                    t += wait * 1_000_000;
                    reading = t;
                    let now = Duration::from_nanos(t);
                    let (permit, ticket) = out.remove(index % out.len());
                    let back = if failed {
                        breaker.fail(permit, now)
                    } else {
                        breaker.pass(permit, now)
                    };
                    prop_assert!(back.is_none());
                    model.settle(ticket, failed, t);
                }
                Op::Retune { other, force } => {
                    let policy = Classic { force, ..if other { second } else { first } };
                    breaker.retune(policy, Duration::from_nanos(t));
                    model.retune(policy, t);
                }
            }
            let now = Duration::from_nanos(reading);
            prop_assert_eq!(breaker.state(now), model.state(), "at {:?}", now);
            prop_assert_eq!(breaker.take_transition(), model.transition.take());
            prop_assert_eq!(breaker.transitions(), model.transitions);
            // A probe let through now is within the policy's count (a retune that lowers it
            // leaves the probes already out alone).
            if new_probe {
                let probes = breaker.policy().probes.max(1) as usize;
                prop_assert!(model.probes_out(model.latest) <= probes);
            }
        }
    }
}
