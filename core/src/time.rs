//! Time as plain numbers. The engine never reads a clock: every action carries the
//! [`Timestamp`] at which it happened, and timers are deadlines the caller fires.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Seconds since 1970-01-01T00:00:00Z, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

/// Seconds in a day.
pub const DAY: i64 = 86_400;

impl Timestamp {
    /// The console's virtual clock starts here: 2026-01-04T00:00:00Z, a Sunday.
    pub const CONSOLE_EPOCH: Timestamp = Timestamp(1_767_484_800);

    /// This time plus `seconds`, saturating at the ends of the range.
    pub fn plus(self, seconds: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(seconds))
    }

    /// Whole days since the epoch (rounding toward the past).
    pub fn day_number(self) -> i64 {
        self.0.div_euclid(DAY)
    }

    /// Day of the week, 0 = Sunday … 6 = Saturday. 1970-01-01 was a Thursday (4).
    pub fn weekday(self) -> i64 {
        (self.day_number() + 4).rem_euclid(7)
    }

    /// Midnight UTC at the start of this time's day.
    pub fn start_of_day(self) -> Timestamp {
        Timestamp(self.day_number().saturating_mul(DAY))
    }
}

impl fmt::Display for Timestamp {
    /// ISO 8601 in UTC, e.g. `2026-01-04T00:00:00Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = civil_from_days(self.day_number());
        let secs = self.0.rem_euclid(DAY);
        write!(f, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
    }
}

/// Year, month, day of a day number (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses a duration such as `90s`, `15m`, `3h` or `2d` into seconds.
pub fn parse_duration(text: &str) -> Option<i64> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let multiplier = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => DAY,
        _ => return None,
    };
    let number: i64 = text[..text.len() - 1].parse().ok()?;
    if number < 0 {
        return None;
    }
    number.checked_mul(multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_epoch_is_a_sunday_at_midnight() {
        assert_eq!(Timestamp::CONSOLE_EPOCH.weekday(), 0);
        assert_eq!(Timestamp::CONSOLE_EPOCH.to_string(), "2026-01-04T00:00:00Z");
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("3d"), Some(3 * DAY));
        assert_eq!(parse_duration("15m"), Some(900));
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("99999999999999999d"), None);
    }
}
