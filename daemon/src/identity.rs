//! Who is who across networks: the directory of players.
//!
//! A person has one **identity** per network (an IRC account or nick, a Matrix user id)
//! and plays as one **player**. An identity nobody linked is its own player. `!link`
//! gives a one-time code privately; saying `!link <code>` privately from another network
//! joins that identity to the code's player, so the person can act from either side.
//! The directory also remembers the names people are shown under (to resolve a name
//! typed in a command, and to show a player on a network where they have no identity)
//! and each player's **home**: the network and identity their private messages go to.
//!
//! Links and homes change only through [`Entry`](crate::journal::Entry) values the
//! router journals, so a restart rebuilds them exactly; names and pending codes are
//! memory only (names are learnt again as people speak; codes last ten minutes).

use std::collections::BTreeMap;

use spellbridge_core::{NetworkId, PlayerId, Timestamp};

use crate::secrets::SecretSource;

/// How long a link code stays valid.
pub const CODE_LIFETIME_SECS: i64 = 10 * 60;

/// One identity: a network and who the network says someone is.
pub type Identity = (NetworkId, PlayerId);

/// A code given by `!link`, waiting for the other network.
#[derive(Clone, Debug)]
struct PendingLink {
    player: PlayerId,
    from: NetworkId,
    expires: Timestamp,
}

/// Why a name typed in a command does not name one player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// Several players answer to it.
    Ambiguous(Vec<PlayerId>),
}

/// Why `!link <code>` did not link.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// No such code, or it expired.
    #[error(
        "that code is unknown or expired. Type `!link` on your other network for a fresh one, then \
         send `!link <code>` to me privately from here within ten minutes."
    )]
    UnknownCode,
    /// The code was made on this same network.
    #[error(
        "that code was made on this network; send `!link <code>` from your identity on the other network."
    )]
    SameNetwork,
    /// The identity already belongs to a linked player.
    #[error("you are already linked to {0}; type `!unlink` first.")]
    AlreadyLinked(PlayerId),
    /// The identity is its own player and others are linked to it.
    #[error("other identities are linked to you; type `!unlink` first.")]
    HasLinks,
}

/// The directory of identities, players, names and homes.
#[derive(Clone, Debug, Default)]
pub struct Directory {
    /// Identities joined to a player other than themselves.
    links: BTreeMap<Identity, PlayerId>,
    /// Where each player's private messages go.
    homes: BTreeMap<PlayerId, Identity>,
    /// The name each player was shown under at home when it was last journaled.
    home_names: BTreeMap<PlayerId, String>,
    /// The name each identity was last shown under.
    names: BTreeMap<Identity, String>,
    /// Link codes waiting for the other network.
    pending: BTreeMap<String, PendingLink>,
}

impl Directory {
    /// The player an identity plays as.
    pub fn player(&self, network: &NetworkId, identity: &PlayerId) -> PlayerId {
        self.links.get(&(network.clone(), identity.clone())).cloned().unwrap_or_else(|| identity.clone())
    }

    /// Notes the name an identity is shown under.
    pub fn saw(&mut self, network: &NetworkId, identity: &PlayerId, name: &str) {
        let key = (network.clone(), identity.clone());
        if self.names.get(&key).is_none_or(|known| known != name) {
            self.names.insert(key, name.to_owned());
        }
    }

    /// Where `player`'s private messages go, if known.
    pub fn home(&self, player: &PlayerId) -> Option<&Identity> {
        self.homes.get(player)
    }

    /// Records `player`'s home and the name they are shown under there; true when either
    /// changed (the router journals the change).
    pub fn set_home(
        &mut self,
        player: &PlayerId,
        network: &NetworkId,
        identity: &PlayerId,
        name: &str,
    ) -> bool {
        let home = (network.clone(), identity.clone());
        let renamed = self.home_names.get(player).is_none_or(|known| known != name);
        if self.homes.get(player) == Some(&home) && !renamed {
            return false;
        }
        self.saw(network, identity, name);
        self.homes.insert(player.clone(), home);
        self.home_names.insert(player.clone(), name.to_owned());
        true
    }

    /// Every identity of `player`: its own (when it has been seen) and those linked to it.
    pub fn identities(&self, player: &PlayerId) -> Vec<Identity> {
        let mut found: Vec<Identity> =
            self.links.iter().filter(|(_, p)| *p == player).map(|(identity, _)| identity.clone()).collect();
        let own = self.names.keys().chain(self.homes.values()).filter(|(_, id)| id == player);
        for identity in own {
            if !self.links.contains_key(identity) && !found.contains(identity) {
                found.push(identity.clone());
            }
        }
        found
    }

    /// `player`'s identity on `network`, if they have one there.
    pub fn identity_on(&self, player: &PlayerId, network: &NetworkId) -> Option<PlayerId> {
        if let Some((home_network, identity)) = self.homes.get(player)
            && home_network == network
        {
            return Some(identity.clone());
        }
        self.identities(player).into_iter().find(|(n, _)| n == network).map(|(_, identity)| identity)
    }

    /// The name to show for `player` where they cannot be mentioned: the name their own
    /// identity was last shown under, else their id.
    pub fn display_name(&self, player: &PlayerId) -> String {
        self.names
            .iter()
            .find(|((_, identity), _)| identity == player)
            .or_else(|| self.names.iter().find(|(identity, _)| self.links.get(*identity) == Some(player)))
            .map_or_else(|| player.as_str().to_owned(), |(_, name)| name.clone())
    }

    /// The player a word typed in a command names, when it is not a player id itself:
    /// an IRC nick, a Matrix display name or the localpart of a Matrix id, compared
    /// ignoring case. `Ok(None)` when it names nobody known.
    pub fn resolve(&self, word: &str) -> Result<Option<PlayerId>, NameProblem> {
        let word = word.trim_start_matches('@').trim_end_matches([':', ',']);
        if word.is_empty() {
            return Ok(None);
        }
        let mut found: Vec<PlayerId> = Vec::new();
        for ((network, identity), name) in &self.names {
            let localpart = identity.as_str().strip_prefix('@').and_then(|id| id.split(':').next());
            let answers = name.eq_ignore_ascii_case(word)
                || identity.as_str().eq_ignore_ascii_case(word)
                || localpart.is_some_and(|l| l.eq_ignore_ascii_case(word));
            if answers {
                let player = self.player(network, identity);
                if !found.contains(&player) {
                    found.push(player);
                }
            }
        }
        match found.len() {
            0 => Ok(None),
            1 => Ok(found.pop()),
            _ => Err(NameProblem::Ambiguous(found)),
        }
    }

    /// Makes a one-time code that links another network's identity to `player`.
    pub fn new_code(
        &mut self,
        player: &PlayerId,
        from: &NetworkId,
        secrets: &mut SecretSource,
        now: Timestamp,
    ) -> String {
        self.pending.retain(|_, p| p.expires > now && &p.player != player);
        // From the OS generator: a code must not be predictable from anything a player saw.
        let code = format!("{:08}", secrets.below(100_000_000));
        let expires = now.plus(CODE_LIFETIME_SECS);
        self.pending
            .insert(code.clone(), PendingLink { player: player.clone(), from: from.clone(), expires });
        code
    }

    /// Checks `code` for the identity `(network, identity)`: the player it would join.
    /// Consumes the code only when the link can be made.
    pub fn redeem(
        &mut self,
        code: &str,
        network: &NetworkId,
        identity: &PlayerId,
        now: Timestamp,
    ) -> Result<PlayerId, LinkError> {
        let code: String = code.chars().filter(char::is_ascii_digit).collect();
        let pending = self.pending.get(&code).filter(|p| p.expires > now).ok_or(LinkError::UnknownCode)?;
        if &pending.from == network {
            return Err(LinkError::SameNetwork);
        }
        if let Some(player) = self.links.get(&(network.clone(), identity.clone())) {
            return Err(LinkError::AlreadyLinked(player.clone()));
        }
        if self.links.values().any(|p| p == identity) {
            return Err(LinkError::HasLinks);
        }
        let player = pending.player.clone();
        self.pending.remove(&code);
        Ok(player)
    }

    /// Voids a code (it was said where others could read it).
    pub fn void(&mut self, code: &str) {
        let code: String = code.chars().filter(char::is_ascii_digit).collect();
        self.pending.remove(&code);
    }

    /// Joins an identity to a player.
    pub fn link(&mut self, network: &NetworkId, identity: &PlayerId, player: &PlayerId) {
        self.links.insert((network.clone(), identity.clone()), player.clone());
    }

    /// Separates every identity joined to `player` (the player keeps their own).
    /// Returns the identities separated.
    pub fn unlink(&mut self, player: &PlayerId) -> Vec<Identity> {
        let separated: Vec<Identity> =
            self.links.iter().filter(|(_, p)| *p == player).map(|(identity, _)| identity.clone()).collect();
        for identity in &separated {
            self.links.remove(identity);
        }
        if let Some(home) = self.homes.get(player)
            && separated.contains(home)
        {
            self.homes.remove(player);
        }
        separated
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::Secrets;

    fn irc() -> NetworkId {
        NetworkId::new("irc")
    }

    fn matrix() -> NetworkId {
        NetworkId::new("matrix")
    }

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    #[test]
    fn a_code_links_an_identity_on_another_network_once() {
        let mut directory = Directory::default();
        let alice = PlayerId::new("alice");
        let matrix_alice = PlayerId::new("@alice:hs");
        let code = directory.new_code(&alice, &irc(), &mut SecretSource::new(&Secrets::Seeded(7)), T);
        assert_eq!(code.len(), 8);
        assert_eq!(directory.redeem(&code, &irc(), &alice, T), Err(LinkError::SameNetwork));
        assert_eq!(directory.redeem(&code, &matrix(), &matrix_alice, T), Ok(alice.clone()));
        directory.link(&matrix(), &matrix_alice, &alice);
        assert_eq!(directory.player(&matrix(), &matrix_alice), alice);
        assert_eq!(
            directory.redeem(&code, &matrix(), &PlayerId::new("@eve:hs"), T),
            Err(LinkError::UnknownCode)
        );
        assert_eq!(directory.identity_on(&alice, &matrix()), Some(matrix_alice.clone()));
        assert_eq!(directory.unlink(&alice), vec![(matrix(), matrix_alice.clone())]);
        assert_eq!(directory.player(&matrix(), &matrix_alice), matrix_alice);
    }

    #[test]
    fn codes_expire() {
        let mut directory = Directory::default();
        let code = directory.new_code(
            &PlayerId::new("alice"),
            &irc(),
            &mut SecretSource::new(&Secrets::Seeded(7)),
            T,
        );
        let late = T.plus(CODE_LIFETIME_SECS);
        assert_eq!(
            directory.redeem(&code, &matrix(), &PlayerId::new("@a:hs"), late),
            Err(LinkError::UnknownCode)
        );
    }

    #[test]
    fn names_resolve_to_one_player_or_are_ambiguous() {
        let mut directory = Directory::default();
        directory.saw(&irc(), &PlayerId::new("bob"), "bob");
        directory.saw(&matrix(), &PlayerId::new("@carol:hs"), "Carol");
        assert_eq!(directory.resolve("Carol"), Ok(Some(PlayerId::new("@carol:hs"))));
        assert_eq!(directory.resolve("carol"), Ok(Some(PlayerId::new("@carol:hs"))));
        assert_eq!(directory.resolve("nobody"), Ok(None));
        directory.saw(&matrix(), &PlayerId::new("@bob:hs"), "Bobby");
        assert_eq!(
            directory.resolve("bob"),
            Err(NameProblem::Ambiguous(vec![PlayerId::new("bob"), PlayerId::new("@bob:hs")]))
        );
        // Once linked, both answer for one player.
        directory.link(&matrix(), &PlayerId::new("@bob:hs"), &PlayerId::new("bob"));
        assert_eq!(directory.resolve("bob"), Ok(Some(PlayerId::new("bob"))));
    }
}
