//! The Matrix transport against a real Synapse (the harness's, on loopback): the bot
//! accepts an allowed invite, reads commands with the right fields, answers with HTML and
//! pills, delivers what a bridge relays (formatting as rich text, edits, reactions,
//! redactions, replies without their quote, threads, emotes, who operates the room),
//! answers in a thread and acts emotes, leaves a room for good, opens an encrypted direct
//! room, works both ways in an encrypted room and tells a room once when it cannot
//! decrypt, keeps its device and does not replay history across a restart (yet delivers
//! every message said while it was down, beyond the sync's timeline limit, once and in
//! order, even when fetching the gap fails at first or it stops before handing a response
//! over), comes back after a homeserver restart (or a homeserver that is down when it
//! starts), waits out `M_LIMIT_EXCEEDED`, and its latency is measured. Humans are the
//! harness's raw client, or a second `MatrixTransport` where the test needs E2EE (the raw
//! client has none).
//!
//! One file per feature ([`messages`], [`rooms`], [`encryption`], [`devices`],
//! [`catch_up`], [`outages`], [`resend`], [`latency`]); what they share (the server, the bot's
//! options, a running transport, the bounded waits) is in [`support`].
//!
//! Without Synapse (`tests/scripts/install-synapse.sh`) these tests fail with the
//! harness's message; they are never skipped.

mod support;

mod catch_up;
mod devices;
mod encryption;
mod latency;
mod messages;
mod outages;
mod resend;
mod rooms;
