//! What the run records: the peak over any window, a row per interval, and the run's
//! figures at its end.

use core::time::Duration;

use ironward::Limiter;

use crate::report::{Row, VariantRun};
use crate::scenario::Variant;

use super::Engine;
use super::call::What;

impl Engine {
    /// Counts an attempt that reached the backend towards the peak over any window.
    ///
    /// The stamps not yet pruned are at least the attempts in the window, so while they are
    /// no more than the interval's peak, the true count cannot raise it and nothing need be
    /// pruned: the window is pruned only when the stale count passes the peak, a batch of
    /// stamps at a time (a loop that runs to its end, not one that mispredicts its exit on
    /// most calls). The run's peak is the greatest of the intervals', taken as each closes.
    #[inline(always)]
    pub(super) fn count_in_window(&mut self) {
        self.stamps.push(self.now);
        if ((self.stamps.len() - self.first) as u64) <= self.row.peak_window {
            return;
        }
        self.prune_window();
        let inside = (self.stamps.len() - self.first) as u64;
        self.row.peak_window = self.row.peak_window.max(inside);
    }

    /// Forgets the attempts that have left the window ending now.
    ///
    /// The stamps are in time order, so those that left are a prefix.
    #[cold]
    fn prune_window(&mut self) {
        let (now, window) = (self.now, self.window);
        let left = self.stamps[self.first..].iter();
        self.first += left.take_while(|&&t| now - t >= window).count();
        // Drop the stamps gone once they are most of the vector: a copy per stamp, at most.
        if self.first > 4096 && self.first * 2 > self.stamps.len() {
            self.stamps.drain(..self.first);
            self.first = 0;
        }
    }

    /// Closes the interval ending now and opens the next.
    pub(super) fn close_row(&mut self) {
        let now = self.at();
        let quantile = |q| self.row_latency.quantile(q).map(Duration::from_micros);
        let (p50, p99) = (quantile(0.5), quantile(0.99));
        let row = &mut self.row;
        row.p50 = p50;
        row.p99 = p99;
        row.in_flight = self.server.inside();
        row.cpu = self.server.cpu();
        row.breaker_ratio = self.front.as_ref().map_or(0.0, |front| front.ratio(now));
        row.limit = self.limiter.as_ref().map_or(0, Limiter::limit);
        if let Some(shedder) = &self.shedder {
            row.shedder_flying = shedder.flying();
            row.shedder_average = shedder.average();
        }
        self.prune_window();
        let next = Row {
            start: now,
            peak_in_flight: self.server.inside(),
            peak_window: (self.stamps.len() - self.first) as u64,
            ..Row::default()
        };
        self.peak_window = self.peak_window.max(self.row.peak_window);
        self.rows.push(core::mem::replace(&mut self.row, next));
        self.latency.merge(&self.row_latency);
        self.row_latency.clear();
    }

    pub(super) fn finish(self, v: &Variant) -> VariantRun {
        let unfinished = self
            .events
            .waiting()
            .filter(|what| match what {
                What::Finish { .. } => false,
                // A closed-loop client about to send: no call of it is under way.
                What::Start { call } => call.attempt > 1,
                _ => true,
            })
            .count() as u64
            + self.chaos.as_ref().map_or(0, |chaos| chaos.hung);
        let quantile = |q| self.latency.quantile(q).map(Duration::from_micros);
        VariantRun {
            variant: v.clone(),
            rows: self.rows,
            peak_window: self.peak_window,
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: (self.latency.total() > 0).then(|| Duration::from_micros(self.latency.max())),
            last_end: self.last_end.map(Duration::from_nanos),
            unfinished,
        }
    }
}
