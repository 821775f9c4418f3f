//! The "may I still act" check: how long this daemon's lease lasts by its own monotonic
//! clock, asked before every network send (the couriers) and before every answer (the
//! daemon loop). The keeper moves the end forward at each successful renewal and ends it
//! when leadership is lost; a process paused past its lease (SIGSTOP, a frozen VM) finds
//! the end passed as soon as it runs again, before its keeper has run, because the
//! monotonic clock kept counting while it was stopped. So what it had queued is never
//! sent.
//!
//! On SQLite there is no lease and the tenure never ends ([`Tenure::unbounded`]).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Until when this daemon may act. Clones share it.
#[derive(Clone, Debug)]
pub struct Tenure(Option<Arc<Mutex<Option<Instant>>>>);

impl Tenure {
    /// No lease (SQLite): always holds.
    pub fn unbounded() -> Self {
        Self(None)
    }

    /// Holds until `end` unless extended.
    pub fn until(end: Instant) -> Self {
        Self(Some(Arc::new(Mutex::new(Some(end)))))
    }

    /// Holds until `end` now (a renewal succeeded); an ended tenure stays ended.
    pub fn extend(&self, end: Instant) {
        if let Some(shared) = &self.0 {
            let mut now = shared.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(until) = now.as_mut() {
                *until = end.max(*until);
            }
        }
    }

    /// Ends it for good (leadership lost).
    pub fn end(&self) {
        if let Some(shared) = &self.0 {
            *shared.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// True while this daemon may still send and answer.
    pub fn holds(&self) -> bool {
        match &self.0 {
            None => true,
            Some(shared) => {
                shared.lock().unwrap_or_else(PoisonError::into_inner).is_some_and(|end| Instant::now() < end)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn it_holds_until_its_end_and_an_ended_one_never_again() {
        assert!(Tenure::unbounded().holds(), "SQLite has no lease");
        let tenure = Tenure::until(Instant::now() + Duration::from_secs(60));
        let seen_by_a_courier = tenure.clone();
        assert!(seen_by_a_courier.holds());
        tenure.extend(Instant::now() - Duration::from_secs(1));
        assert!(seen_by_a_courier.holds(), "an older end never shortens it");
        tenure.end();
        assert!(!seen_by_a_courier.holds(), "lost");
        tenure.extend(Instant::now() + Duration::from_secs(60));
        assert!(!seen_by_a_courier.holds(), "a lost tenure is not renewed");
        let lapsed = Tenure::until(Instant::now() - Duration::from_millis(1));
        assert!(!lapsed.holds(), "the end passed without a renewal (a paused process resumed)");
    }
}
