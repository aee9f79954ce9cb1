//! Streams drawn ahead of the simulation, on a thread of their own.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Values the first block carries from the drawing thread to the simulation: a short run
/// draws little more than it takes.
const FIRST: usize = 256;
/// Values a block carries at most, each block twice the last: a long run hands a block
/// over every 131,072 values. Each handover wakes the drawing thread, which has caught up
/// and sleeps, and in a virtual machine a wake-up costs the simulating thread tens of
/// microseconds of system time: at 16,384 values a block the `scale` hour spent 0.13 s of
/// system time on about 9,000 of them, and ran 4 % longer than with blocks eight times the
/// size (1 MB for a stream of `f64`s), which spend 0.03 s.
const BLOCK: usize = 131_072;
/// Blocks drawn and not yet taken, at most: what the drawing thread may run ahead by. One
/// is enough, the drawing being several times faster than the taking, and keeps a stream
/// to about three blocks (the one being taken, the one waiting, the one being drawn).
const DEPTH: usize = 1;

/// What fills a block: appends up to the number of values asked for, and fewer only once
/// the stream has ended.
type Fill<T> = Box<dyn FnMut(&mut Vec<T>, usize) + Send>;

/// A stream of values that depends on nothing the simulation does, drawn ahead in blocks by
/// another thread: the simulation takes each value with a load.
///
/// Which call arrives when, how long each admitted call takes and the rolls of chance are
/// each a stream of their own (see [`Dice::fork`](crate::Dice::fork)), taken in order
/// whatever the policies decide. Drawn on the simulating thread they cost a third of a
/// run's work; drawn on a second core they cost it a load each, and the values and their
/// order are the same, so a run is byte for byte what it would be on one thread. Where no
/// thread can be started the blocks are drawn in turn on the simulating thread.
///
/// The drawing thread ends when the stream does or when the `Ahead` is dropped.
pub(crate) struct Ahead<T> {
    /// The block being taken, from `taken` on; empty once the stream has ended.
    block: Vec<T>,
    taken: usize,
    from: Traffic<T>,
}

/// Where the next block comes from.
enum Traffic<T> {
    /// The drawing thread, and the way back for a block taken, to be filled again.
    Thread {
        full: Receiver<Vec<T>>,
        spent: SyncSender<Vec<T>>,
        drawing: JoinHandle<()>,
    },
    /// This thread, drawing a block of the size given when the last is taken; `None` once
    /// the stream has ended.
    Inline(Option<Fill<T>>, usize),
}

impl<T> core::fmt::Debug for Ahead<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let on = match self.from {
            Traffic::Thread { .. } => "thread",
            Traffic::Inline(..) => "inline",
        };
        f.debug_struct("Ahead")
            .field("left", &(self.block.len() - self.taken))
            .field("on", &on)
            .finish()
    }
}

impl<T> Drop for Ahead<T> {
    /// Stops the drawing thread and waits for it: with the way to the simulation closed,
    /// its next hand-over fails and it returns.
    fn drop(&mut self) {
        let from = core::mem::replace(&mut self.from, Traffic::Inline(None, 0));
        if let Traffic::Thread {
            full,
            spent,
            drawing,
        } = from
        {
            drop((full, spent));
            let _ = drawing.join();
        }
    }
}

impl<T: Copy + Send + 'static> Ahead<T> {
    /// The stream `fill` draws, started at once on a thread of its own.
    pub(crate) fn new(fill: impl FnMut(&mut Vec<T>, usize) + Send + 'static) -> Self {
        let fill: Fill<T> = Box::new(fill);
        let (to_sim, full) = sync_channel::<Vec<T>>(DEPTH);
        let (spent, to_draw) = sync_channel::<Vec<T>>(DEPTH + 1);
        // Shared so that it is still here if no thread starts, which drops its closure.
        let ours = Arc::new(Mutex::new(Some(fill)));
        let theirs = Arc::clone(&ours);
        let drawing = std::thread::Builder::new()
            .name("ironward-sim-ahead".into())
            .spawn(move || {
                let taken = theirs.lock().ok().and_then(|mut fill| fill.take());
                let Some(mut fill) = taken else { return };
                let mut wanted = FIRST;
                loop {
                    let mut block = to_draw.try_recv().unwrap_or_default();
                    block.clear();
                    fill(&mut block, wanted);
                    let ended = block.len() < wanted;
                    if to_sim.send(block).is_err() || ended {
                        return;
                    }
                    wanted = (wanted * 2).min(BLOCK);
                }
            });
        let from = match drawing {
            Ok(drawing) => Traffic::Thread {
                full,
                spent,
                drawing,
            },
            Err(_) => Traffic::Inline(ours.lock().ok().and_then(|mut fill| fill.take()), FIRST),
        };
        let mut ahead = Self {
            block: Vec::new(),
            taken: 0,
            from,
        };
        ahead.refill();
        ahead
    }
}

impl<T: Copy> Ahead<T> {
    /// The next value, without taking it; `None` once the stream has ended.
    #[inline]
    pub(crate) fn peek(&self) -> Option<T> {
        self.block.get(self.taken).copied()
    }

    /// Takes the next value; `None` once the stream has ended.
    #[inline]
    pub(crate) fn take(&mut self) -> Option<T> {
        let value = self.peek()?;
        self.taken += 1;
        if self.taken == self.block.len() {
            self.refill();
        }
        Some(value)
    }

    /// Replaces the block taken with the next one, or with nothing once the stream ended.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        let spent = core::mem::take(&mut self.block);
        self.taken = 0;
        match &mut self.from {
            Traffic::Thread {
                full, spent: back, ..
            } => {
                if let Ok(block) = full.recv() {
                    self.block = block;
                }
                let _ = back.try_send(spent);
            }
            Traffic::Inline(fill, wanted) => {
                let Some(draw) = fill else { return };
                let mut block = spent;
                block.clear();
                draw(&mut block, *wanted);
                if block.len() < *wanted {
                    *fill = None;
                }
                *wanted = (*wanted * 2).min(BLOCK);
                self.block = block;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dice;
    use std::sync::atomic::{AtomicBool, Ordering};

    impl<T: Copy> Ahead<T> {
        /// The stream `fill` draws, on this thread, as where no thread can start.
        fn inline(fill: impl FnMut(&mut Vec<T>, usize) + Send + 'static) -> Self {
            let mut ahead = Self {
                block: Vec::new(),
                taken: 0,
                from: Traffic::Inline(Some(Box::new(fill)), FIRST),
            };
            ahead.refill();
            ahead
        }
    }

    fn words(seed: u64, count: Option<usize>) -> impl FnMut(&mut Vec<u64>, usize) + Send {
        let mut dice = Dice::new(seed);
        let mut left = count.unwrap_or(usize::MAX);
        move |block, wanted| {
            let n = wanted.min(left);
            left -= n;
            block.extend((0..n).map(|_| dice.next_u64()));
        }
    }

    // Across the growing blocks and many hand-overs, on the thread and inline: the values
    // the generator gives, in its order.
    #[test]
    fn a_stream_drawn_ahead_is_the_stream_drawn_in_turn() {
        let mut dice = Dice::new(9);
        let mut threaded = Ahead::new(words(9, None));
        let mut inline = Ahead::inline(words(9, None));
        for i in 0..5 * BLOCK {
            let expected = dice.next_u64();
            assert_eq!(threaded.peek(), Some(expected), "value {i}");
            assert_eq!(threaded.take(), Some(expected), "value {i}");
            assert_eq!(inline.take(), Some(expected), "value {i}");
        }
    }

    // A stream that ends at a block's edge, inside a block, or before the first value.
    #[test]
    fn a_finite_stream_ends_with_none_and_stays_ended() {
        for count in [0, 1, FIRST - 1, FIRST, FIRST + 1, 3 * FIRST, 40_000] {
            for mut ahead in [
                Ahead::new(words(3, Some(count))),
                Ahead::inline(words(3, Some(count))),
            ] {
                let mut dice = Dice::new(3);
                for _ in 0..count {
                    assert_eq!(ahead.take(), Some(dice.next_u64()), "{count}");
                }
                assert_eq!((ahead.peek(), ahead.take()), (None, None), "{count}");
                assert_eq!(ahead.take(), None, "{count}");
            }
        }
    }

    // The drawing thread has returned by the time the stream is dropped, what it held
    // dropped with it, though the stream never ends and the thread ran ahead.
    #[test]
    fn dropping_a_stream_ends_its_thread() {
        struct Flag(Arc<AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = Flag(Arc::clone(&dropped));
        let mut ahead = Ahead::new(move |block: &mut Vec<u8>, wanted| {
            let _held = &flag;
            block.resize(wanted, 7);
        });
        assert_eq!(ahead.take(), Some(7));
        drop(ahead);
        assert!(dropped.load(Ordering::SeqCst));
    }
}
