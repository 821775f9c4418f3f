//! matrix-sdk's WARN and ERROR lines that report nothing wrong for a bot, kept out of the
//! log unless `RUST_LOG` names a matrix-sdk target (an operator debugging matrix-sdk sees
//! everything). The default filter already caps matrix-sdk at `error`; this holds at any
//! level an operator sets (`RUST_LOG=info` showed 144 of them in 13 minutes of play).
//!
//! Each entry is one line matrix-sdk logs in a healthy run, with why it is expected:
//! - `matrix_sdk_crypto::backups` warns on every sync that room keys have no backup key:
//!   the bot keeps its keys in its own store and uses no server-side backup.
//! - `matrix_sdk::http_client` logs an ERROR for every failed request, the 404s it expects
//!   included (`m.secret_storage.default_key` account data that was never set, the
//!   `m.room.encryption` state of an unencrypted room). Other failures stay in the log,
//!   and the transport logs the ones that matter itself.
//! - `matrix_sdk_crypto::identities::manager` warns that "our own device might have been
//!   deleted" when the first keys query after a new login is answered before the new
//!   device's keys are uploaded. A device really deleted ends the session (the next
//!   request is refused, and the transport says so).

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata};
use tracing_subscriber::layer::{Context, Filter};

/// The expected lines: the target they come from and a piece of their message.
const EXPECTED: &[(&str, &str)] = &[
    ("matrix_sdk_crypto::backups", "no backup key was found"),
    ("matrix_sdk::http_client", "status_code: 404"),
    ("matrix_sdk_crypto::identities::manager", "Our own device might have been deleted"),
];

/// The per-layer filter that drops [`EXPECTED`] lines.
#[derive(Debug, Clone, Copy)]
pub struct Expected {
    /// False when `RUST_LOG` names a matrix-sdk target: then nothing is dropped.
    active: bool,
}

impl Expected {
    /// Active unless `rust_log` (the `RUST_LOG` value, if any) names a matrix-sdk target.
    pub fn unless_asked(rust_log: Option<&str>) -> Self {
        Self { active: !rust_log.is_some_and(|directives| directives.contains("matrix_sdk")) }
    }

    /// True for a WARN or ERROR line of a matrix-sdk target that [`EXPECTED`] lists.
    fn drops(&self, event: &Event<'_>) -> bool {
        let metadata = event.metadata();
        if !self.active || *metadata.level() > Level::WARN || !metadata.target().starts_with("matrix_sdk") {
            return false;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        EXPECTED.iter().any(|(target, piece)| metadata.target() == *target && message.0.contains(piece))
    }
}

impl<S> Filter<S> for Expected {
    fn enabled(&self, _metadata: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        true
    }

    fn event_enabled(&self, event: &Event<'_>, _cx: &Context<'_, S>) -> bool {
        !self.drops(event)
    }
}

/// The `message` field of an event, as text.
struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        }
    }
}
