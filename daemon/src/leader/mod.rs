//! Which daemon leads, when two or more share one PostgreSQL (issue 34): a lease with a
//! fencing epoch, kept in the database, never in a session advisory lock (those vanish
//! silently with a pooled or broken connection).
//!
//! - [`lease`]: the row `leader_lease (epoch, holder, expires_at)`: [`Lease::acquire`]
//!   takes it only when it is free or expired, raising the epoch; [`Lease::renew`]
//!   extends it for the current holder and epoch only; [`Lease::release`] frees it. Every
//!   time is the database's clock, never a daemon's.
//! - [`fence`]: [`fenced`], the check a journal commit runs in its own transaction: it
//!   fails with [`FenceError`] once the epoch is stale or the lease ran out.
//! - [`keeper`]: the task that renews the lease and reports, on a watch channel, the
//!   moment leadership is lost, so the daemon can stop acting at once.
//! - [`schema`]: the numbered PostgreSQL migrations the lease needs.
//!
//! - [`tenure`]: until when, by this machine's monotonic clock, the daemon may still send
//!   and answer; asked before every send and every answer.
//! - [`standby`]: a daemon that finds the lease held follows the journal and takes the
//!   lease over once it runs out.
//! - [`lead`]: `spellbridge run` on `[store] url` takes the lease (or stands by first),
//!   keeps it and commits under its fence; once leadership is lost it stops acting at
//!   once and exits non-zero, for its supervisor to start it again as a standby.

pub mod fence;
pub mod keeper;
pub mod lead;
pub mod lease;
pub mod schema;
pub mod standby;
pub mod tenure;

use std::fmt;
use std::time::Duration;

pub use fence::{FENCE_SQL, Fence, FenceError, fenced, judged};
pub use keeper::{Keeper, Leadership, Loss, keep};
pub use lease::{Holding, Lease, Renewal, Term};
pub use tenure::Tenure;

/// A lease's fencing epoch: raised by every take-over, so a larger one is always a later
/// leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Epoch(pub i64);

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The name a daemon holds the lease under, unique to one run of one daemon (operators
/// read it in logs and in the table).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Holder(String);

/// The longest holder name.
pub const HOLDER_MAX: usize = 128;

impl Holder {
    /// A holder named `name`: 1 to [`HOLDER_MAX`] characters, none of them a control
    /// character or whitespace other than a space.
    pub fn new(name: &str) -> Result<Self, SettingsError> {
        let bad = name.chars().any(|c| c.is_control() || (c.is_whitespace() && c != ' '));
        if name.trim().is_empty() || name.chars().count() > HOLDER_MAX || bad {
            return Err(SettingsError::Holder { shown: name.escape_debug().take(80).collect() });
        }
        Ok(Self(name.to_owned()))
    }

    /// `spellbridge@HOST/PID/RANDOM`: this machine's name, this process and 32 random
    /// bits from the OS's CSPRNG, so that a restarted daemon is a new holder.
    pub fn generate() -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().chars().filter(|c| c.is_ascii_graphic()).take(64).collect::<String>())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "host".to_owned());
        let mut random = [0u8; 4];
        #[allow(clippy::expect_used)]
        getrandom::fill(&mut random).expect("the operating system's random generator failed");
        let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
        Self(format!("spellbridge@{host}/{}/{random}", std::process::id()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How long a lease lasts and how often its holder renews it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseSettings {
    ttl: Duration,
    renew_every: Duration,
}

impl LeaseSettings {
    /// The shortest lease.
    pub const TTL_MIN: Duration = Duration::from_secs(1);
    /// The longest lease.
    pub const TTL_MAX: Duration = Duration::from_secs(600);

    /// A lease of `ttl`, renewed every `renew_every`: `ttl` between [`Self::TTL_MIN`]
    /// and [`Self::TTL_MAX`], `renew_every` above zero and at most a third of `ttl`, so
    /// that two renewals can fail before the lease runs out.
    pub fn new(ttl: Duration, renew_every: Duration) -> Result<Self, SettingsError> {
        if !(Self::TTL_MIN..=Self::TTL_MAX).contains(&ttl) {
            return Err(SettingsError::Ttl { ttl });
        }
        if renew_every.is_zero() || renew_every > ttl / 3 {
            return Err(SettingsError::RenewEvery { ttl, renew_every, suggested: ttl / 5 });
        }
        Ok(Self { ttl, renew_every })
    }

    /// How long a lease lasts after it was taken or last renewed.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How often the holder renews.
    pub fn renew_every(&self) -> Duration {
        self.renew_every
    }
}

impl Default for LeaseSettings {
    /// A 5 s lease renewed every second.
    fn default() -> Self {
        Self { ttl: Duration::from_secs(5), renew_every: Duration::from_secs(1) }
    }
}

/// A lease setting or holder name that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// The lease is too short or too long.
    #[error("a lease of {ttl:?} is out of range: give between 1 s and 600 s (5 s is usual)")]
    Ttl {
        /// What was given.
        ttl: Duration,
    },
    /// The renewal interval does not fit the lease.
    #[error(
        "renewing every {renew_every:?} does not fit a lease of {ttl:?}: renew at least three times \
         per lease and more often than never, e.g. every {suggested:?}"
    )]
    RenewEvery {
        /// The lease.
        ttl: Duration,
        /// What was given.
        renew_every: Duration,
        /// A value that fits.
        suggested: Duration,
    },
    /// The holder name is empty, too long or has control characters.
    #[error(
        "the lease holder name \"{shown}\" cannot be used: give 1 to 128 characters without control \
         characters, tabs or newlines (e.g. spellbridge@host1)"
    )]
    Holder {
        /// The name as given, escaped and cut.
        shown: String,
    },
}

/// Why the lease could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The database URL could not be read (the URL itself is not repeated: it may carry a
    /// password).
    #[error(
        "the database URL is not one PostgreSQL understands ({reason}); write it as \
         postgres://USER:PASSWORD@HOST:PORT/DATABASE"
    )]
    Url {
        /// What the parser said.
        reason: String,
    },
    /// The database could not be reached or refused the login.
    #[error("connecting to PostgreSQL at {target}: {source}")]
    Connect {
        /// Host, port and database (never the password).
        target: String,
        /// The cause.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The database's schema is newer than this build.
    #[error(
        "the database has spellbridge's PostgreSQL schema version {found}, newer than this \
         spellbridge knows ({known}); upgrade spellbridge, or use another database"
    )]
    TooNew {
        /// The version found.
        found: i32,
        /// The newest version this build knows.
        known: i32,
    },
    /// A statement failed.
    #[error("PostgreSQL, {what}: {source}")]
    Sql {
        /// What the lease was doing.
        what: &'static str,
        /// The cause.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The `leader_lease` row is gone (someone edited the database by hand).
    #[error(
        "the table leader_lease has no row: it was changed by hand; put it back with \
         INSERT INTO leader_lease (epoch, holder, expires_at) VALUES (<the highest epoch used>, '', 'epoch')"
    )]
    NoRow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_refuse_what_cannot_work_and_say_what_fits() {
        let s = Duration::from_secs;
        assert!(LeaseSettings::new(s(2), Duration::from_millis(500)).is_ok());
        assert_eq!(
            LeaseSettings::new(Duration::from_millis(500), Duration::from_millis(100)),
            Err(SettingsError::Ttl { ttl: Duration::from_millis(500) })
        );
        assert!(LeaseSettings::new(s(601), s(1)).is_err());
        let e = LeaseSettings::new(s(5), s(2)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("every 1s"), "{e}");
        assert!(LeaseSettings::new(s(5), Duration::ZERO).is_err());
        assert!(
            LeaseSettings::new(LeaseSettings::default().ttl(), LeaseSettings::default().renew_every())
                .is_ok()
        );
    }

    #[test]
    fn holder_names_are_printable_and_bounded() {
        assert!(Holder::new("spellbridge@host1").is_ok());
        for bad in ["", "   ", "a\nb", "a\tb", "a\u{7}b", &"x".repeat(129)] {
            let e = Holder::new(bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("1 to 128 characters"), "{bad:?}: {e}");
            assert!(!e.contains('\n'), "the message shows the name escaped: {e}");
        }
        let (a, b) = (Holder::generate(), Holder::generate());
        assert_ne!(a, b, "two runs are two holders");
        assert!(Holder::new(a.as_str()).is_ok(), "{a}");
    }
}
