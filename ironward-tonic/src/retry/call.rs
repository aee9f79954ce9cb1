//! One call: its policy looked up, its body read, its attempts sent and decided.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body_util::Full;
use ironward::grpc::{
    Code, Outcome, PREVIOUS_ATTEMPTS, PUSHBACK, Policy, RetryPlan, RetryPolicy, Step, Stop,
};
use tower_service::Service;

use super::body::{Read, ResponseBody, read};
use super::cut::{Cut, Passed, exceeded};
use super::hedge::hedge;
use super::layer::Config;
use super::report::{Ending, retrying};
use super::service::BoxError;
use crate::timeout::{self, GRPC_TIMEOUT};

/// Sends `request` on `ready` (already made ready), and again on clones of it as the
/// method's retry or hedging policy says.
pub(super) async fn run<S, B>(
    ready: S,
    request: Request<tonic::body::Body>,
    config: Arc<Config>,
) -> Result<Response<ResponseBody<B>>, BoxError>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    let entry = method(request.uri().path())
        .and_then(|(service, method)| config.service_config.method(service, method));
    // No entry, or one without a policy: sent once, untouched, and not reported.
    let Some((policy, timeout)) = entry.and_then(|e| e.policy.map(|p| (p, e.timeout))) else {
        return once(ready, request, &config, None, Cut::never()).await;
    };
    // The call's deadline: its own `grpc-timeout` or the method's `timeout`, the sooner. A
    // malformed `grpc-timeout` is refused here, never forwarded (the module docs say why).
    let caller = match request.headers().get(GRPC_TIMEOUT) {
        None => None,
        Some(value) => match timeout::decode(value) {
            Some(limit) => Some(limit),
            None => return Err(malformed(value)),
        },
    };
    let limit = caller.into_iter().chain(timeout).min();
    // The timer first: no attempt's `grpc-timeout`, counted from the clock read after it, can
    // end before it (tonic's `Channel` cuts an attempt there, as an error of its own).
    let mut cut = Cut::after(limit);
    let start = config.clock.now();
    let deadline = limit.map(|limit| start.saturating_add(limit));
    let ending = |attempts| Ending {
        meter: Arc::clone(&config.meter),
        attempts,
        waited: Duration::ZERO,
    };
    // A deadline already passed (a `grpc-timeout` of zero): nothing is sent, as grpc-go's
    // client sends nothing for a context already done.
    if cut.passed() {
        ending(0).stopped(Stop::Deadline, Code::DeadlineExceeded);
        return Err(exceeded());
    }
    let (mut parts, body) = request.into_parts();
    let read = match cut.race(read(body, config.buffer)).await {
        Ok(read) => read?,
        Err(Passed) => {
            ending(0).stopped(Stop::Deadline, Code::DeadlineExceeded);
            return Err(exceeded());
        }
    };
    let body = match read {
        Read::Whole(body) => body,
        // Past the retry buffer the call is committed before it is sent (grpc-go's
        // `bufferForRetryLocked`): sent once, as it came but for the time left in its
        // `grpc-timeout`, and cut at the deadline all the same.
        // It is reported, as one attempt and a call committed.
        Read::Over(body) => {
            if let Some(deadline) = deadline {
                let left = deadline.saturating_sub(config.clock.now());
                parts.headers.insert(GRPC_TIMEOUT, timeout::encode(left));
            }
            let request = Request::from_parts(parts, body);
            return once(ready, request, &config, Some(ending(1)), cut).await;
        }
    };
    let call = Call {
        head: Request::from_parts(parts, ()),
        body,
        deadline,
        start,
        cut,
    };
    match policy {
        Policy::Retry(policy) => retry(ready, call, &policy, &config).await,
        Policy::Hedging(policy) => hedge(ready, call, &policy, &config).await,
    }
}

/// A call whose body has been read: what every attempt copies.
pub(super) struct Call {
    head: Request<()>,
    body: Bytes,
    /// When the call must end, on the layer's clock.
    pub(super) deadline: Option<Duration>,
    /// When it started.
    pub(super) start: Duration,
    /// The deadline's timer, which cancels whatever is in flight when it passes.
    pub(super) cut: Cut,
}

/// Sends `call` on `ready`, and again on clones of it as `policy` says.
async fn retry<S, B>(
    mut ready: S,
    mut call: Call,
    policy: &RetryPolicy,
    config: &Config,
) -> Result<Response<ResponseBody<B>>, BoxError>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>> + Clone,
    S::Error: Into<BoxError>,
{
    let mut plan = RetryPlan::new(policy, call.deadline, call.start)?;
    let mut service = None::<S>;
    let meter = &config.meter;
    let mut waited = Duration::ZERO;
    loop {
        let now = config.clock.now();
        let previous = plan.previous_attempts();
        let number = previous.saturating_add(1);
        let ending = || Ending {
            meter: Arc::clone(meter),
            attempts: number,
            waited,
        };
        let attempt = call.attempt(previous, now);
        meter.attempt(number);
        let sending = async {
            match service.as_mut() {
                None => ready.call(attempt).await.map_err(Into::into),
                Some(service) => {
                    std::future::poll_fn(|cx| service.poll_ready(cx))
                        .await
                        .map_err(Into::into)?;
                    service.call(attempt).await.map_err(Into::into)
                }
            }
        };
        // At the deadline the attempt is dropped, which cancels it, and the call ends.
        let Ok(sent): Result<Result<Response<B>, BoxError>, _> = call.cut.race(sending).await
        else {
            ending().stopped(Stop::Deadline, Code::DeadlineExceeded);
            return Err(exceeded());
        };
        let (code, values) = match &sent {
            // Response headers commit the call (A6, "Committing"): the caller reads it to its
            // trailers, and its body tells the budget whether it succeeded, or ends it at the
            // deadline.
            Ok(response) if !is_trailers_only(response.headers()) => {
                let budget = config.budget.clone();
                let cut = call.cut;
                return sent.map(|r| r.map(|b| ResponseBody::ending(b, budget, ending(), cut)));
            }
            Ok(response) => (code(response.headers()), pushback(response.headers())),
            Err(error) => (error_code(&**error), Vec::new()),
        };
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let outcome = Outcome {
            code,
            committed: false,
            pushback: &values,
        };
        let (now, roll) = (config.clock.now(), config.dice.roll());
        let step = plan.on_outcome_shared(outcome, now, roll, config.budget.as_deref());
        match step {
            Step::Wait(wait) => {
                retrying(meter, number, wait, code);
                waited = waited.saturating_add(wait);
                drop(sent);
                // The plan never waits past the deadline, but a loaded runtime may oversleep.
                if call.cut.race(config.clock.sleep(wait)).await.is_err() {
                    let ending = Ending {
                        meter: Arc::clone(meter),
                        attempts: number,
                        waited,
                    };
                    ending.stopped(Stop::Deadline, Code::DeadlineExceeded);
                    return Err(exceeded());
                }
            }
            // Decided on a trailers-only response or an error: the plan has told the budget.
            Step::Done => {
                ending().success();
                return sent.map(|r| r.map(|b| ResponseBody::new(b, None)));
            }
            Step::Stop(stop) => {
                ending().stopped(stop, code);
                return sent.map(|r| r.map(|b| ResponseBody::new(b, None)));
            }
        }
        if service.is_none() {
            service = Some(ready.clone());
        }
    }
}

/// Sends `request` once, as it is; its success still counts for the channel's budget, as
/// grpc-go's `clientStream.finish` counts every successful call. With an `ending` the call is
/// reported, as one attempt and a call committed before it was sent; at `cut` it is cancelled
/// and ends with `DEADLINE_EXCEEDED`.
async fn once<S, B>(
    mut ready: S,
    request: Request<tonic::body::Body>,
    config: &Config,
    ending: Option<Ending>,
    mut cut: Cut,
) -> Result<Response<ResponseBody<B>>, BoxError>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
{
    if let Some(ending) = &ending {
        ending.meter.attempt(1);
    }
    let sent = match cut.race(ready.call(request)).await {
        Ok(sent) => sent.map_err(Into::into),
        Err(Passed) => {
            if let Some(ending) = &ending {
                ending.stopped(Stop::Deadline, Code::DeadlineExceeded);
            }
            return Err(exceeded());
        }
    };
    let response = match sent {
        Ok(response) => response,
        Err(error) => {
            if let Some(ending) = &ending {
                ending.stopped(Stop::Committed, error_code(&*error));
            }
            return Err(error);
        }
    };
    if !is_trailers_only(response.headers()) {
        let budget = config.budget.clone();
        return Ok(response.map(|body| match ending {
            Some(ending) => ResponseBody::ending(body, budget, ending, cut),
            None => ResponseBody::new(body, budget),
        }));
    }
    // Trailers-only: the status is here, and read here.
    if let Some(budget) = config.budget.as_deref()
        && response.headers().get("grpc-status").map(|s| s.as_bytes()) == Some(b"0")
    {
        budget.pass();
    }
    if let Some(ending) = &ending {
        ending.ended(code(response.headers()), Stop::Committed);
    }
    Ok(response.map(|body| ResponseBody::new(body, None)))
}

impl Call {
    /// The attempt to send at `now`: a copy of the call, with `grpc-previous-rpc-attempts`
    /// after the first and the time left until the deadline in `grpc-timeout`.
    pub(super) fn attempt(&self, previous: u32, now: Duration) -> Request<tonic::body::Body> {
        let mut attempt = self.head.clone();
        let headers = attempt.headers_mut();
        if previous > 0 {
            headers.insert(PREVIOUS_ATTEMPTS, HeaderValue::from(previous));
        }
        if let Some(deadline) = self.deadline {
            headers.insert(GRPC_TIMEOUT, timeout::encode(deadline.saturating_sub(now)));
        }
        attempt.map(|()| tonic::body::Body::new(Full::new(self.body.clone())))
    }
}

/// The error a call whose `grpc-timeout` is malformed ends with, before anything is sent: the
/// `INTERNAL` status grpc-go's server answers it with.
fn malformed(value: &HeaderValue) -> BoxError {
    let message = format!("malformed grpc-timeout: {value:?}");
    Box::new(tonic::Status::internal(message))
}

/// `/package.Service/Method` as its service and method, `None` for any other path.
fn method(path: &str) -> Option<(&str, &str)> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    (!service.is_empty() && !method.is_empty() && !method.contains('/'))
        .then_some((service, method))
}

/// Whether the response is trailers-only: its status is in its headers (gRPC over HTTP/2).
pub(super) fn is_trailers_only(headers: &HeaderMap) -> bool {
    headers.contains_key("grpc-status")
}

/// A trailers-only response's code; a value that is no code is `UNKNOWN`, as grpc-go reads
/// it.
pub(super) fn code(headers: &HeaderMap) -> Code {
    headers
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u32>().ok())
        .and_then(Code::from_number)
        .unwrap_or(Code::Unknown)
}

/// The values of `grpc-retry-pushback-ms`; one that is not UTF-8 is passed as `""`, which
/// says stop as grpc-go's reading of it would.
pub(super) fn pushback(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(PUSHBACK)
        .iter()
        .map(|value| value.to_str().unwrap_or("").to_owned())
        .collect()
}

/// The code of an attempt that failed without a response: a `tonic::Status` in the error's
/// chain says its own; any other (a refused connection, a reset stream) is `UNAVAILABLE`, as
/// grpc-go reads a transport's failure.
pub(super) fn error_code(error: &(dyn std::error::Error + 'static)) -> Code {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(status) = error.downcast_ref::<tonic::Status>() {
            return Code::from_number(status.code() as u32).unwrap_or(Code::Unknown);
        }
        source = error.source();
    }
    Code::Unavailable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_method_from_its_path() {
        assert_eq!(method("/pkg.Service/Call"), Some(("pkg.Service", "Call")));
        for bad in [
            "",
            "/",
            "/pkg.Service",
            "/pkg.Service/",
            "//Call",
            "pkg.Service/Call",
        ] {
            assert_eq!(method(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn reads_a_status_code_as_grpc_go_does() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert("grpc-status", HeaderValue::from_static(value));
            code(&headers)
        };
        assert_eq!(with("14"), Code::Unavailable);
        assert_eq!(with("0"), Code::Ok);
        assert_eq!(with("17"), Code::Unknown);
        assert_eq!(with("x"), Code::Unknown);
    }

    #[test]
    fn an_error_is_unavailable_unless_it_carries_a_status() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(error_code(&refused), Code::Unavailable);
        let status = tonic::Status::permission_denied("no");
        assert_eq!(error_code(&status), Code::PermissionDenied);
    }
}
