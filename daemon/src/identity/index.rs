//! The directory's indexes, so that resolving a typed name or finding a player's
//! identities is a lookup, not a walk over everyone the daemon has heard (issue 16): who
//! answers to a word (their shown name, their identity, a Matrix localpart, their player
//! id — compared ignoring ASCII case, as [`super::Directory::resolve`] always did), which
//! identities a player has as their own, and which are linked to them.
//!
//! Every set is ordered by identity, the order the directory's maps iterate in, so an
//! ambiguous name lists its players in the same order as before.

use std::collections::{BTreeSet, HashMap};

use spellbridge_core::{NetworkId, PlayerId};

use super::Identity;

/// The indexes over the directory's names and links.
#[derive(Clone, Debug, Default)]
pub(super) struct Index {
    /// Identities by each word they answer to, folded: their shown name, the identity
    /// itself, and a Matrix id's localpart.
    answers: HashMap<String, BTreeSet<Identity>>,
    /// Identities by their own player id, folded (`libera:alice` names `alice` on libera).
    by_id: HashMap<String, BTreeSet<Identity>>,
    /// Identities with a known name, by their own player.
    own: HashMap<PlayerId, BTreeSet<Identity>>,
    /// Identities joined to another player, by that player.
    linked: HashMap<PlayerId, BTreeSet<Identity>>,
    /// Networks where someone has been named.
    networks: BTreeSet<NetworkId>,
}

/// A word as the indexes key it: ASCII case folded (names compare with
/// `eq_ignore_ascii_case`).
pub(super) fn fold(word: &str) -> String {
    word.to_ascii_lowercase()
}

/// The localpart a Matrix id answers to (`alice` for `@alice:hs`).
pub(super) fn localpart(identity: &PlayerId) -> Option<&str> {
    identity.as_str().strip_prefix('@').and_then(|id| id.split(':').next())
}

impl Index {
    /// Notes an identity heard for the first time, shown as `shown`, whose own player is
    /// `own`.
    pub(super) fn named(&mut self, identity: &Identity, own: &PlayerId, shown: &str) {
        for word in self.fixed_words(identity).into_iter().chain([fold(shown)]) {
            self.answers.entry(word).or_default().insert(identity.clone());
        }
        self.by_id.entry(fold(own.as_str())).or_default().insert(identity.clone());
        self.own.entry(own.clone()).or_default().insert(identity.clone());
        self.networks.insert(identity.0.clone());
    }

    /// Notes that a known identity is now shown as `shown` instead of `before`.
    pub(super) fn renamed(&mut self, identity: &Identity, before: &str, shown: &str) {
        let before = fold(before);
        if !self.fixed_words(identity).contains(&before)
            && let Some(set) = self.answers.get_mut(&before)
        {
            set.remove(identity);
            if set.is_empty() {
                self.answers.remove(&before);
            }
        }
        self.answers.entry(fold(shown)).or_default().insert(identity.clone());
    }

    /// The words an identity answers to whatever it is shown as.
    fn fixed_words(&self, identity: &Identity) -> Vec<String> {
        let mut words = vec![fold(identity.1.as_str())];
        words.extend(localpart(&identity.1).map(fold));
        words
    }

    /// Identities that answer to `word` (shown name, identity, localpart).
    pub(super) fn answering(&self, word: &str) -> Option<&BTreeSet<Identity>> {
        self.answers.get(&fold(word))
    }

    /// Identities whose own player id is `id`, ignoring case.
    pub(super) fn with_id(&self, id: &str) -> Option<&BTreeSet<Identity>> {
        self.by_id.get(&fold(id))
    }

    /// The named identities whose own player is `player`.
    pub(super) fn own(&self, player: &PlayerId) -> impl Iterator<Item = &Identity> {
        self.own.get(player).into_iter().flatten()
    }

    /// The identities joined to `player`.
    pub(super) fn linked(&self, player: &PlayerId) -> impl Iterator<Item = &Identity> {
        self.linked.get(player).into_iter().flatten()
    }

    /// True when someone has been named on `network`.
    pub(super) fn knows_network(&self, network: &NetworkId) -> bool {
        self.networks.contains(network)
    }

    /// Notes a link from `identity` to `player` (and that it left `before`, if it was
    /// linked elsewhere).
    pub(super) fn link(&mut self, identity: &Identity, player: &PlayerId, before: Option<&PlayerId>) {
        if let Some(before) = before {
            self.unlink_one(identity, before);
        }
        self.linked.entry(player.clone()).or_default().insert(identity.clone());
    }

    /// Forgets every link to `player`; returns the identities that were linked.
    pub(super) fn unlink(&mut self, player: &PlayerId) -> Vec<Identity> {
        self.linked.remove(player).map(|set| set.into_iter().collect()).unwrap_or_default()
    }

    fn unlink_one(&mut self, identity: &Identity, player: &PlayerId) {
        if let Some(set) = self.linked.get_mut(player) {
            set.remove(identity);
            if set.is_empty() {
                self.linked.remove(player);
            }
        }
    }
}
