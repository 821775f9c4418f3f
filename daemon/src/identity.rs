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
//! router journals, so a restart rebuilds them exactly; pending codes are journaled too
//! (a restart does not lose a code someone is about to type), names are memory only
//! (they are learnt again as people speak).
//!
//! Redeeming leaks nothing about other people's codes: an unknown, expired or
//! same-network code all get the one answer [`LinkError::NotValid`], and a code that
//! failed [`WRONG_TRIES_PER_CODE`] times is void. (The per-identity limit on wrong codes
//! is the router's, in [`crate::limits`].)

use std::collections::BTreeMap;

use spellbridge_core::{NetworkId, PlayerId, Timestamp};

use crate::limits::WRONG_TRIES_PER_CODE;
use crate::secrets::SecretSource;

/// How long a link code stays valid.
pub const CODE_LIFETIME_SECS: i64 = 10 * 60;

/// One identity: a network and who the network says someone is.
pub type Identity = (NetworkId, PlayerId);

/// A code given by `!link`, waiting for the other network.
#[derive(Clone, Debug)]
struct PendingLink {
    player: PlayerId,
    /// The identity that asked for it: told when the code is used.
    owner: Identity,
    expires: Timestamp,
    /// Failed redemptions that named this code.
    wrong: u32,
}

/// A code given by `!link`, as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkCode {
    /// The eight digits.
    pub code: String,
    /// The player it joins an identity to.
    pub player: PlayerId,
    /// The identity that asked for it (network and who).
    pub owner: Identity,
    /// When it stops working.
    pub expires: Timestamp,
}

/// A link that a code allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redeemed {
    /// The player the identity joins.
    pub player: PlayerId,
    /// The identity that asked for the code, to be told.
    pub owner: Identity,
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
    /// No such code, an expired one, one made on this same network, or a void one: one
    /// answer for all, so a guesser learns nothing about other people's codes.
    #[error(
        "that code does not work here. A code works once, within ten minutes, sent privately from \
         your identity on the other network (not the one where you typed `!link`). Type `!link` on your \
         other network for a fresh one, then send `!link <code>` to me privately from here."
    )]
    NotValid,
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

    /// Makes a one-time code that links another network's identity to `player`; `owner`
    /// is the identity asking (on `from`). A player has one code at a time.
    pub fn new_code(
        &mut self,
        player: &PlayerId,
        owner: &Identity,
        secrets: &mut SecretSource,
        now: Timestamp,
    ) -> LinkCode {
        self.pending.retain(|_, p| p.expires > now);
        // From the OS generator: a code must not be predictable from anything a player saw.
        let mut code = format!("{:08}", secrets.below(100_000_000));
        while self.pending.contains_key(&code) {
            code = format!("{:08}", secrets.below(100_000_000));
        }
        let given = LinkCode {
            code,
            player: player.clone(),
            owner: owner.clone(),
            expires: now.plus(CODE_LIFETIME_SECS),
        };
        self.restore_code(&given);
        given
    }

    /// Puts back a code the journal recorded (it replaces the player's earlier one).
    pub fn restore_code(&mut self, given: &LinkCode) {
        self.pending.retain(|_, p| p.player != given.player);
        let pending = PendingLink {
            player: given.player.clone(),
            owner: given.owner.clone(),
            expires: given.expires,
            wrong: 0,
        };
        self.pending.insert(given.code.clone(), pending);
    }

    /// Checks `code` for the identity `(network, identity)`: the link it allows. Consumes
    /// the code only when the link can be made. The identity's own state is judged before
    /// the code is looked at; every problem with the code is [`LinkError::NotValid`].
    pub fn redeem(
        &mut self,
        code: &str,
        network: &NetworkId,
        identity: &PlayerId,
        now: Timestamp,
    ) -> Result<Redeemed, LinkError> {
        if let Some(player) = self.links.get(&(network.clone(), identity.clone())) {
            return Err(LinkError::AlreadyLinked(player.clone()));
        }
        if self.links.values().any(|p| p == identity) {
            return Err(LinkError::HasLinks);
        }
        let code = digits(code);
        let pending = self.pending.get_mut(&code).filter(|p| p.expires > now).ok_or(LinkError::NotValid)?;
        if &pending.owner.0 == network {
            pending.wrong = pending.wrong.saturating_add(1);
            if pending.wrong >= WRONG_TRIES_PER_CODE {
                self.pending.remove(&code);
            }
            return Err(LinkError::NotValid);
        }
        let redeemed = Redeemed { player: pending.player.clone(), owner: pending.owner.clone() };
        self.pending.remove(&code);
        Ok(redeemed)
    }

    /// True while `code` is waiting to be redeemed (void, used and expired codes are not).
    pub fn is_pending(&self, code: &str, now: Timestamp) -> bool {
        self.pending.get(&digits(code)).is_some_and(|p| p.expires > now)
    }

    /// Voids a code (it was said where others could read it).
    pub fn void(&mut self, code: &str) {
        self.pending.remove(&digits(code));
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

/// A code as typed, without spaces or dashes.
pub fn digits(code: &str) -> String {
    code.chars().filter(char::is_ascii_digit).collect()
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

    fn give(directory: &mut Directory, player: &str) -> String {
        let owner = (irc(), PlayerId::new(player));
        let mut secrets = SecretSource::new(&Secrets::Seeded(7));
        directory.new_code(&PlayerId::new(player), &owner, &mut secrets, T).code
    }

    #[test]
    fn a_code_links_an_identity_on_another_network_once() {
        let mut directory = Directory::default();
        let alice = PlayerId::new("alice");
        let matrix_alice = PlayerId::new("@alice:hs");
        let code = give(&mut directory, "alice");
        assert_eq!(code.len(), 8);
        assert_eq!(directory.redeem(&code, &irc(), &PlayerId::new("bob"), T), Err(LinkError::NotValid));
        let redeemed = directory.redeem(&code, &matrix(), &matrix_alice, T);
        assert_eq!(redeemed, Ok(Redeemed { player: alice.clone(), owner: (irc(), alice.clone()) }));
        directory.link(&matrix(), &matrix_alice, &alice);
        assert_eq!(directory.player(&matrix(), &matrix_alice), alice);
        assert_eq!(
            directory.redeem(&code, &matrix(), &PlayerId::new("@eve:hs"), T),
            Err(LinkError::NotValid)
        );
        assert_eq!(directory.identity_on(&alice, &matrix()), Some(matrix_alice.clone()));
        assert_eq!(directory.unlink(&alice), vec![(matrix(), matrix_alice.clone())]);
        assert_eq!(directory.player(&matrix(), &matrix_alice), matrix_alice);
    }

    #[test]
    fn unknown_expired_and_same_network_codes_read_the_same() {
        let mut directory = Directory::default();
        let code = give(&mut directory, "alice");
        let unknown = if code == "12345678" { "87654321" } else { "12345678" };
        let eve = PlayerId::new("@eve:hs");
        let answers = [
            directory.redeem(unknown, &matrix(), &eve, T),
            directory.redeem(&code, &irc(), &PlayerId::new("eve"), T),
            directory.redeem(&code, &matrix(), &eve, T.plus(CODE_LIFETIME_SECS)),
        ];
        let texts: Vec<String> =
            answers.iter().map(|a| a.clone().expect_err("no link").to_string()).collect();
        assert!(texts.iter().all(|t| *t == texts[0]), "{texts:#?}");
    }

    #[test]
    fn a_code_tried_wrongly_five_times_is_void() {
        let mut directory = Directory::default();
        let code = give(&mut directory, "alice");
        for _ in 0..WRONG_TRIES_PER_CODE {
            assert!(directory.is_pending(&code, T));
            assert_eq!(directory.redeem(&code, &irc(), &PlayerId::new("eve"), T), Err(LinkError::NotValid));
        }
        assert!(!directory.is_pending(&code, T));
        assert_eq!(
            directory.redeem(&code, &matrix(), &PlayerId::new("@alice:hs"), T),
            Err(LinkError::NotValid)
        );
    }

    #[test]
    fn a_restored_code_works_and_replaces_the_players_earlier_one() {
        let mut directory = Directory::default();
        let first = give(&mut directory, "alice");
        let owner = (irc(), PlayerId::new("alice"));
        let again =
            LinkCode { code: "00000042".into(), player: PlayerId::new("alice"), owner, expires: T.plus(60) };
        directory.restore_code(&again);
        assert!(!directory.is_pending(&first, T));
        assert!(directory.redeem("0000-0042", &matrix(), &PlayerId::new("@alice:hs"), T).is_ok());
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
