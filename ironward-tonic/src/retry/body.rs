//! The bodies of a retried call: the request's, read into a buffer to be sent again, and the
//! response's, watched for the status in its trailers.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use ironward::SharedBudget;
use ironward::grpc::Stop;
use tonic::Status;

use super::call::code;
use super::report::Ending;

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
    /// a `success`, any other status `committed` (see the crate docs' `# Metrics`). Calls
    /// decided on a trailers-only response have been counted already, and their body watches
    /// nothing.
    pub struct ResponseBody<B> {
        #[pin]
        inner: B,
        budget: Option<Arc<SharedBudget>>,
        ending: Option<Ending>,
    }
}

impl<B> ResponseBody<B> {
    pub(super) fn new(inner: B, budget: Option<Arc<SharedBudget>>) -> Self {
        Self {
            inner,
            budget,
            ending: None,
        }
    }

    /// A body whose trailers end the call for `ending`, and give `budget` back on `OK`.
    pub(super) fn ending(inner: B, budget: Option<Arc<SharedBudget>>, ending: Ending) -> Self {
        Self {
            inner,
            budget,
            ending: Some(ending),
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
        let polled = this.inner.poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(trailers) = frame.trailers_ref()
        {
            if is_ok(trailers)
                && let Some(budget) = this.budget.take()
            {
                budget.pass();
            }
            // The call was committed when its headers came: its status here is never retried.
            if let Some(ending) = this.ending.take() {
                ending.ended(code(trailers), Stop::Committed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether trailers (or a trailers-only response's headers) say `grpc-status: 0`.
fn is_ok(trailers: &HeaderMap) -> bool {
    trailers
        .get("grpc-status")
        .is_some_and(|status| status.as_bytes() == b"0")
}
