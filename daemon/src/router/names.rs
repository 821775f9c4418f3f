//! Names typed for players in commands, resolved to player ids across networks.

use super::*;

impl Router {
    /// The player a name typed in a command means: a player id as it is, else a nick,
    /// display name or linked name the directory knows (RULES-independent: CONTRACT.md
    /// "A player is named in a command by …"). Several candidates are an error that
    /// lists them.
    pub(super) fn resolve_name(&self, word: &str) -> Result<PlayerId, RichText> {
        match self.directory.resolve(word) {
            Ok(found) => Ok(found.unwrap_or_else(|| PlayerId::new(word))),
            Err(NameProblem::Ambiguous(players)) => {
                let mut text = RichText::new().code(word).text(" could be ");
                for (i, player) in players.iter().enumerate() {
                    text = text.text(if i == 0 { "" } else { " or " }).code(player.as_str());
                }
                Err(text.text("; name them by one of those ids."))
            }
        }
    }

    /// Rewrites the names in a table command to player ids. Numbers and the ids of
    /// seated players are left alone, so game words and exact ids never change.
    pub(super) fn resolve_names(&self, command: &str, seated: &[PlayerId]) -> Result<String, RichText> {
        let mut words = command.split_whitespace();
        let mut out: Vec<String> = words.next().map(str::to_owned).into_iter().collect();
        for word in words {
            let plain = word.trim_start_matches('@').trim_end_matches([':', ',']);
            let keep = plain.chars().all(|c| c.is_ascii_digit() || c == '+' || c == '-')
                || seated.iter().any(|p| p.as_str() == plain);
            let resolved = if keep { word.to_owned() } else { self.resolve_name(word)?.as_str().to_owned() };
            // A word that named nobody known stays as typed, for the game to judge.
            out.push(if resolved == plain { word.to_owned() } else { resolved });
        }
        Ok(out.join(" "))
    }
}
