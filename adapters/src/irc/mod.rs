//! The IRC transport ([`transport`], with its [`options`]) and the pieces of it that do
//! no I/O: mIRC formatting ([`format`]), line splitting to the 512-byte limit
//! ([`split`]), flood control ([`flood`]), CTCP requests and answers ([`ctcp`]) and the
//! channel members' prefixes (`members`); whom TLS trusts ([`tls`]).

pub mod ctcp;
pub mod flood;
pub mod format;
mod members;
pub mod options;
pub mod renames;
pub mod split;
pub mod tls;
pub mod transport;
