//! Names typed for players in commands, resolved to player ids across networks, and only
//! in the arguments a command's grammar declares as players ([`PlayerArgument`]): every
//! other word reaches the game as the grammar read it, so a player called `fire` or `end`
//! never changes a game word.

use spellbridge_core::{Parsed, PlayerArgument};

use super::said::said;
use super::*;
use crate::names::{NameRefusal, readable};
use spellbridge_core::locale::{self, Args};

impl Router {
    /// The player a name typed in a command means: a nick, display name, Matrix id or
    /// localpart, or player id the directory knows (CONTRACT.md "A player is named in a
    /// command by …"). `Ok(None)` when it names nobody known; several candidates are an
    /// error that lists them, unless exactly one of them is in `prefer` (the players
    /// seated at the table the command is for).
    pub(super) fn resolve_name(
        &self,
        word: &str,
        prefer: &[PlayerId],
        language: Language,
    ) -> Result<Option<PlayerId>, RichText> {
        match self.directory.resolve(word) {
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

    /// Resolves the names in a command's `Player` arguments (as its game declares them)
    /// to player ids; no other word is looked at. A seated player's exact id stays; a name
    /// nobody known answers to stays as typed for the game to judge, except where a new
    /// player is named (`!add bob`), which takes the id that name has on the sender's
    /// network (`libera:bob`) and must be readable.
    pub(super) fn resolve_players(
        &self,
        command: &mut Parsed,
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
            let resolved = match self.resolve_name(&word, prefer, language)? {
                Some(player) => Some(player),
                None => {
                    let own = self.directory.would_be(network, plain);
                    match argument {
                        PlayerArgument::New => {
                            readable(plain).map_err(|refusal| refusal_of_name(&refusal, language))?;
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
