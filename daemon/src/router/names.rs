//! Names typed for players in commands, resolved to player ids across networks, and only
//! where a command declares a player ([`PlayerArgument`]): every other word reaches the
//! game as typed, so a player called `fire` or `end` never changes a game word.

use spellbridge_core::PlayerArgument;

use super::*;
use crate::names::{NameRefusal, readable};

impl Router {
    /// The player a name typed in a command means: a nick, display name, Matrix id or
    /// localpart, or player id the directory knows (CONTRACT.md "A player is named in a
    /// command by …"). `Ok(None)` when it names nobody known; several candidates are an
    /// error that lists them, unless exactly one of them is in `prefer` (the players
    /// seated at the table the command is for).
    pub(super) fn resolve_name(&self, word: &str, prefer: &[PlayerId]) -> Result<Option<PlayerId>, RichText> {
        match self.directory.resolve(word) {
            Ok(found) => Ok(found),
            Err(NameProblem::Ambiguous(players)) => {
                let mut seated = players.iter().filter(|p| prefer.contains(p));
                if let (Some(one), None) = (seated.next(), seated.next()) {
                    return Ok(Some(one.clone()));
                }
                let mut text = RichText::new().code(word).text(" could be ");
                for (i, player) in players.iter().enumerate() {
                    text = text.text(if i == 0 { "" } else { " or " }).code(player.as_str());
                }
                Err(text.text("; name them by one of those ids."))
            }
        }
    }

    /// Rewrites the names in a table command's player arguments (as its game declares
    /// them) to player ids. A seated player's exact id stays; a name nobody known answers
    /// to stays as typed for the game to judge, except where a new player is named
    /// (`!add bob`), which takes the id that name has on the sender's network
    /// (`libera:bob`) and must be readable.
    pub(super) fn resolve_names(
        &self,
        game: &str,
        command: &str,
        seated: &[PlayerId],
        network: &NetworkId,
    ) -> Result<String, RichText> {
        let mut words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        let Some(head) = words.first().map(|w| w.to_lowercase()) else { return Ok(command.to_owned()) };
        let spec = self.registry.get(game).and_then(|plugin| {
            plugin.commands().iter().find(|c| c.name == head || c.aliases.contains(&head.as_str()))
        });
        let Some(spec) = spec else { return Ok(command.to_owned()) };
        for argument in spec.players {
            let Some(word) = words.get(argument.position() + 1).cloned() else { continue };
            let plain = word.trim_start_matches('@').trim_end_matches([':', ',']);
            if seated.iter().any(|p| p.as_str() == word || p.as_str() == plain) {
                continue;
            }
            // A known player's name means the one seated here, if only one of those it
            // could mean is; a new player is nobody seated yet.
            let prefer = if matches!(argument, PlayerArgument::Known(_)) { seated } else { &[] };
            let resolved = match self.resolve_name(&word, prefer)? {
                Some(player) => Some(player),
                None => {
                    let own = self.directory.would_be(network, plain);
                    match argument {
                        PlayerArgument::New(_) => {
                            readable(plain).map_err(|refusal| refusal_of_name(&refusal))?;
                            own
                        }
                        // A seated player not heard since the start (added by `!add`).
                        PlayerArgument::Known(_) => own.filter(|id| seated.contains(id)),
                    }
                }
            };
            if let (Some(player), Some(slot)) = (resolved, words.get_mut(argument.position() + 1)) {
                *slot = player.as_str().to_owned();
            }
        }
        Ok(words.join(" "))
    }
}

/// Why a new player's name was refused, and what to type instead.
pub(super) fn refusal_of_name(refusal: &NameRefusal) -> RichText {
    RichText::new()
        .text(format!("{refusal}: "))
        .text("a player's name must be letters, digits and ordinary punctuation that everyone reads the same way; ")
        .text("type their nick as their network shows it, or ask them to speak first so I know them.")
}
