//! One hedged call: attempts sent at the hedging delay, the first to commit kept and the
//! others cancelled.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use http::{Request, Response};
use ironward::grpc::{AttemptEnd, Code, Halt, Hedge, HedgingPlan, HedgingPolicy, Verdict};
use ironward_tokio::Delay;
use tower_service::Service;

use super::attempt::Call;
use super::body::ResponseBody;
use super::config::Config;
use super::error::{BoxError, exceeded};
use super::report::{Ending, hedging};
use super::status::{code, error_code, is_trailers_only, pushback};

/// An attempt in flight: its number and its response to come. Dropping it cancels it: a
/// tonic `Channel` resets the attempt's HTTP/2 stream.
type Flying<B> = (
    u32,
    Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>,
);

/// What the call waits for next.
enum Event<B> {
    /// Attempt `n` ended.
    Ended(u32, Result<Response<B>, BoxError>),
    /// The next hedge is due.
    Due,
    /// The call's deadline passed.
    Cut,
}

/// Sends `call` as `policy` says: the first attempt on `ready`, each hedge on a clone of it,
/// as the core's [`HedgingPlan`] says when, keeping the attempt it commits to.
pub(super) async fn hedge<S, B>(
    ready: S,
    mut call: Call,
    policy: &HedgingPolicy,
    config: &Config,
) -> Result<Response<ResponseBody<B>>, BoxError>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    let budget = config.budget.as_deref();
    let mut plan = HedgingPlan::new(policy, call.deadline, call.start)?;
    let mut flying: Vec<Flying<B>> = Vec::new();
    // The sleep until the next hedge, and when it ends: kept while the hedge stays due then,
    // so that a manual clock is moved once per wait.
    let mut timer: Option<(Duration, Pin<Box<Delay>>)> = None;
    // The service made ready goes to the first attempt, a clone of it to each hedge.
    let spare = ready.clone();
    let mut ready = Some(ready);
    // The result of the last attempt that failed without ending the call, and its code.
    let mut last: Option<(Result<Response<B>, BoxError>, Code)> = None;
    // The attempts sent; a hedged call waits for nothing between them, as they overlap.
    let mut sent = 0u32;
    let ending = |attempts| Ending {
        meter: Arc::clone(&config.meter),
        attempts,
        waited: Duration::ZERO,
    };
    loop {
        let now = config.knobs.clock.now();
        match plan.send_shared(now, budget) {
            Hedge::Send(n) => {
                sent = sent.saturating_add(1);
                match n {
                    0 => config.meter.attempt(1),
                    _ => hedging(
                        &config.meter,
                        n.saturating_add(1),
                        now.saturating_sub(call.start),
                    ),
                }
                let attempt = call.attempt(n, now);
                let service = ready.take().unwrap_or_else(|| spare.clone());
                flying.push((n, send(service, attempt)));
                timer = None;
                continue;
            }
            Hedge::Wait(wait) => {
                let due = now.saturating_add(wait);
                if timer.as_ref().is_none_or(|(at, _)| *at != due) {
                    timer = Some((due, Box::pin(config.knobs.clock.sleep(wait))));
                }
            }
            Hedge::Halt(stop) => {
                timer = None;
                // Nothing in flight and nothing to come: the last attempt's result is the
                // call's (were none sent, which a deadline passed before the call keeps from
                // happening by ending it first, DEADLINE_EXCEEDED).
                if flying.is_empty() {
                    let (last, code) = last
                        .take()
                        .unwrap_or_else(|| (Err(exceeded()), Code::DeadlineExceeded));
                    ending(sent).stopped(stop, code);
                    return last.map(|r| r.map(|b| ResponseBody::new(b, None)));
                }
            }
        }
        let event = poll_fn(|cx| {
            // The deadline first: an attempt that ends as it passes is cut all the same.
            if call.cut.poll(cx).is_ready() {
                return Poll::Ready(Event::Cut);
            }
            for at in 0..flying.len() {
                if let Poll::Ready(ended) = flying[at].1.as_mut().poll(cx) {
                    let (n, _) = flying.swap_remove(at);
                    return Poll::Ready(Event::Ended(n, ended));
                }
            }
            match timer.as_mut().map(|(_, sleep)| sleep.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Event::Due),
                _ => Poll::Pending,
            }
        })
        .await;
        let (n, ended) = match event {
            Event::Due => {
                timer = None;
                continue;
            }
            Event::Ended(n, ended) => (n, ended),
            // Every attempt in flight is cancelled (dropped), and the call ends.
            Event::Cut => {
                flying.clear();
                ending(sent).stopped(Halt::Deadline, Code::DeadlineExceeded);
                return Err(exceeded());
            }
        };
        let (code, values) = match &ended {
            // Response headers commit the call to this attempt (A6, "Committing"): the others
            // are cancelled, and the body tells the budget whether the call succeeded.
            Ok(response) if !is_trailers_only(response.headers()) => {
                let _cancel = plan.commit(n);
                flying.clear();
                let (budget, ending, cut) = (config.budget.clone(), ending(sent), call.cut);
                return ended.map(|r| r.map(|b| ResponseBody::ending(b, budget, ending, cut)));
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
        let verdict = plan.on_outcome_shared(n, outcome, config.knobs.clock.now(), budget);
        match verdict {
            Verdict::Commit { .. } | Verdict::Fail(_) => {
                // The attempts still in flight are the ones to cancel: dropped.
                flying.clear();
                match verdict {
                    // A commit is to a success or to a fatal code, which is not retried.
                    Verdict::Fail(stop) => ending(sent).stopped(stop, code),
                    _ => ending(sent).ended(code, Halt::NotRetryable),
                }
                return ended.map(|r| r.map(|b| ResponseBody::new(b, None)));
            }
            // The call goes on; should nothing more be sent, this is its result.
            Verdict::Pending => last = Some((ended, code)),
            Verdict::Ignored => {}
        }
    }
}

/// Attempt `attempt` on `service`, made ready first.
fn send<S, B>(
    mut service: S,
    attempt: Request<tonic::body::Body>,
) -> Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>> + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
{
    Box::pin(async move {
        poll_fn(|cx| service.poll_ready(cx))
            .await
            .map_err(Into::into)?;
        service.call(attempt).await.map_err(Into::into)
    })
}
