//! The transports' libraries' WARN and ERROR lines that report nothing wrong for a bot
//! ([`EXPECTED`], listed with why by the adapters), kept out of the log unless `RUST_LOG`
//! names one of those libraries' targets (an operator debugging it sees everything). The
//! default filter already caps those libraries at `error`; this holds at any level an
//! operator sets (`RUST_LOG=info` showed 144 of them in 13 minutes of play).

use std::fmt;

use spellbridge_adapters::logs::{CHATTY, EXPECTED};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata};
use tracing_subscriber::layer::{Context, Filter};

/// The per-layer filter that drops [`EXPECTED`] lines.
#[derive(Debug, Clone, Copy)]
pub struct Expected {
    /// False when `RUST_LOG` names a [`CHATTY`] target: then nothing is dropped.
    active: bool,
}

impl Expected {
    /// Active unless `rust_log` (the `RUST_LOG` value, if any) names a [`CHATTY`] target.
    pub fn unless_asked(rust_log: Option<&str>) -> Self {
        Self { active: !rust_log.is_some_and(|directives| directives.contains(CHATTY)) }
    }

    /// True for a WARN or ERROR line of a [`CHATTY`] target that [`EXPECTED`] lists.
    fn drops(&self, event: &Event<'_>) -> bool {
        let metadata = event.metadata();
        if !self.active || *metadata.level() > Level::WARN || !metadata.target().starts_with(CHATTY) {
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
