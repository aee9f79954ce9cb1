//! [`Protect`]: a call run through a pipeline, made from the operation itself.

use std::future::{Future, IntoFuture};

use super::{
    Answer, BreakerSlot, ConcurrencySlot, FallbackSlot, HedgeSlot, Pipeline, RateSlot, RetrySlot,
    TimeoutSlot,
};

/// `.protect(&pipeline)` on any async operation, the extension form of
/// [`Pipeline::call`](super::Pipeline::call): `(|| fetch(id)).protect(&pipeline).await`.
///
/// Implemented for every `FnMut() -> Fut` whose future answers a `Result`. The future
/// borrows the pipeline; clone the pipeline into a task that outlives it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::{Pipeline, Protect, Timeout};
///
/// async fn fetch(id: u32) -> Result<String, std::io::Error> {
///     Ok(format!("item {id}"))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let pipeline = Pipeline::builder().timeout(Timeout::new(Duration::from_secs(1))).build();
/// let item = (|| fetch(7)).protect(&pipeline).await;
/// assert_eq!(item.unwrap(), "item 7");
/// # }
/// ```
pub trait Protect<Fut>: FnMut() -> Fut + Sized {
    /// One call of this operation through every piece of `pipeline`.
    #[allow(clippy::type_complexity)]
    fn protect<T, E, Fb, Rt, Hg, Rl, Cn, Bk, To>(
        self,
        pipeline: &Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To>,
    ) -> impl Future<Output = Answer<T, E>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Hg: HedgeSlot<T, E>,
        Rl: RateSlot,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
    {
        pipeline.call(self)
    }
}

impl<F: FnMut() -> Fut, Fut> Protect<Fut> for F {}
