//! The IRC transport ([`transport`], with its [`options`], read from `[[irc]]` by
//! [`config`], the IRC kind of the network registry), the connection it drives
//! ([`connect`]), whom TLS trusts ([`tls`]), and the pieces of it that do no I/O:
//! capability negotiation ([`cap`]), SASL login ([`sasl`], [`scram`], [`ecdsa`]), services accounts
//! ([`accounts`]), STS policies ([`sts`]), mIRC formatting ([`format`]), line splitting to
//! the 512-byte limit ([`split`]), flood control ([`flood`]), CTCP requests and answers
//! ([`ctcp`]) the channel members' prefixes (`members`) and the changes of who is in a channel
//! reported to the daemon (`roster`).

pub mod accounts;
pub mod cap;
pub mod codec;
pub mod config;
pub mod connect;
pub mod ctcp;
pub mod ecdsa;
pub mod ecdsa_pem;
pub mod flood;
pub mod format;
pub(crate) mod members;
pub mod options;
pub mod register;
pub mod renames;
mod roster;
pub mod sasl;
pub mod scram;
pub mod split;
pub mod sts;
pub mod tls;
pub mod transport;
