//! How many event streams are open, against `[http] max_event_streams`: a stream holds a
//! [`StreamSlot`] while it is open, and one more is refused when all are taken.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The count of open streams, against the most allowed.
pub struct Streams {
    open: Arc<AtomicUsize>,
    pub(super) max: usize,
}

/// One open stream's place; freed when dropped.
pub struct StreamSlot(Arc<AtomicUsize>);

impl Streams {
    /// At most `max` at once.
    pub fn new(max: usize) -> Streams {
        Streams { open: Arc::default(), max }
    }

    /// A place for one more stream, or `None` when `max` are open.
    pub fn take(&self) -> Option<StreamSlot> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| (open < self.max).then_some(open + 1))
            .ok()
            .map(|_| StreamSlot(Arc::clone(&self.open)))
    }

    /// How many are open.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
