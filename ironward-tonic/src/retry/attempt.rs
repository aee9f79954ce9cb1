//! A call whose body has been read, and each attempt made from it.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request};
use http_body_util::Full;
use ironward::grpc::PREVIOUS_ATTEMPTS;

use super::cut::Cut;
use crate::timeout::{self, GRPC_TIMEOUT};

/// A call whose body has been read: what every attempt copies.
pub(super) struct Call {
    pub(super) head: Request<()>,
    pub(super) body: Bytes,
    /// When the call must end, on the layer's clock.
    pub(super) deadline: Option<Duration>,
    /// When it started.
    pub(super) start: Duration,
    /// The deadline's timer, which cancels whatever is in flight when it passes.
    pub(super) cut: Cut,
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
