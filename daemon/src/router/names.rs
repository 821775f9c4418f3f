//! Names typed for players in commands, resolved to player ids across networks, and only
//! in the arguments a command's grammar declares as players ([`PlayerArgument`]): every
//! other word reaches the game as the grammar read it, so a player called `fire` or `end`
//! never changes a game word.

use spellbridge_core::{Login, Member, Parsed, PlayerArgument, shown};

use super::said::said;
use super::*;
use crate::identity::is_global_id;
use crate::names::{NameRefusal, readable};
use spellbridge_core::locale::{self, Args};

impl Router {
    /// The player a name typed in a command means (CONTRACT.md "A player is named in a
    /// command by …"): first the members of `place`'s rooms (its bridge's too) who answer
    /// to it now, spoken or not ([`Router::present_named`]); when none does, a nick,
    /// display name, Matrix id or localpart, or player id the directory knows. `Ok(None)`
    /// when it names nobody; several candidates are an error that asks which, unless
    /// exactly one of them is in `prefer` (the players seated at the table the command is
    /// for).
    pub(super) fn resolve_name(
        &mut self,
        word: &str,
        place: &Place,
        prefer: &[PlayerId],
        language: Language,
    ) -> Result<Option<PlayerId>, RichText> {
        let present = self.present_named(place, word);
        if !present.is_empty() {
            return self.one_present(word, present, prefer, language).map(Some);
        }
        match self.identities.directory.resolve(word) {
            Ok(found) => Ok(found),
            Err(NameProblem::Ambiguous(players)) => {
                let mut seated = players.iter().filter(|p| prefer.contains(p));
                if let (Some(one), None) = (seated.next(), seated.next()) {
                    return Ok(Some(one.clone()));
                }
                let or = said(language, "names-or", Args::new());
                let mut ids = RichText::new();
                for (i, player) in players.iter().enumerate() {
                    if i > 0 {
                        ids = ids.append(or.clone());
                    }
                    ids = ids.code(player.as_str());
                }
                let args = Args::new().rich("word", RichText::new().code(word)).rich("players", ids);
                Err(said(language, "names-ambiguous", args))
            }
        }
    }

    /// The members of `place`'s rooms (a bridge's: every room) who answer to `word` now,
    /// each with their network; `network:nick` names a member of that network's room by
    /// nick (what the question [`Router::one_present`] asks tells people to type).
    fn present_named(&self, place: &Place, word: &str) -> Vec<(NetworkId, Member)> {
        let members = &self.options.room_members;
        let rooms = self.relay.rooms(place);
        let scoped = word.split_once(':').filter(|(network, rest)| {
            !network.starts_with('@')
                && !rest.is_empty()
                && rooms.iter().any(|p| p.network.as_str() == *network)
        });
        let mut found = Vec::new();
        for room in &rooms {
            let name = match scoped {
                Some((network, rest)) if room.network.as_str() == network => rest,
                Some(_) => continue,
                None => word,
            };
            for member in members.named(&room.network, &room.room, name) {
                let same = |(n, m): &(NetworkId, Member)| *n == room.network && m.identity == member.identity;
                if !found.iter().any(same) {
                    found.push((room.network.clone(), member));
                }
            }
        }
        found
    }

    /// The one player the members found for `word` are; else asks which (naming each with
    /// their network and what to type for them), or says why the one found cannot play
    /// (not logged in where players must be, or their account is still being asked for).
    fn one_present(
        &mut self,
        word: &str,
        present: Vec<(NetworkId, Member)>,
        prefer: &[PlayerId],
        language: Language,
    ) -> Result<PlayerId, RichText> {
        let mut players: Vec<(PlayerId, &NetworkId, &Member)> = Vec::new();
        for (network, member) in &present {
            let player = self.identities.directory.player(network, &member.identity);
            if !players.iter().any(|(p, ..)| *p == player) {
                players.push((player, network, member));
            }
        }
        if let [(player, network, member)] = players.as_slice() {
            let args = Args::new().text("name", shown::name(&member.shown)).text("network", network.as_str());
            return match member.login {
                Login::Known => {
                    let player = player.clone();
                    self.identities.directory.saw(network, &member.identity, &member.shown);
                    Ok(player)
                }
                Login::LoggedOut => Err(said(language, "names-logged-out", args)),
                Login::Asking => Err(said(language, "names-asking", args)),
            };
        }
        let mut seated = players.iter().filter(|(p, ..)| prefer.contains(p));
        if let (Some((player, network, member)), None) = (seated.next(), seated.next())
            && member.login == Login::Known
        {
            let player = player.clone();
            let (network, identity, shown) =
                ((*network).clone(), member.identity.clone(), member.shown.clone());
            self.identities.directory.saw(&network, &identity, &shown);
            return Ok(player);
        }
        let or = said(language, "names-or", Args::new());
        let mut which = RichText::new();
        for (i, (_, network, member)) in players.iter().enumerate() {
            if i > 0 {
                which = which.append(or.clone());
            }
            // What to type for them: a Matrix id as it is, else `network:nick`.
            let id = if is_global_id(member.identity.as_str()) {
                member.identity.as_str().to_owned()
            } else {
                format!("{network}:{}", member.shown)
            };
            let args = Args::new()
                .text("name", shown::name(&member.shown))
                .text("network", network.as_str())
                .rich("id", RichText::new().code(shown::name(&id)));
            which = which.append(said(language, "names-which-member", args));
        }
        let args = Args::new().rich("word", RichText::new().code(shown::name(word))).rich("members", which);
        Err(said(language, "names-which", args))
    }

    /// Resolves the names in a command's `Player` arguments (as its game declares them)
    /// to player ids; no other word is looked at. A seated player's exact id stays; a name
    /// nobody known answers to stays as typed for the game to judge, except where a new
    /// player is named (`!add bob`), which takes the id that name has on the sender's
    /// network (`libera:bob`) and must be readable.
    pub(super) fn resolve_players(
        &mut self,
        command: &mut Parsed,
        place: &Place,
        seated: &[PlayerId],
        network: &NetworkId,
        language: Language,
    ) -> Result<(), RichText> {
        for (argument, id) in command.players_mut() {
            let word = id.as_str().to_owned();
            let plain = word.trim_start_matches('@').trim_end_matches([':', ',', '：', '，']);
            if seated.iter().any(|p| p.as_str() == word || p.as_str() == plain) {
                continue;
            }
            // A known player's name means the one seated here, if only one of those it
            // could mean is; a new player is nobody seated yet.
            let prefer = if argument == PlayerArgument::Known { seated } else { &[] };
            let resolved = match self.resolve_name(&word, place, prefer, language)? {
                Some(player) => Some(player),
                None => {
                    let own = self.identities.directory.would_be(network, plain);
                    match argument {
                        PlayerArgument::New => {
                            readable(plain).map_err(|refusal| refusal_of_name(&refusal, language))?;
                            // A name of several words is a display name: only someone
                            // present has one (no network's id has a space).
                            if plain.contains(' ') {
                                let args = Args::new().text("name", crate::names::escaped(plain));
                                return Err(said(language, "names-nobody-present", args));
                            }
                            own
                        }
                        // A seated player not heard since the start (added by `!add`).
                        PlayerArgument::Known => own.filter(|id| seated.contains(id)),
                    }
                }
            };
            if let Some(player) = resolved {
                *id = player;
            }
        }
        Ok(())
    }
}

/// Why a new player's name was refused, and what to type instead, in `language` (plain
/// text: the name it echoes is escaped, never code).
pub(super) fn refusal_of_name(refusal: &NameRefusal, language: Language) -> RichText {
    let why = refusal.said(language);
    RichText::new().text(locale::text(language, "names-refused", &Args::new().text("why", why)))
}
