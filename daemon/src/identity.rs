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

mod index;

use index::Index;

/// How long a link code stays valid.
pub const CODE_LIFETIME_SECS: i64 = 10 * 60;

/// One identity: a network and who the network says someone is.
pub type Identity = (NetworkId, PlayerId);

/// How a network's identities become player ids, so that the same name on two networks
/// is never one player unless a link code joined them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The identity names someone only on its network (an IRC nick or account): the
    /// player id is `network:identity` (`libera:alice`).
    Network,
    /// The identity is already global (a Matrix user id, `@alice:example.org`): it is
    /// the player id as it is.
    Global,
    /// The only network there is (the console): the identity is the player id, bare, as
    /// CONTRACT.md's console and `--state-json` forms name players.
    Bare,
}

impl Scope {
    /// The scope of an identity on a network nobody configured: a Matrix user id is
    /// global, anything else belongs to its network.
    pub fn infer(identity: &PlayerId) -> Scope {
        if is_global_id(identity.as_str()) { Scope::Global } else { Scope::Network }
    }

    /// The player id of `identity` on `network` under this scope.
    pub fn player_id(self, network: &NetworkId, identity: &PlayerId) -> PlayerId {
        match self {
            Scope::Network => PlayerId::new(format!("{network}:{identity}")),
            Scope::Global | Scope::Bare => identity.clone(),
        }
    }
}

/// The console's network name: its players are their bare names ([`Scope::Bare`]).
pub const CONSOLE_NETWORK: &str = "console";

/// True for a user id that names its own server, `@localpart:server` (a Matrix user id):
/// such an id is already global.
pub fn is_global_id(id: &str) -> bool {
    id.strip_prefix('@')
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(l, s)| !l.is_empty() && !s.is_empty())
}

/// The part of a player id a person is known by on their own network: `alice` for
/// `libera:alice`; a Matrix id or a console name as it is.
pub fn local_part(player: &PlayerId) -> &str {
    let id = player.as_str();
    if is_global_id(id) {
        return id;
    }
    id.split_once(':').map_or(id, |(_, local)| local)
}

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
    /// How each configured network's identities become player ids (others: inferred,
    /// see [`Scope::infer`]).
    scopes: BTreeMap<NetworkId, Scope>,
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
    /// Names and links by what they are looked up by (see [`index`]).
    index: Index,
    /// Counts changes of names and links, so the names kept for the site are written
    /// again only after one.
    revision: u64,
}

impl Directory {
    /// An empty directory whose networks' identities become player ids as `scopes` says.
    pub fn new(scopes: BTreeMap<NetworkId, Scope>) -> Self {
        Self { scopes, ..Self::default() }
    }

    /// How identities on `network` become player ids.
    pub fn scope(&self, network: &NetworkId, identity: &PlayerId) -> Scope {
        self.scopes.get(network).copied().unwrap_or_else(|| Scope::infer(identity))
    }

    /// The player id an identity has as its own player (before any link).
    pub fn own_player(&self, network: &NetworkId, identity: &PlayerId) -> PlayerId {
        self.scope(network, identity).player_id(network, identity)
    }

    /// The player an identity plays as: the player a code linked it to, else its own.
    pub fn player(&self, network: &NetworkId, identity: &PlayerId) -> PlayerId {
        self.links
            .get(&(network.clone(), identity.clone()))
            .cloned()
            .unwrap_or_else(|| self.own_player(network, identity))
    }

    /// The player id a name typed on `network` would have if it were someone's identity
    /// there, for a name nobody known answers to (`!add bob` on libera: `libera:bob`);
    /// `None` when the name cannot be an identity there (a Matrix id must be one).
    pub fn would_be(&self, network: &NetworkId, name: &str) -> Option<PlayerId> {
        let identity = PlayerId::new(name);
        match self.scopes.get(network) {
            Some(Scope::Global) if !is_global_id(name) => None,
            Some(scope) => Some(scope.player_id(network, &identity)),
            None => Some(self.own_player(network, &identity)),
        }
    }

    /// Notes the name an identity is shown under.
    pub fn saw(&mut self, network: &NetworkId, identity: &PlayerId, name: &str) {
        let key = (network.clone(), identity.clone());
        match self.names.get(&key) {
            Some(known) if known == name => {}
            Some(known) => {
                self.index.renamed(&key, known, name);
                self.names.insert(key, name.to_owned());
                self.revision += 1;
            }
            None => {
                let own = self.own_player(network, identity);
                self.index.named(&key, &own, name);
                self.names.insert(key, name.to_owned());
                self.revision += 1;
            }
        }
    }

    /// How many times names or links changed (see [`Directory::shown_names`]).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The name each player the directory has heard of is shown under now
    /// ([`Directory::display_name`]), by player.
    pub fn shown_names(&self) -> BTreeMap<PlayerId, String> {
        self.names
            .keys()
            .map(|(network, identity)| self.player(network, identity))
            .map(|p| {
                let name = self.display_name(&p);
                (p, name)
            })
            .collect()
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
        let moved = self.homes.get(player).is_none_or(|(n, id)| n != network || id != identity);
        let renamed = self.home_names.get(player).is_none_or(|known| known != name);
        if !moved && !renamed {
            return false;
        }
        self.saw(network, identity, name);
        self.homes.insert(player.clone(), (network.clone(), identity.clone()));
        self.home_names.insert(player.clone(), name.to_owned());
        true
    }

    /// Every identity of `player`: its own (when it has been seen) and those linked to it.
    pub fn identities(&self, player: &PlayerId) -> Vec<Identity> {
        let mut found: Vec<Identity> = self.index.linked(player).cloned().collect();
        // A home is the player's own identity or a linked one (set_home is only given the
        // player an identity plays as, and unlinking drops a linked home).
        let home = self.homes.get(player).filter(|(n, id)| &self.own_player(n, id) == player);
        let parsed = self.parsed_identity(player);
        for identity in self.index.own(player).chain(home).chain(parsed.iter()) {
            if !self.links.contains_key(identity) && !found.contains(identity) {
                found.push(identity.clone());
            }
        }
        found
    }

    /// True when `word` is the id of a player whose network is named in it
    /// (`libera:alice`, on a network the directory knows): such an id is shown as the
    /// person's nick wherever it appears in a message.
    pub fn is_scoped_id(&self, word: &str) -> bool {
        let Some((network, _)) = word.split_once(':') else { return false };
        let network = NetworkId::new(network);
        let known = match self.scopes.get(&network) {
            Some(scope) => *scope == Scope::Network,
            None => self.index.knows_network(&network),
        };
        known && self.parsed_identity(&PlayerId::new(word)).is_some_and(|(n, _)| n == network)
    }

    /// The identity a player id names by its form: `libera:alice` is `alice` on
    /// `libera`, a console name is itself on the console; `None` for a Matrix id (it
    /// names no network) or a form no network gives.
    fn parsed_identity(&self, player: &PlayerId) -> Option<Identity> {
        if let Some((network, _)) = self.scopes.iter().find(|(_, scope)| **scope == Scope::Bare) {
            return Some((network.clone(), player.clone()));
        }
        if is_global_id(player.as_str()) {
            return None;
        }
        let (network, local) = player.as_str().split_once(':')?;
        let identity = (NetworkId::new(network), PlayerId::new(local));
        (self.own_player(&identity.0, &identity.1) == *player).then_some(identity)
    }

    /// True when `player` is their own identity on `network` (shown there as written).
    pub fn is_identity_on(&self, player: &PlayerId, network: &NetworkId) -> bool {
        match self.homes.get(player) {
            Some((home_network, identity)) if home_network == network => identity == player,
            _ => self.identity_on(player, network).as_ref() == Some(player),
        }
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
    /// identity was last shown under, else the name their id gives (`alice` for
    /// `libera:alice`).
    pub fn display_name(&self, player: &PlayerId) -> String {
        self.index
            .own(player)
            .chain(self.index.linked(player))
            .find_map(|identity| self.names.get(identity))
            .map_or_else(|| local_part(player).to_owned(), Clone::clone)
    }

    /// True when someone other than `player` is known by `name` (their shown name, their
    /// identity, or its Matrix localpart), ignoring case: a place where `name` alone
    /// would not say who is meant.
    pub fn name_is_shared(&self, player: &PlayerId, name: &str) -> bool {
        self.index.answering(name).is_some_and(|found| {
            found.iter().any(|(network, identity)| self.player(network, identity) != *player)
        })
    }

    /// The player a word typed in a command names, when it is not a player id itself:
    /// an IRC nick, a Matrix display name or the localpart of a Matrix id, compared
    /// ignoring case. `Ok(None)` when it names nobody known.
    pub fn resolve(&self, word: &str) -> Result<Option<PlayerId>, NameProblem> {
        // A Matrix id keeps its `@`; a nick may be written `@alice` or `alice:`.
        let typed = word.trim_end_matches([',', '，']);
        let word = word.trim_start_matches('@').trim_end_matches([':', ',', '：', '，']);
        if word.is_empty() {
            return Ok(None);
        }
        // Every identity that answers, in the directory's order (an ambiguous name lists
        // its players as it always did).
        let answering: std::collections::BTreeSet<&Identity> =
            [self.index.answering(word), self.index.with_id(word), self.index.with_id(typed)]
                .into_iter()
                .flatten()
                .flatten()
                .collect();
        let mut found: Vec<PlayerId> = Vec::new();
        for (network, identity) in answering {
            let player = self.player(network, identity);
            if !found.contains(&player) {
                found.push(player);
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
        let own = self.own_player(network, identity);
        if self.index.linked(&own).next().is_some() {
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
        let key = (network.clone(), identity.clone());
        let before = self.links.insert(key.clone(), player.clone());
        self.index.link(&key, player, before.as_ref());
        self.revision += 1;
    }

    /// Separates every identity joined to `player` (the player keeps their own).
    /// Returns the identities separated.
    pub fn unlink(&mut self, player: &PlayerId) -> Vec<Identity> {
        let separated = self.index.unlink(player);
        self.revision += 1;
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

    /// True when an identity shown under `shown` answers to `word`: its shown name, the
    /// identity itself, or a Matrix id's localpart, ignoring case (the definition the
    /// indexes must agree with).
    fn answers_to(identity: &PlayerId, shown: &str, word: &str) -> bool {
        let localpart = identity.as_str().strip_prefix('@').and_then(|id| id.split(':').next());
        shown.eq_ignore_ascii_case(word)
            || identity.as_str().eq_ignore_ascii_case(word)
            || localpart.is_some_and(|l| l.eq_ignore_ascii_case(word))
    }

    /// `resolve` as a walk over every known name (how it was done before the indexes).
    fn resolve_by_walking(directory: &Directory, word: &str) -> Result<Option<PlayerId>, NameProblem> {
        let typed = word.trim_end_matches([',', '，']);
        let word = word.trim_start_matches('@').trim_end_matches([':', ',', '：', '，']);
        if word.is_empty() {
            return Ok(None);
        }
        let mut found: Vec<PlayerId> = Vec::new();
        for ((network, identity), name) in &directory.names {
            let own = directory.own_player(network, identity);
            if answers_to(identity, name, word)
                || own.as_str().eq_ignore_ascii_case(word)
                || own.as_str().eq_ignore_ascii_case(typed)
            {
                let player = directory.player(network, identity);
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

    /// A directory of many IRC nicks and Matrix ids, some renamed, some linked, some
    /// sharing names: what the indexes must get right.
    fn crowd() -> Directory {
        let mut directory = Directory::default();
        for i in 0..200 {
            directory.saw(&irc(), &PlayerId::new(format!("nick{i}")), &format!("nick{i}"));
            let id = PlayerId::new(format!("@user{i}:hs"));
            directory.saw(&matrix(), &id, &format!("Name{}", i % 50));
            if i % 7 == 0 {
                // Renamed: the old name no longer answers for them.
                directory.saw(&matrix(), &id, &format!("Renamed{i}"));
            }
            if i % 11 == 0 {
                directory.link(&matrix(), &id, &PlayerId::new(format!("irc:nick{i}")));
            }
        }
        directory.unlink(&PlayerId::new("irc:nick22"));
        directory
    }

    #[test]
    fn indexed_lookups_agree_with_walking_every_name() {
        let directory = crowd();
        let words = ["nick3", "NICK8", "name3", "Nick15", "user7", "@user7:hs", "irc:nick9", "irc:nick9,"];
        let more = ["@nick4:", "nick22", "user22", "name0", "nobody", "@", "Renamed14", "name7", "name21"];
        for word in words.into_iter().chain(more) {
            assert_eq!(directory.resolve(word), resolve_by_walking(&directory, word), "{word}");
        }
        for i in [0, 3, 7, 11, 22, 77, 154] {
            for player in [PlayerId::new(format!("irc:nick{i}")), PlayerId::new(format!("@user{i}:hs"))] {
                let name = directory.display_name(&player);
                let walked = directory.names.iter().any(|((network, identity), shown)| {
                    directory.player(network, identity) != player && answers_to(identity, shown, &name)
                });
                assert_eq!(directory.name_is_shared(&player, &name), walked, "{player} {name}");
                let linked: Vec<Identity> = directory
                    .links
                    .iter()
                    .filter(|(_, p)| **p == player)
                    .map(|(identity, _)| identity.clone())
                    .collect();
                let identities = directory.identities(&player);
                assert_eq!(identities[..linked.len()], linked[..], "{player}: linked identities first");
            }
        }
        // A renamed identity answers to its new name only.
        assert_eq!(directory.resolve("renamed7"), Ok(Some(PlayerId::new("@user7:hs"))));
        let Err(NameProblem::Ambiguous(name21)) = directory.resolve("Name21") else { panic!("shared name") };
        assert!(!name21.contains(&PlayerId::new("@user21:hs")), "user21 was renamed: {name21:?}");
        assert!(directory.is_scoped_id("irc:nick5"));
    }

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
        assert_eq!(directory.player(&irc(), &PlayerId::new("bob")), PlayerId::new("irc:bob"));
        directory.saw(&matrix(), &PlayerId::new("@carol:hs"), "Carol");
        assert_eq!(directory.resolve("Carol"), Ok(Some(PlayerId::new("@carol:hs"))));
        assert_eq!(directory.resolve("carol"), Ok(Some(PlayerId::new("@carol:hs"))));
        assert_eq!(directory.resolve("nobody"), Ok(None));
        directory.saw(&matrix(), &PlayerId::new("@bob:hs"), "Bobby");
        assert_eq!(
            directory.resolve("bob"),
            Err(NameProblem::Ambiguous(vec![PlayerId::new("irc:bob"), PlayerId::new("@bob:hs")]))
        );
        // A player id says which one.
        assert_eq!(directory.resolve("irc:bob"), Ok(Some(PlayerId::new("irc:bob"))));
        // Once linked, both answer for one player.
        directory.link(&matrix(), &PlayerId::new("@bob:hs"), &PlayerId::new("irc:bob"));
        assert_eq!(directory.resolve("bob"), Ok(Some(PlayerId::new("irc:bob"))));
    }

    #[test]
    fn is_identity_on_says_what_identity_on_says_without_a_copy() {
        let mut directory = Directory::default();
        let carol = PlayerId::new("@carol:hs");
        let bob = PlayerId::new("irc:bob");
        directory.saw(&matrix(), &carol, "Carol");
        directory.set_home(&bob, &irc(), &PlayerId::new("bob"), "bob");
        // Carol plays from IRC too, and her private messages now go there.
        directory.link(&irc(), &PlayerId::new("carol"), &carol);
        directory.set_home(&carol, &irc(), &PlayerId::new("carol"), "carol");
        for player in [&carol, &bob] {
            for network in [irc(), matrix()] {
                let shown = directory.identity_on(player, &network);
                assert_eq!(
                    directory.is_identity_on(player, &network),
                    shown.as_ref() == Some(player),
                    "{player} on {network}"
                );
            }
        }
        assert!(directory.is_identity_on(&carol, &matrix()));
        assert!(!directory.is_identity_on(&carol, &irc()), "on IRC she is `carol`");
        assert!(!directory.is_identity_on(&bob, &irc()), "on IRC he is `bob`, not `irc:bob`");
    }
}
