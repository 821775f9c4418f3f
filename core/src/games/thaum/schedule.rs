//! RULES T-2: when phases end. The default calendar is the host nomic's Cycle 13: three
//! phases a week, Sun–Tue, Wed–Thu and Fri–Sat, each ending at 00:00 UTC of the next
//! one's first day. Pure arithmetic on [`Timestamp`]s; the caller owns the clock.

use serde::{Deserialize, Serialize};

use crate::time::{DAY, Timestamp};

/// How a Thaum table's phases end by themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Phases end on Sunday, Wednesday and Friday at 00:00 UTC.
    #[default]
    Cycle13,
    /// Phases end only when a game master types `!phase next`.
    Manual,
}

/// The weekdays (0 = Sunday) whose midnight ends a Cycle 13 phase.
pub const CYCLE13_BOUNDARY_WEEKDAYS: [i64; 3] = [0, 3, 5];

impl Schedule {
    /// The first phase boundary strictly after `t`, or `None` when phases end only by
    /// command (or `t` is at the end of time).
    pub fn next_boundary_after(self, t: Timestamp) -> Option<Timestamp> {
        match self {
            Schedule::Cycle13 => cycle13_next_boundary_after(t),
            Schedule::Manual => None,
        }
    }

    /// A short description for help and status texts.
    pub fn describe(self) -> &'static str {
        match self {
            Schedule::Cycle13 => "phases end Sunday, Wednesday and Friday at 00:00 UTC",
            Schedule::Manual => "phases end when a game master types `!phase next`",
        }
    }
}

/// The first Sunday, Wednesday or Friday 00:00 UTC strictly after `t`.
pub fn cycle13_next_boundary_after(t: Timestamp) -> Option<Timestamp> {
    let today = t.day_number();
    // A boundary falls at least every three days, so a week ahead always holds one.
    (0..=7).find_map(|offset| {
        let start = Timestamp(today.checked_add(offset)?.checked_mul(DAY)?);
        (start > t && CYCLE13_BOUNDARY_WEEKDAYS.contains(&start.weekday())).then_some(start)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUNDAY: Timestamp = Timestamp::CONSOLE_EPOCH;

    #[test]
    fn t2_cycle13_boundaries_are_sunday_wednesday_friday() {
        // RULES T-2
        let s = Schedule::Cycle13;
        let wed = SUNDAY.plus(3 * DAY);
        let fri = SUNDAY.plus(5 * DAY);
        let next_sun = SUNDAY.plus(7 * DAY);
        assert_eq!(s.next_boundary_after(SUNDAY), Some(wed));
        assert_eq!(s.next_boundary_after(SUNDAY.plus(1)), Some(wed));
        assert_eq!(s.next_boundary_after(wed.plus(-1)), Some(wed));
        assert_eq!(s.next_boundary_after(wed), Some(fri));
        assert_eq!(s.next_boundary_after(fri.plus(DAY)), Some(next_sun));
        assert_eq!(s.next_boundary_after(SUNDAY.plus(-1)), Some(SUNDAY));
    }

    #[test]
    fn manual_schedule_has_no_boundaries_and_extremes_do_not_overflow() {
        assert_eq!(Schedule::Manual.next_boundary_after(SUNDAY), None);
        assert_eq!(cycle13_next_boundary_after(Timestamp(i64::MAX)), None);
        assert!(cycle13_next_boundary_after(Timestamp(i64::MIN)).is_some());
    }

    #[test]
    fn before_the_epoch_still_works() {
        // 1969-12-31 is a Wednesday; the next boundary is Friday 1970-01-02.
        assert_eq!(cycle13_next_boundary_after(Timestamp(-1)), Some(Timestamp(DAY)));
        assert_eq!(Timestamp(DAY).weekday(), 5);
    }
}
