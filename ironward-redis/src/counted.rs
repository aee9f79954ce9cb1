//! [`Counted`]: what a [`Period`](crate::Period) and a [`Sliding`](crate::Sliding) log
//! share, a quota counted over a span, as the scripts and the fallback read it.

use std::time::Duration;

use crate::blocked::Blocked;
use crate::decide::Common;
use crate::local::{Fallback, Local};
use crate::meter::{Meter, Piece};
use crate::{Source, Store, wire};

/// A quota over a span, in the keys named `name`, with a fallback of core limiters `L`.
pub(crate) struct Counted<L> {
    /// Which limiter this is, for telling its reservations from others'.
    pub(crate) id: u64,
    pub(crate) store: Store,
    pub(crate) name: Box<str>,
    pub(crate) quota: u32,
    /// The span as the core reads it (at least 1 ns), for the fallback.
    pub(crate) span: Duration,
    /// The span as the scripts read it: whole microseconds, at least 1.
    pub(crate) micros: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) local: Local<L>,
    /// The keys Redis refused lately, refused again from memory until they could pass.
    pub(crate) blocked: Blocked,
    /// The fallback's quota: the store's share of `quota`, rounded down.
    pub(crate) local_quota: u32,
    pub(crate) meter: Meter,
}

impl<L: Fallback> Counted<L> {
    /// `quota` over `span`, which the core has already read (raised to 1 ns), reporting as
    /// `piece`.
    pub(crate) fn new(store: &Store, name: &str, quota: u32, span: Duration, piece: Piece) -> Self {
        let micros = wire::span_micros(span);
        let options = store.options();
        let name = wire::name(name);
        Self {
            id: crate::reservation::limiter_id(),
            store: store.clone(),
            meter: Meter::new(piece, &name),
            name,
            quota,
            span,
            micros,
            ttl_ms: wire::ttl_ms(Duration::from_micros(micros)),
            local: Local::new(options.local_keys),
            blocked: Blocked::for_store(options),
            // The product is below 2^32, and `as` truncates towards zero.
            local_quota: (f64::from(quota) * options.local_share()) as u32,
        }
    }

    /// The quota that decided an answer from `source`'s store: the fallback's share, or the
    /// whole of it.
    pub(crate) fn quota_of(&self, source: Source) -> u32 {
        match source {
            Source::Redis => self.quota,
            Source::Local => self.local_quota,
        }
    }

    /// Whether the fallback refuses every event because its share of a quota above 0 is
    /// below one event (a share of 0 among them): no core limiter is made for it, and a
    /// refusal's `next` is the probe interval, when Redis may answer again.
    pub(crate) fn refuses_locally(&self) -> bool {
        self.local_quota == 0 && self.quota > 0
    }

    /// The parts the skeleton of [`decide`](crate::decide) reads.
    pub(crate) fn common(&self) -> Common<'_, L> {
        Common {
            id: self.id,
            store: &self.store,
            meter: &self.meter,
            blocked: &self.blocked,
            local: &self.local,
        }
    }

    /// The Redis keys of `key`'s state, one per part.
    pub(crate) fn keys<const N: usize>(
        &self,
        key: Option<&[u8]>,
        parts: [&str; N],
    ) -> [Vec<u8>; N] {
        parts.map(|part| wire::key(&self.name, key, part))
    }
}
