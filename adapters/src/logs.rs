//! What the transports' libraries log that the daemon's logging must know about, kept
//! here with the transports so the daemon's logging names no network (issue 32).
//!
//! - [`DEFAULT_FILTER`]: what `RUST_LOG` means when it is not set: `info`, so that a
//!   healthy run logs no ERROR or WARN (issue 17, item 8). matrix-sdk's crates are capped
//!   at `error`: they warn on every sync that room keys have no backup (the bot keeps its
//!   keys in its store) and about other things a bot does not use. Its HTTP client is
//!   off: it logs an ERROR for every failed request, the expected ones included (the 404s
//!   of `m.secret_storage.default_key` account data and of `m.room.encryption` state in
//!   an unencrypted room); the transport logs the failures that matter itself, with what
//!   to do. `RUST_LOG` raises any of them again (`RUST_LOG=info,matrix_sdk=debug`).
//! - [`RAW_TARGETS`]: the `irc` crate logs every line it sends and receives at `trace`
//!   (`[SEND] AUTHENTICATE <base64 of the SASL password>`, the link codes the bot sends
//!   privately): no log may show those.
//! - [`EXPECTED`]: matrix-sdk's WARN and ERROR lines that report nothing wrong for a bot,
//!   dropped unless `RUST_LOG` names a [`CHATTY`] target. Each is one line matrix-sdk logs
//!   in a healthy run:
//!   - `matrix_sdk_crypto::backups` warns on every sync that room keys have no backup
//!     key: the bot keeps its keys in its own store and uses no server-side backup.
//!   - `matrix_sdk::http_client` logs an ERROR for every failed request, the 404s it
//!     expects included (`m.secret_storage.default_key` account data that was never set,
//!     the `m.room.encryption` state of an unencrypted room). Other failures stay in the
//!     log, and the transport logs the ones that matter itself.
//!   - `matrix_sdk_crypto::identities::manager` warns that "our own device might have
//!     been deleted" when the first keys query after a new login is answered before the
//!     new device's keys are uploaded. A device really deleted ends the session (the next
//!     request is refused, and the transport says so).
//!   - `matrix_sdk::room` logs an ERROR when fetching a room's messages (a `limited`
//!     timeline's gap) before the room's power levels are in its cache, which happens in
//!     a direct chat the bot has just opened (issue 31): they only decide push
//!     notifications, which a bot never shows; the messages are fetched and handed over
//!     all the same.

/// What `RUST_LOG` means when it is not set.
pub const DEFAULT_FILTER: &str = "info,matrix_sdk=error,matrix_sdk_base=error,matrix_sdk_crypto=error,\
     matrix_sdk_sqlite=error,matrix_sdk_common=error,matrix_sdk::http_client=off";

/// The crates whose `trace` lines carry raw protocol lines, passwords included.
pub const RAW_TARGETS: &[&str] = &["irc"];

/// The prefix of the targets whose [`EXPECTED`] lines are dropped: a `RUST_LOG` naming it
/// shows them all again.
pub const CHATTY: &str = "matrix_sdk";

/// The expected lines: the target they come from and a piece of their message.
pub const EXPECTED: &[(&str, &str)] = &[
    ("matrix_sdk_crypto::backups", "no backup key was found"),
    ("matrix_sdk::http_client", "status_code: 404"),
    ("matrix_sdk_crypto::identities::manager", "Our own device might have been deleted"),
    ("matrix_sdk::room", "Could not compute power levels for push conditions"),
];
