//! Appservice mode (issue 17): the homeserver admin registers spellbridge as an
//! application service, and IRC people appear in Matrix as ghost users.
//!
//! - [`config`]: the `[[matrix]]` keys of the mode, checked, and the tokens read from
//!   the registration file.
//! - [`registration`]: the registration file, written (`spellbridge
//!   appservice-registration`) and read.
//! - [`ghost`]: the ghosts' user ids and display names from the templates, escaped to
//!   the user-id grammar, and the registration's user namespace.
//! - [`login`]: the bot's first login, `m.login.application_service` with the `as_token`,
//!   and registering the appservice's users.
//! - [`asserted`]: a client-server request sent as a ghost (identity assertion).
//! - `haunt`: the ghosts at work: registered when first needed, joined to the bridged
//!   rooms and leaving them as their IRC users do (a netsplit's quits held, [`split`]),
//!   renamed, and saying the relayed lines of their IRC users; which ghost each nick is
//!   is kept by `book`; the first complete member list of a channel after the bot joins
//!   it (at every start) is called against the room's ghosts (`roll_call`).
//! - `server`: the appservice API's own listener (transactions, users, rooms, ping), with
//!   its routes and token check in [`api`] and the transactions taken in kept through
//!   [`txns`].

pub mod api;
pub mod asserted;
mod book;
pub mod config;
pub mod ghost;
pub(super) mod haunt;
pub mod login;
pub mod registration;
mod roll_call;
pub(super) mod server;
pub mod split;
pub mod txns;

use std::net::SocketAddr;

pub use config::Checked;
pub use ghost::Ghosts;
pub use registration::Tokens;

/// Appservice mode's settings: the checked keys and the registration's tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppserviceSettings {
    /// The keys of `[[matrix]]`, checked.
    pub checked: Checked,
    /// The tokens from the registration file.
    pub tokens: Tokens,
}

impl AppserviceSettings {
    /// What `check-config` prints (no secrets).
    pub fn describe(&self) -> String {
        format!(
            "appservice mode: registration {}, listening on {} (the homeserver calls {}), ghosts {}",
            self.checked.registration.display(),
            self.checked.listen,
            self.checked.url,
            self.checked.ghosts.template(),
        )
    }

    /// What the transport needs.
    pub fn options(&self) -> AppserviceOptions {
        AppserviceOptions {
            listen: self.checked.listen,
            hs_token: self.tokens.hs_token.clone(),
            as_token: self.tokens.as_token.clone(),
            ghosts: self.checked.ghosts.clone(),
            netsplit_hold: self.checked.netsplit_hold,
            sender_localpart: self.checked.sender_localpart.clone(),
        }
    }
}

/// What the Matrix transport needs in appservice mode.
#[derive(Clone, PartialEq, Eq)]
pub struct AppserviceOptions {
    /// Where the appservice API listens.
    pub listen: SocketAddr,
    /// What the homeserver must send (checked on every request).
    pub hs_token: String,
    /// What the bridge sends the homeserver for its ghosts.
    pub as_token: String,
    /// The ghosts' names.
    pub ghosts: Ghosts,
    /// How long a netsplit's leaves are held.
    pub netsplit_hold: std::time::Duration,
    /// The appservice's sender user's localpart: whom the `as_token` speaks for.
    pub sender_localpart: String,
}

impl std::fmt::Debug for AppserviceOptions {
    /// Everything but the tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppserviceOptions")
            .field("listen", &self.listen)
            .field("hs_token", &"<redacted>")
            .field("as_token", &"<redacted>")
            .field("ghosts", &self.ghosts)
            .field("netsplit_hold", &self.netsplit_hold)
            .field("sender_localpart", &self.sender_localpart)
            .finish()
    }
}
