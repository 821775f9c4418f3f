//! The daemon's log: the tracing subscriber `spellbridge run` installs, text or JSON
//! (`[log] format`), at the levels `RUST_LOG` sets — except the lines no level may show.
//!
//! The `irc` crate logs every line it sends and receives at `trace` (`[SENT] PASS …`,
//! `[SEND] AUTHENTICATE <base64 of the SASL password>`, `[RECV] … PRIVMSG bot :!cast …`,
//! the link codes the bot sends privately): its targets are capped at `debug` by a
//! filter of its own, so no `RUST_LOG` turns them back on. spellbridge's own code logs
//! who sent a message and where, never what it says.
//!
//! matrix-sdk's WARN and ERROR lines that report nothing wrong for a bot are dropped at
//! any level unless `RUST_LOG` names a matrix-sdk target ([`expected`]).

mod expected;

use tracing::{Level, Metadata};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer as _, Registry};

use self::expected::Expected;
use crate::config::LogFormat;

/// What `RUST_LOG` means when it is not set (the transports' libraries quieted, as the
/// adapters say: [`spellbridge_adapters::logs`]).
pub use spellbridge_adapters::logs::DEFAULT_FILTER;
use spellbridge_adapters::logs::RAW_TARGETS;

/// False for a line no log may show: a `trace` line of a [`RAW_TARGETS`] crate (its raw
/// protocol lines).
pub fn may_show(metadata: &Metadata<'_>) -> bool {
    let target = metadata.target();
    let raw = RAW_TARGETS.iter().any(|crate_name| {
        target.strip_prefix(crate_name).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    });
    !(raw && *metadata.level() == Level::TRACE)
}

/// The subscriber: `RUST_LOG` (else [`DEFAULT_FILTER`]), then [`may_show`] and
/// [`Expected`] (`rust_log` is `RUST_LOG`'s value, if set), written by `writer` as text or
/// JSON lines.
pub fn subscriber<W>(
    format: LogFormat,
    filter: EnvFilter,
    rust_log: Option<&str>,
    writer: W,
) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = tracing_subscriber::fmt::layer().with_writer(writer);
    let lines = match format {
        LogFormat::Text => lines.boxed(),
        LogFormat::Json => lines.json().flatten_event(true).boxed(),
    };
    Registry::default()
        .with(filter)
        .with(lines.with_filter(filter_fn(may_show)).with_filter(Expected::unless_asked(rust_log)))
}

/// Installs the subscriber for the whole process, writing to stderr; `log` records (the
/// `irc` crate's) go through it too.
pub fn init(format: LogFormat) {
    let rust_log = std::env::var(EnvFilter::DEFAULT_ENV).ok();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    subscriber(format, filter, rust_log.as_deref(), std::io::stderr).init();
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex, PoisonError};

    use super::*;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
        }
    }

    #[test]
    fn the_default_filter_hides_matrix_sdk_noise_and_rust_log_raises_it() {
        let lines = |filter: &str| {
            let buffer = Buffer::default();
            let writer = buffer.clone();
            let subscriber =
                subscriber(LogFormat::Text, EnvFilter::new(filter), Some(filter), move || writer.clone());
            tracing::subscriber::with_default(subscriber, || {
                tracing::error!(target: "matrix_sdk::http_client", "Error while sending request: 404");
                tracing::warn!(target: "matrix_sdk_crypto::backups", "no backup");
                tracing::warn!(target: "matrix_sdk::encryption", "an sdk warning");
                tracing::error!(target: "matrix_sdk_base::store", "an sdk error");
                tracing::info!(target: "spellbridge::serve", "our info line");
            });
            buffer.text()
        };
        let quiet = lines(DEFAULT_FILTER);
        for hidden in ["Error while sending request", "no backup", "an sdk warning"] {
            assert!(!quiet.contains(hidden), "{hidden:?} shown by default: {quiet}");
        }
        assert!(quiet.contains("an sdk error") && quiet.contains("our info line"), "{quiet}");
        let raised = lines("info,matrix_sdk=debug,matrix_sdk_crypto=debug");
        for shown in ["Error while sending request", "no backup", "an sdk warning"] {
            assert!(raised.contains(shown), "RUST_LOG did not raise {shown:?}: {raised}");
        }
    }

    /// Issue 31, item 11: at `RUST_LOG=info` matrix-sdk's expected lines stay out (the
    /// missing key backup, a 404, the first login's own-device warning) and its other
    /// warnings and errors stay in; naming a matrix-sdk target shows them all.
    #[test]
    fn matrix_sdk_lines_that_report_nothing_wrong_stay_out_unless_asked_for() {
        let lines = |rust_log: &str| {
            let buffer = Buffer::default();
            let writer = buffer.clone();
            let filter = EnvFilter::new(rust_log);
            let subscriber = subscriber(LogFormat::Text, filter, Some(rust_log), move || writer.clone());
            tracing::subscriber::with_default(subscriber, || {
                tracing::warn!(
                    target: "matrix_sdk_crypto::backups",
                    "Trying to backup room keys but no backup key was found"
                );
                tracing::error!(
                    target: "matrix_sdk::http_client",
                    "Error while sending request: Api(Server(MatrixError(Error {{ status_code: 404, … }})))"
                );
                tracing::warn!(
                    target: "matrix_sdk_crypto::identities::manager",
                    user_id = "@bot:example.org",
                    "Our own device might have been deleted"
                );
                tracing::error!(
                    target: "matrix_sdk::http_client",
                    "Error while sending request: Api(Server(MatrixError(Error {{ status_code: 500, … }})))"
                );
                tracing::warn!(target: "matrix_sdk_crypto::store", "a pending keys query");
            });
            buffer.text()
        };
        let info = lines("info");
        for hidden in ["no backup key", "status_code: 404", "Our own device"] {
            assert!(!info.contains(hidden), "{hidden:?} shown at RUST_LOG=info: {info}");
        }
        for shown in ["status_code: 500", "a pending keys query"] {
            assert!(info.contains(shown), "{shown:?} hidden at RUST_LOG=info: {info}");
        }
        let asked = lines("info,matrix_sdk_crypto=debug,matrix_sdk=debug");
        for shown in ["no backup key", "status_code: 404", "Our own device", "status_code: 500"] {
            assert!(asked.contains(shown), "{shown:?} hidden although RUST_LOG names matrix-sdk: {asked}");
        }
    }

    #[test]
    fn irc_raw_lines_are_dropped_even_when_rust_log_asks_for_them() {
        for format in [LogFormat::Text, LogFormat::Json] {
            let buffer = Buffer::default();
            let writer = buffer.clone();
            let subscriber =
                subscriber(format, EnvFilter::new("trace,irc=trace"), None, move || writer.clone());
            tracing::subscriber::with_default(subscriber, || {
                tracing::trace!(target: "irc::client", "[SENT] PASS hunter2");
                tracing::trace!(target: "irc::client::transport", "[SEND] AUTHENTICATE c2VjcmV0");
                tracing::info!(target: "irc::client::conn", "Connecting to 127.0.0.1.");
                tracing::trace!(target: "ircd_lookalike", "a crate that only starts with irc");
                tracing::trace!(target: "spellbridge::serve", "our own trace line");
            });
            let log = buffer.text();
            assert!(!log.contains("hunter2") && !log.contains("c2VjcmV0"), "{format:?}: {log}");
            for kept in ["Connecting to 127.0.0.1.", "only starts with irc", "our own trace line"] {
                assert!(log.contains(kept), "{format:?} lost {kept:?}: {log}");
            }
        }
    }
}
