//! The bodies of a retried call: the request's, read into a buffer to be sent again, and the
//! response's, watched for the status in its trailers.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderValue};
use http_body::{Body, Frame, SizeHint};
use ironward::SharedBudget;
use ironward::grpc::{Code, Halt};
use tonic::Status;

use super::cut::Cut;
use super::report::Ending;
use super::status::code;

/// grpc-go's default retry buffer, `defaultPerRPCBufferSize` (`dialoptions.go`): 256 KiB of a
/// call's messages are kept to be sent again; past it the call is committed.
pub const RETRY_BUFFER: usize = 256 * 1024;

/// A request body as read for its retries.
pub(super) enum Read {
    /// The whole body, within the bound: every attempt sends a copy.
    Whole(Bytes),
    /// The body passed the bound: what was read, then the rest, to be sent once.
    Over(tonic::body::Body),
}

/// Reads `body` to its end, or until it holds more than `bound` bytes.
pub(super) async fn read(mut body: tonic::body::Body, bound: usize) -> Result<Read, Status> {
    let mut read = VecDeque::new();
    let mut held = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame?;
        // A gRPC request carries no trailers; a frame that is not data is kept as it is.
        if let Some(data) = frame.data_ref() {
            held = held.saturating_add(data.len());
        }
        read.push_back(frame);
        if held > bound {
            let rest = Replay { read, rest: body };
            return Ok(Read::Over(tonic::body::Body::new(rest)));
        }
    }
    let mut whole = BytesMut::with_capacity(held);
    for frame in read {
        if let Ok(data) = frame.into_data() {
            whole.extend_from_slice(&data);
        }
    }
    Ok(Read::Whole(whole.freeze()))
}

/// The frames already read, then the rest of the body.
struct Replay {
    read: VecDeque<Frame<Bytes>>,
    rest: tonic::body::Body,
}

impl Body for Replay {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        match self.read.pop_front() {
            Some(frame) => Poll::Ready(Some(Ok(frame))),
            None => Pin::new(&mut self.rest).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.read.is_empty() && self.rest.is_end_stream()
    }
}

pin_project_lite::pin_project! {
    /// The body of a response a [`GrpcRetryService`](super::GrpcRetryService) returns: the
    /// attempt's own body, frame for frame, watched for the status in its trailers.
    ///
    /// A call committed to an attempt whose response headers arrived ends with a status in the
    /// trailers, after its messages. gRPC A6 counts every successful call towards the
    /// channel's retry throttling (grpc-go's `clientStream.finish`, `stream.go`), so this
    /// body gives the budget its `tokenRatio` back when the trailers say `OK`; it changes
    /// nothing it passes on. The trailers end the call for the layer's metrics too: `OK` is
    /// a `success`, any other status `committed` (see the guide's [metrics](crate::_guide::metrics)). Calls
    /// decided on a trailers-only response have been counted already, and their body watches
    /// nothing.
    ///
    /// Should the call's deadline pass before the attempt's trailers come, the body ends there
    /// with trailers of its own, `grpc-status: 4` (`DEADLINE_EXCEEDED`), as grpc-go's client
    /// ends a stream at its deadline; the call is then counted `deadline`, and dropping the
    /// body cancels the attempt's stream (the [module docs](super)' "The deadline").
    pub struct ResponseBody<B> {
        #[pin]
        inner: B,
        budget: Option<Arc<SharedBudget>>,
        ending: Option<Ending>,
        cut: Cut,
        // Where the body is: still coming, ended by its own trailers or end, or cut.
        state: State,
    }
}

/// Where a [`ResponseBody`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Frames are still coming, and the deadline may cut them.
    Open,
    /// The attempt's own trailers, or its end, have come: nothing is cut after them.
    Ended,
    /// The deadline passed: the body ended with `DEADLINE_EXCEEDED` trailers of its own.
    Cut,
}

impl<B> ResponseBody<B> {
    pub(super) fn new(inner: B, budget: Option<Arc<SharedBudget>>) -> Self {
        Self {
            inner,
            budget,
            ending: None,
            cut: Cut::never(),
            state: State::Open,
        }
    }

    /// A body whose trailers end the call for `ending`, and give `budget` back on `OK`; at
    /// `cut` it ends with `DEADLINE_EXCEEDED` trailers instead.
    pub(super) fn ending(
        inner: B,
        budget: Option<Arc<SharedBudget>>,
        ending: Ending,
        cut: Cut,
    ) -> Self {
        Self {
            inner,
            budget,
            ending: Some(ending),
            cut,
            state: State::Open,
        }
    }

    /// The attempt's own body, taken out (its status then counts for nothing).
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: fmt::Debug> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseBody")
            .field("inner", &self.inner)
            .field("watched", &(self.budget.is_some() || self.ending.is_some()))
            .finish()
    }
}

impl<B: Body> Body for ResponseBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        match *this.state {
            State::Cut => return Poll::Ready(None),
            // The deadline, before the attempt's next frame: at it the call ends with
            // `DEADLINE_EXCEEDED`, as grpc-go's client ends a stream whose deadline passes.
            // Dropping this body, as tonic does once it has read that status, cancels the
            // attempt's stream.
            State::Open if this.cut.poll(cx).is_ready() => {
                *this.state = State::Cut;
                this.budget.take();
                if let Some(ending) = this.ending.take() {
                    ending.stopped(Halt::Deadline, Code::DeadlineExceeded);
                }
                return Poll::Ready(Some(Ok(Frame::trailers(exceeded()))));
            }
            State::Open | State::Ended => {}
        }
        let polled = this.inner.poll_frame(cx);
        if let Poll::Ready(None) = &polled {
            *this.state = State::Ended;
        }
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(trailers) = frame.trailers_ref()
        {
            *this.state = State::Ended;
            if is_ok(trailers)
                && let Some(budget) = this.budget.take()
            {
                budget.pass();
            }
            // The call was committed when its headers came: its status here is never retried.
            if let Some(ending) = this.ending.take() {
                ending.ended(code(trailers), Halt::Committed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.state == State::Cut || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.state {
            State::Cut => SizeHint::with_exact(0),
            State::Open | State::Ended => self.inner.size_hint(),
        }
    }
}

/// The trailers of a body cut at the deadline: `DEADLINE_EXCEEDED` and why.
fn exceeded() -> HeaderMap {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("4"));
    let message = HeaderValue::from_static("the call's deadline passed");
    trailers.insert("grpc-message", message);
    trailers
}

/// Whether trailers (or a trailers-only response's headers) say `grpc-status: 0`.
fn is_ok(trailers: &HeaderMap) -> bool {
    trailers
        .get("grpc-status")
        .is_some_and(|status| status.as_bytes() == b"0")
}
