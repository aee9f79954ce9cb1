//! Properties of the classic breaker, against a naive model that keeps every outcome in a
//! list and reads the rules off it as `Classic`'s docs state them.

use core::time::Duration;

use ironward::classic::{OpenWait, Record, State};
use ironward::{CLASSIC, Classic, ClassicBreaker, ClassicPermit};
use proptest::prelude::*;

/// What the model hands out for a call, beside the breaker's own permit.
#[derive(Debug, Clone, Copy)]
struct Ticket {
    epoch: u64,
    at: u64,
    probe: Option<u64>,
}

#[derive(Debug, Clone)]
enum Stage {
    Closed,
    Open {
        until: u64,
    },
    HalfOpen {
        out: Vec<(u64, u64)>,
        heard: Vec<(bool, bool)>,
    },
}

/// The rules, read off plain lists.
struct Model {
    policy: Classic,
    /// Every outcome the closed record heard since it last started.
    log: Vec<(bool, bool)>,
    stage: Stage,
    epoch: u64,
    next: u64,
}

impl Model {
    fn new(policy: Classic) -> Self {
        Self {
            policy,
            log: Vec::new(),
            stage: Stage::Closed,
            epoch: 0,
            next: 0,
        }
    }

    fn state(&self) -> State {
        match self.stage {
            Stage::Closed => State::Closed,
            Stage::Open { .. } => State::Open,
            Stage::HalfOpen { .. } => State::HalfOpen,
        }
    }

    fn nanos(d: Duration) -> u64 {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    fn check(&mut self, t: u64) -> Option<Ticket> {
        if let Stage::Open { until } = self.stage {
            if t < until {
                return None;
            }
            self.stage = Stage::HalfOpen {
                out: Vec::new(),
                heard: Vec::new(),
            };
            self.epoch += 1;
        }
        let (epoch, probes, lease) = (self.epoch, u64::from(self.policy.probes), self.policy.lease);
        match &mut self.stage {
            Stage::Closed => Some(Ticket {
                epoch,
                at: t,
                probe: None,
            }),
            Stage::Open { .. } => unreachable!(),
            Stage::HalfOpen { out, heard } => {
                out.retain(|&(_, expires)| expires > t);
                if (out.len() + heard.len()) as u64 >= probes {
                    return None;
                }
                self.next += 1;
                out.push((self.next, t.saturating_add(Self::nanos(lease))));
                Some(Ticket {
                    epoch,
                    at: t,
                    probe: Some(self.next),
                })
            }
        }
    }

    fn trips(&self, calls: &[(bool, bool)]) -> bool {
        let n = calls.len() as f64;
        let failed = calls.iter().filter(|c| c.0).count() as f64;
        let slow = calls.iter().filter(|c| c.1).count() as f64;
        failed / n >= self.policy.failure_rate || slow / n >= self.policy.slow_rate
    }

    fn open(&mut self, t: u64) {
        let OpenWait::Fixed(wait) = self.policy.open else {
            unreachable!("the model runs fixed waits")
        };
        self.stage = Stage::Open {
            until: t.saturating_add(Self::nanos(wait)),
        };
        self.epoch += 1;
    }

    fn settle(&mut self, ticket: Ticket, failed: bool, t: u64) {
        let slow = t - ticket.at > Self::nanos(self.policy.slow_call);
        if ticket.epoch != self.epoch {
            return;
        }
        match &mut self.stage {
            Stage::Closed => {
                self.log.push((failed, slow));
                let trips = match self.policy.record {
                    Record::Count { calls } => {
                        let window = &self.log[self.log.len().saturating_sub(calls as usize)..];
                        let minimum = self.policy.minimum.min(calls).max(1) as usize;
                        window.len() >= minimum && self.trips(window)
                    }
                    Record::Consecutive { failures } => {
                        let run = self.log.iter().rev().take_while(|c| c.0).count();
                        run >= failures as usize
                    }
                    Record::Time { .. } => unreachable!("the model runs count and run records"),
                };
                if trips {
                    self.open(t);
                }
            }
            Stage::Open { .. } => {}
            Stage::HalfOpen { out, heard } => {
                let Some(i) = out.iter().position(|&(id, _)| Some(id) == ticket.probe) else {
                    return;
                };
                out.remove(i);
                heard.push((failed, slow));
                if heard.len() as u64 >= u64::from(self.policy.probes) {
                    let heard = heard.clone();
                    if self.trips(&heard) {
                        self.open(t);
                    } else {
                        self.log.clear();
                        self.stage = Stage::Closed;
                        self.epoch += 1;
                    }
                }
            }
        }
    }

    fn probes_out(&self, t: u64) -> usize {
        match &self.stage {
            Stage::HalfOpen { out, .. } => out.iter().filter(|&&(_, e)| e > t).count(),
            _ => 0,
        }
    }
}

/// One step: a call asked for after `wait` ms, or the `index`-th call out settled after `wait`
/// ms, failed or not.
#[derive(Debug, Clone, Copy)]
enum Op {
    Check {
        wait: u64,
    },
    Settle {
        index: usize,
        wait: u64,
        failed: bool,
    },
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            (0..400_u64).prop_map(|wait| Op::Check { wait }),
            (any::<usize>(), 0..400_u64, prop::bool::weighted(0.6)).prop_map(
                |(index, wait, failed)| Op::Settle {
                    index,
                    wait,
                    failed
                }
            ),
        ],
        0..300,
    )
}

fn policies() -> impl Strategy<Value = Classic> {
    (
        prop_oneof![
            (1..8_u32).prop_map(|calls| Record::Count { calls }),
            (1..4_u32).prop_map(|failures| Record::Consecutive { failures }),
        ],
        prop_oneof![Just(0.25), Just(0.5), Just(1.0)],
        prop_oneof![Just(0.5), Just(1.0)],
        0..10_u32,
        1..4_u32,
        (100..2_000_u64, 50..500_u64, 100..1_500_u64),
    )
        .prop_map(
            |(record, failure_rate, slow_rate, minimum, probes, (open, slow, lease))| Classic {
                record,
                failure_rate,
                slow_rate,
                slow_call: Duration::from_millis(slow),
                minimum,
                open: OpenWait::Fixed(Duration::from_millis(open)),
                probes,
                lease: Duration::from_millis(lease),
                ..CLASSIC
            },
        )
}

proptest! {
    // Any run of calls and settles, in any order, at any pace: the breaker admits and refuses
    // as the model does, stands in the model's state, and never has more probes out than its
    // policy permits; a probe whose lease ran out gives its place up.
    #[test]
    fn decides_as_the_naive_model_and_never_has_more_probes_out_than_permitted(
        policy in policies(),
        ops in ops(),
    ) {
        let mut breaker = ClassicBreaker::new(policy, Duration::ZERO);
        let mut model = Model::new(policy);
        let mut out: Vec<(ClassicPermit, Ticket)> = Vec::new();
        let mut t = 0_u64;
        for op in ops {
            match op {
                Op::Check { wait } => {
                    t += wait * 1_000_000;
                    let now = Duration::from_nanos(t);
                    let mine = breaker.check(now);
                    let theirs = model.check(t);
                    prop_assert_eq!(mine.is_ok(), theirs.is_some(), "at {:?}", now);
                    if let (Ok(permit), Some(ticket)) = (mine, theirs) {
                        out.push((permit, ticket));
                    }
                }
                Op::Settle { index, wait, failed } => {
                    if out.is_empty() {
                        continue;
                    }
                    t += wait * 1_000_000;
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
            }
            let now = Duration::from_nanos(t);
            prop_assert_eq!(breaker.state(now), model.state(), "at {:?}", now);
            prop_assert!(model.probes_out(t) <= policy.probes as usize);
        }
    }
}
