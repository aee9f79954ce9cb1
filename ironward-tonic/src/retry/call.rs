//! One call: its policy looked up, its body read, its attempts sent and decided.

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use ironward::grpc::{AttemptEnd, Code, Halt, Policy, RetryPlan, RetryPolicy, RetryStep};
use tower_service::Service;

use super::attempt::Call;
use super::body::{Read, ResponseBody, read};
use super::config::Config;
use super::cut::{Cut, Passed};
use super::error::{BoxError, exceeded, malformed};
use super::hedge::hedge;
use super::report::{Ending, retrying};
use super::status::{code, error_code, is_trailers_only, pushback};
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
    let start = config.knobs.clock.now();
    let deadline = limit.map(|limit| start.saturating_add(limit));
    let ending = |attempts| Ending {
        meter: Arc::clone(&config.meter),
        attempts,
        waited: Duration::ZERO,
    };
    // A deadline already passed (a `grpc-timeout` of zero): nothing is sent, as grpc-go's
    // client sends nothing for a context already done.
    if cut.passed() {
        ending(0).stopped(Halt::Deadline, Code::DeadlineExceeded);
        return Err(exceeded());
    }
    let (mut parts, body) = request.into_parts();
    let read = match cut.race(read(body, config.buffer)).await {
        Ok(read) => read?,
        Err(Passed) => {
            ending(0).stopped(Halt::Deadline, Code::DeadlineExceeded);
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
                let left = deadline.saturating_sub(config.knobs.clock.now());
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
        let now = config.knobs.clock.now();
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
            ending().stopped(Halt::Deadline, Code::DeadlineExceeded);
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
        let outcome = AttemptEnd {
            code,
            committed: false,
            pushback: &values,
        };
        let (now, roll) = (config.knobs.clock.now(), config.knobs.dice.roll());
        let step = plan.on_outcome_shared(outcome, now, roll, config.budget.as_deref());
        match step {
            RetryStep::Wait(wait) => {
                retrying(meter, number, wait, code);
                waited = waited.saturating_add(wait);
                drop(sent);
                // The plan never waits past the deadline, but a loaded runtime may oversleep.
                if call.cut.race(config.knobs.clock.sleep(wait)).await.is_err() {
                    let ending = Ending {
                        meter: Arc::clone(meter),
                        attempts: number,
                        waited,
                    };
                    ending.stopped(Halt::Deadline, Code::DeadlineExceeded);
                    return Err(exceeded());
                }
            }
            // Decided on a trailers-only response or an error: the plan has told the budget.
            RetryStep::Done => {
                ending().success();
                return sent.map(|r| r.map(|b| ResponseBody::new(b, None)));
            }
            RetryStep::Halt(stop) => {
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
                ending.stopped(Halt::Deadline, Code::DeadlineExceeded);
            }
            return Err(exceeded());
        }
    };
    let response = match sent {
        Ok(response) => response,
        Err(error) => {
            if let Some(ending) = &ending {
                ending.stopped(Halt::Committed, error_code(&*error));
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
        ending.ended(code(response.headers()), Halt::Committed);
    }
    Ok(response.map(|body| ResponseBody::new(body, None)))
}

/// `/package.Service/Method` as its service and method, `None` for any other path.
fn method(path: &str) -> Option<(&str, &str)> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    (!service.is_empty() && !method.is_empty() && !method.contains('/'))
        .then_some((service, method))
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
}
