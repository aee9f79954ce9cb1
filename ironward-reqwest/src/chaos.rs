//! [`ChaosMiddleware`]: the faults a [`SharedChaos`] decides, injected into a reqwest client's
//! requests.

use std::fmt;
use std::future::pending;
use std::time::Duration;

use http::{Extensions, HeaderName, HeaderValue, StatusCode};
use ironward::chaos::{Fault, Injected};
use ironward_tokio::{Clock, SharedChaos};
use reqwest::{Request, Response, ResponseBuilderExt, Url};
use reqwest_middleware::{Middleware, Next};

/// The header every response the [`ChaosMiddleware`] makes up carries, its value the fault's
/// label (`error` or `replace`): a made-up answer is never taken for the server's.
///
/// # Examples
///
/// ```
/// use ironward_reqwest::CHAOS_HEADER;
///
/// assert_eq!(CHAOS_HEADER, "x-ironward-chaos");
/// ```
pub const CHAOS_HEADER: HeaderName = HeaderName::from_static("x-ironward-chaos");

/// The error of a request the [`ChaosMiddleware`] aborted, once the request's own timeout
/// ran out: what reqwest would have answered for a server that never did.
///
/// Returned as `reqwest_middleware::Error::Middleware`, wrapping an `anyhow::Error` that
/// holds it (`downcast_ref::<ChaosAborted>()` on the inner error finds it). A private field
/// leaves room for more numbers.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_reqwest::ChaosAborted;
///
/// let aborted = ChaosAborted::new(Duration::from_millis(300));
/// assert_eq!(aborted.timeout(), Duration::from_millis(300));
/// assert_eq!(aborted.to_string(), "chaos aborted the request: no answer in 300ms");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChaosAborted {
    timeout: Duration,
}

impl ChaosAborted {
    /// An abort that waited out `timeout`.
    #[must_use]
    pub const fn new(timeout: Duration) -> Self {
        Self { timeout }
    }

    /// The request's timeout, which it waited out.
    #[must_use]
    pub const fn timeout(&self) -> Duration {
        self.timeout
    }
}

impl fmt::Display for ChaosAborted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "chaos aborted the request: no answer in {:?}",
            self.timeout
        )
    }
}

impl std::error::Error for ChaosAborted {}

/// A `reqwest_middleware` middleware that injects the faults a [`SharedChaos`] decides into
/// the requests passing it: to see, before production shows it, that the retries, the
/// breaker and the time budget around them hold.
///
/// Each request asks the shared piece for its fault ([`SharedChaos::next`]), and the
/// middleware applies it:
///
/// | fault | what the request gets |
/// | --- | --- |
/// | none, or a [shadow](Injected::shadow) one | sent as usual (a shadow fault is counted and logged by the shared piece) |
/// | [`Error`](Fault::Error) | a made-up response, not sent: `503 Service Unavailable` by default ([`with_error_status`](Self::with_error_status)) |
/// | [`Latency`](Fault::Latency) | sent after the [drawn delay](Injected::delay), slept on its [clock](Self::with_clock) |
/// | [`Abort`](Fault::Abort) | not sent, and no answer: with a timeout of its own (`RequestBuilder::timeout`), an [`ChaosAborted`] error once it has run out (on the clock); without one, pending until the call is dropped or cut (a retry's attempt timeout, a `tokio::time::timeout`) |
/// | [`Replace`](Fault::Replace) | sent, and whatever came back (a response or an error) replaced by a made-up `500 Internal Server Error` ([`with_replace_status`](Self::with_replace_status)) |
///
/// A made-up response has an empty body, the request's URL, the header [`CHAOS_HEADER`]
/// with the fault's label, and the [`Injected`] decision in its extensions.
///
/// **After the retry.** Put it after [`RetryMiddleware`](crate::RetryMiddleware) in the
/// chain (`ClientBuilder::new(client).with(retry).with(chaos)`), so that each attempt asks
/// for its fault and the retry sees injected faults as the server's: a made-up 503 is
/// retried as a real one is. The client's own timeout (`ClientBuilder::timeout`) is applied
/// by reqwest when it sends, which an aborted request never reaches; an abort is ended by the
/// request's own timeout, or by the retry's [attempt
/// timeout](crate::RetryMiddleware::with_attempt_timeout), which cuts it and retries it as
/// any attempt cut short. The [`ChaosAborted`] error is another middleware's, which the retry
/// treats as final: give the retry an attempt timeout shorter than the request's for an
/// abort to be retried.
///
/// `Clone` shares the [`SharedChaos`]: its policy and its request count.
///
/// # Metrics and events
///
/// None of its own: the [`SharedChaos`] counts `ironward.chaos.injected{name, fault,
/// shadow}` and logs each fault it decides (see the guide's
/// [metrics](crate::_guide::metrics)).
///
/// # Examples
///
/// Every request answered 503 without being sent, a retry in front of it:
///
/// ```
/// use std::time::Duration;
/// use ironward::chaos::{Chaos, Fault, Injection};
/// use ironward::http_retry::Settings;
/// use ironward_reqwest::{CHAOS_HEADER, ChaosMiddleware, Clock, RetryMiddleware, SharedChaos};
/// use reqwest_middleware::ClientBuilder;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let down = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
///     ..Chaos::default()
/// };
/// let chaos = SharedChaos::new(down).unwrap().with_seed(42);
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let client = ClientBuilder::new(reqwest::Client::new())
///     .with(RetryMiddleware::new(Settings::default()).with_clock(clock))
///     .with(ChaosMiddleware::new(chaos.clone()))
///     .build();
/// // Nothing listens there: only the made-up answers come back.
/// let response = client.get("http://127.0.0.1:9/").send().await.unwrap();
/// assert_eq!(response.status(), 503);
/// assert_eq!(response.headers()[CHAOS_HEADER], "error");
/// assert_eq!(chaos.requests(), 4, "the first attempt and three retries");
/// # }
/// ```
#[derive(Clone)]
pub struct ChaosMiddleware {
    chaos: SharedChaos,
    error: StatusCode,
    replace: StatusCode,
    clock: Clock,
}

impl ChaosMiddleware {
    /// Injects `chaos`'s faults: an error answered 503, a replacement 500, a latency slept
    /// and an abort's timeout waited out on the monotonic clock.
    pub fn new(chaos: SharedChaos) -> Self {
        Self {
            chaos,
            error: StatusCode::SERVICE_UNAVAILABLE,
            replace: StatusCode::INTERNAL_SERVER_ERROR,
            clock: Clock::default(),
        }
    }

    /// The same, answering an injected error with `status`: `429 Too Many Requests` shows
    /// how the client takes a rate limit, say.
    #[must_use]
    pub fn with_error_status(self, status: StatusCode) -> Self {
        Self {
            error: status,
            ..self
        }
    }

    /// The same, replacing a response with `status`.
    #[must_use]
    pub fn with_replace_status(self, status: StatusCode) -> Self {
        Self {
            replace: status,
            ..self
        }
    }

    /// The same, sleeping a latency and waiting out an abort's timeout on `clock`: on a
    /// [manual](Clock::manual) one they move the clock rather than waiting.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The shared piece that decides: its name, its policy, its request count.
    pub fn chaos(&self) -> &SharedChaos {
        &self.chaos
    }

    /// A made-up answer from `url` with `status`, marked with the fault.
    fn made_up(status: StatusCode, url: Url, injected: Injected) -> Response {
        // The builder is the one way to give reqwest the URL; it fails on nothing given here
        // (no part is parsed), and would only lose the URL if it did.
        let mut response = http::Response::builder()
            .url(url)
            .body(Vec::new())
            .unwrap_or_else(|_| http::Response::new(Vec::new()));
        *response.status_mut() = status;
        let label = HeaderValue::from_static(injected.fault.label());
        response.headers_mut().insert(CHAOS_HEADER, label);
        response.extensions_mut().insert(injected);
        Response::from(response)
    }
}

#[async_trait::async_trait]
impl Middleware for ChaosMiddleware {
    async fn handle(
        &self,
        req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let Some(injected) = self.chaos.next().filter(|injected| !injected.shadow) else {
            return next.run(req, extensions).await;
        };
        match injected.fault {
            Fault::Error => Ok(Self::made_up(self.error, req.url().clone(), injected)),
            Fault::Latency(_) => {
                self.clock.sleep(injected.delay.unwrap_or_default()).await;
                next.run(req, extensions).await
            }
            Fault::Abort => match req.timeout().copied() {
                Some(timeout) => {
                    self.clock.sleep(timeout).await;
                    let aborted = anyhow::Error::new(ChaosAborted::new(timeout));
                    Err(reqwest_middleware::Error::Middleware(aborted))
                }
                None => pending().await,
            },
            Fault::Replace => {
                let url = req.url().clone();
                drop(next.run(req, extensions).await);
                Ok(Self::made_up(self.replace, url, injected))
            }
        }
    }
}

impl fmt::Debug for ChaosMiddleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaosMiddleware")
            .field("chaos", &self.chaos)
            .field("error", &self.error)
            .field("replace", &self.replace)
            .field("clock", &self.clock)
            .finish()
    }
}
