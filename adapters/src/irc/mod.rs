//! The IRC transport ([`transport`], with its [`options`]) and the pieces of it that do
//! no I/O: mIRC formatting ([`format`]), line splitting to the 512-byte limit
//! ([`split`]), flood control ([`flood`]) and the channel members' prefixes
//! (`members`).

pub mod flood;
pub mod format;
mod members;
pub mod options;
pub mod renames;
pub mod split;
pub mod transport;
