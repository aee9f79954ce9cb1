//! Time in tests: a manual clock and scripted dice run every wait at once and exactly.
//!
//! In a test, a manual clock runs every wait at once and exactly:
//!
//! ```
//! use std::time::Duration;
//! use ironward::http_retry::{Settings, Stop, StopReason};
//! use ironward_reqwest::{Clock, Dice, RetryMiddleware, gave_up};
//! use reqwest_middleware::ClientBuilder;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (clock, _hand) = Clock::manual(Duration::ZERO);
//! let retry = RetryMiddleware::new(Settings::default())
//!     .with_clock(clock.clone())
//!     .with_dice(Dice::from_fn(|| 1.0)); // no jitter: 200, 400 and 800 ms
//! let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
//! let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
//! let err = client.get(format!("http://{free}/")).send().await.unwrap_err();
//! let gave_up = gave_up(&err).unwrap();
//! assert_eq!(gave_up.stop(), Stop::Decided(StopReason::AttemptsExhausted));
//! assert_eq!(gave_up.retried().waited, Duration::from_millis(1400));
//! assert_eq!(clock.now(), Duration::from_millis(1400));
//! # }
//! ```
