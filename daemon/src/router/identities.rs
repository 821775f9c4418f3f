//! Who is who, kept by the router: the directory of identities and their links across
//! networks ([`crate::identity`]), the link codes that did not work per identity (memory
//! only: [`crate::limits::GuessLimits`]), and the names players are shown under as kept
//! for the site and after a restart (see [`super::shown_names`]).

use std::collections::BTreeMap;

use spellbridge_core::{NetworkId, PlayerId, Timestamp};

use crate::identity::{Directory, Identity, Scope};
use crate::limits::GuessLimits;
use crate::names;

/// The directory, the wrong link codes and the kept names.
pub struct Identities {
    /// Who is who across networks.
    pub directory: Directory,
    /// Link codes that did not work, per identity.
    guesses: GuessLimits<Identity>,
    /// The names kept so far, and which directory revision they were last brought up to.
    kept: BTreeMap<PlayerId, String>,
    revision: Option<u64>,
}

impl Identities {
    /// No one known yet; identities become player ids as `scopes` say.
    pub fn new(scopes: BTreeMap<NetworkId, Scope>) -> Identities {
        Identities {
            directory: Directory::new(scopes),
            guesses: GuessLimits::default(),
            kept: BTreeMap::new(),
            revision: None,
        }
    }

    /// `formerly` on `network` is now called `sender` (an IRC nick change): the wrong
    /// link codes go with the new nick. The player ids before and now.
    pub fn renamed(
        &mut self,
        network: &NetworkId,
        formerly: &PlayerId,
        sender: &PlayerId,
    ) -> (PlayerId, PlayerId) {
        self.guesses.carry_over(&(network.clone(), formerly.clone()), &(network.clone(), sender.clone()));
        (self.directory.player(network, formerly), self.directory.player(network, sender))
    }

    /// When `identity` may try a link code again, if it tried too many wrong ones.
    pub fn blocked_until(&mut self, identity: &Identity, now: Timestamp) -> Option<Timestamp> {
        self.guesses.blocked_until(identity, now)
    }

    /// `identity` tried a link code that did not work.
    pub fn wrong_code(&mut self, identity: &Identity, now: Timestamp) {
        self.guesses.wrong(identity, now);
    }

    /// How `player` is shown where their network's own form is not used: the name the
    /// directory knows them by (else the kept one, else their id's), escaped and cut.
    pub fn shown_name(&self, player: &PlayerId) -> String {
        let known = self.directory.display_name(player);
        let name = match self.kept.get(player) {
            Some(kept) if known == crate::identity::local_part(player) => kept.clone(),
            _ => known,
        };
        let folded = name.to_lowercase();
        let shared = self.directory.name_is_shared(player, &name)
            || self.kept.iter().any(|(other, n)| other != player && n.to_lowercase() == folded);
        names::shown(player, &name, shared)
    }

    /// The names to keep (as JSON text) when a name or link changed since the last call.
    pub fn take_names(&mut self) -> Option<String> {
        let revision = self.directory.revision();
        if self.revision == Some(revision) {
            return None;
        }
        self.revision = Some(revision);
        let mut changed = false;
        for (player, name) in self.directory.shown_names() {
            if self.kept.get(&player) != Some(&name) {
                self.kept.insert(player, name);
                changed = true;
            }
        }
        changed.then(|| serde_json::to_string(&self.kept).unwrap_or_default())
    }

    /// Takes back the names the store kept (`text` as [`Identities::take_names`] wrote
    /// it); text that does not read is left out (logged).
    pub fn load_names(&mut self, text: &str) {
        match serde_json::from_str::<BTreeMap<PlayerId, String>>(text) {
            Ok(kept) => self.kept = kept,
            Err(error) => tracing::warn!(%error, "the kept player names do not read; they are learnt again"),
        }
    }
}
