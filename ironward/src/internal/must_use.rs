//! Doctests that a discarded decision does not compile under `#![deny(unused_must_use)]`.
//!
//! Built only while rustdoc collects doctests, so nothing here is part of the crate. Each
//! `compile_fail` case has a twin that is the same code with the decision kept, and that
//! compiles under the same lint: the case fails for the discarded value and nothing else.
//!
//! A breaker's answer dropped on the floor leaves a call unrecorded:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! breaker.allow(Duration::ZERO, 0.5);
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! let permit = breaker.allow(Duration::ZERO, 0.5);
//! # assert!(permit.is_some());
//! ```
//!
//! A shedder's answer dropped on the floor leaves a call in flight forever:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut shedder = ironward::Shedder::new(ironward::SHED, Duration::ZERO);
//! shedder.allow(Duration::ZERO, 300);
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut shedder = ironward::Shedder::new(ironward::SHED, Duration::ZERO);
//! let ticket = shedder.allow(Duration::ZERO, 300);
//! # assert!(ticket.is_some());
//! ```
//!
//! A take whose answer is dropped spends tokens without enforcing the limit:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut bucket = ironward::Bucket::new(1.0, 1.0, Duration::ZERO);
//! bucket.take(Duration::ZERO, 1.0);
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut bucket = ironward::Bucket::new(1.0, 1.0, Duration::ZERO);
//! let taken = bucket.take(Duration::ZERO, 1.0);
//! # assert!(taken);
//! ```
//!
//! The same for a sliding log and a period:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut limit = ironward::Sliding::new(1, Duration::from_secs(1));
//! limit.take(Duration::ZERO);
//! ```
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut limit = ironward::Period::new(1, Duration::from_secs(1));
//! limit.take(Duration::ZERO);
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut sliding = ironward::Sliding::new(1, Duration::from_secs(1));
//! let mut period = ironward::Period::new(1, Duration::from_secs(1));
//! let answers = (sliding.take(Duration::ZERO), period.take(Duration::ZERO));
//! # assert_eq!(answers, (true, ironward::Usage::Hit));
//! ```
//!
//! An enter whose answer is dropped takes room that nothing gives back:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let mut gate = ironward::Gate::new(1);
//! gate.enter();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! let mut gate = ironward::Gate::new(1);
//! let entered = gate.enter();
//! # assert!(entered);
//! ```
//!
//! The same for the gate shared by `&`, whose decisions take `&self`:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let gate = ironward::SharedGate::new(1);
//! gate.enter();
//! ```
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let gate = ironward::SharedGate::new(1);
//! gate.check();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! let gate = ironward::SharedGate::new(2);
//! let answers = (gate.enter(), gate.check());
//! # assert!(answers.0 && answers.1.is_ok());
//! ```
//!
//! A retry budget asked and not heeded throttles nothing:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let budget = ironward::Budget::default();
//! budget.can_retry();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! let budget = ironward::Budget::default();
//! let retry = budget.can_retry();
//! # assert!(retry);
//! ```
//!
//! The same for the retry budget shared by `&`:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let budget = ironward::SharedBudget::default();
//! budget.can_retry();
//! ```
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let budget = ironward::SharedBudget::default();
//! budget.check();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! let budget = ironward::SharedBudget::default();
//! let answers = (budget.can_retry(), budget.check());
//! # assert!(answers.0 && answers.1.is_ok());
//! ```
//!
//! A permit or ticket let go of without being settled:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! let permit = breaker.allow(Duration::ZERO, 0.5).unwrap();
//! let _ = permit;
//! breaker.allow(Duration::ZERO, 0.5).unwrap();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! let permit = breaker.allow(Duration::ZERO, 0.5).unwrap();
//! let _ = permit;
//! let _permit = breaker.allow(Duration::ZERO, 0.5).unwrap();
//! ```
//!
//! Asking for the reason does not make the answer optional: a discarded `check` is the same
//! mistake as a discarded `allow`.
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! breaker.check(Duration::ZERO, 0.5);
//! ```
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! let mut gate = ironward::Gate::new(1);
//! gate.check();
//! ```
//!
//! ```
//! #![deny(unused_must_use)]
//! use core::time::Duration;
//! let mut breaker = ironward::SreBreaker::new(ironward::SRE, Duration::ZERO);
//! let mut gate = ironward::Gate::new(1);
//! let answers = (breaker.check(Duration::ZERO, 0.5), gate.check());
//! # assert!(answers.0.is_ok() && answers.1.is_ok());
//! ```
