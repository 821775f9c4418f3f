//! Challenges: a game's challenge command (the Duel's `!duel`, from the registry),
//! `!accept`, `!decline`, `!withdraw`, told in the game's words
//! ([`super::challenge_words`]). A challenge names a player the bot knows and the game it
//! is to, and waits in its place (a room, or a bridge's hub) until that player
//! answers, the challenger withdraws it, a game master or room operator clears it
//! (`!withdraw`, or `!stop` where no table plays), or it expires (the game's
//! `challenge_lifetime`, by default [`CHALLENGE_LIFETIME_SECS`]). Each of those is
//! journaled.

use spellbridge_core::ChallengeWords;
use spellbridge_core::locale::Args;

use super::challenge_words::usage;
use super::said::said;
use super::*;
use crate::names::escaped;

/// How long a challenge waits for an answer unless the config says otherwise.
pub use spellbridge_core::options::CHALLENGE_LIFETIME_SECS;

/// A challenge's lifetime in words: "ten minutes" (the default), "90 seconds", "2 hours".
fn lifetime_words(seconds: i64, language: Language) -> RichText {
    let (unit, count) = match seconds {
        600 => ("ten-minutes", 10),
        60 => ("one-minute", 1),
        3600 => ("one-hour", 1),
        s if s % 3600 == 0 => ("hours", s / 3600),
        s if s % 60 == 0 => ("minutes", s / 60),
        s => ("seconds", s),
    };
    said(language, "lobby-lifetime", Args::new().word("unit", unit).num("count", count))
}

impl Router {
    /// Who a challenge's `words` name, and with which choice: the whole line when it names
    /// someone (`!duel Piet Silent`), else all but its last word, which is the choice (a
    /// Duel wizard: `!duel bob Pyromancer`). Naming nobody, the refusal shows `usage`, the
    /// challenge command as typed.
    fn opponent_named(
        &mut self,
        speaker: &Speaker<'_>,
        words: &[String],
        usage: &str,
        language: Language,
    ) -> Result<(PlayerId, Option<String>), RichText> {
        let place = &speaker.place;
        let whole = words.join(" ");
        if let Some(opponent) = self.resolve_name(&whole, place, &[], language)? {
            return Ok((opponent, None));
        }
        let (name, wizard) = match words {
            [] | [_] => (whole.clone(), None),
            [name @ .., wizard] => {
                (name.join(" "), Some(spellbridge_core::grammar::narrow(wizard).into_owned()))
            }
        };
        if wizard.is_some()
            && let Some(opponent) = self.resolve_name(&name, place, &[], language)?
        {
            return Ok((opponent, wizard));
        }
        // On the console, the one network there is, a name is the player it names.
        let typed = PlayerId::new(name.as_str());
        if self.identities.directory.scope(&speaker.inbound.network, &typed) == Scope::Bare {
            if let Err(refusal) = crate::names::readable(&name) {
                return Err(names::refusal_of_name(&refusal, language));
            }
            return Ok((typed, wizard));
        }
        let args = Args::new().text("name", escaped(&whole)).text("usage", usage);
        Err(said(language, "lobby-challenge-nobody", args))
    }

    /// A challenge to `game` (`!duel <player> [wizard]`): `words` are what follows the
    /// command word; the player's name may have several (a display name with spaces), see
    /// [`Router::opponent_named`].
    pub(super) fn challenge(
        &mut self,
        speaker: &Speaker<'_>,
        game: &str,
        words: &[String],
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let (place, challenger) = (&speaker.place, &speaker.player);
        let language = reply_to.language;
        let say = |id: &str| vec![reply(reply_to, said(language, id, Args::new()))];
        // The command came from this registry's games, so the game and its command are there.
        let Some(command) = self.registry.get(game).and_then(|g| g.challenge_command()) else {
            return Vec::new();
        };
        let typed = usage(command, language, true);
        if speaker.inbound.private {
            let args = Args::new().text("usage", typed);
            return vec![reply(reply_to, said(language, "lobby-challenge-private", args))];
        }
        let (opponent, wizard) = match self.opponent_named(speaker, words, &typed, language) {
            Ok(found) => found,
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        if &opponent == challenger {
            let yourself = self.challenge_said(game, |words| words.yourself, Args::new(), language);
            return vec![reply(reply_to, yourself)];
        }
        if self.active_at(place).is_some() {
            return say("lobby-challenge-busy");
        }
        if let Some(pending) = self.challenges.get(place) {
            let args =
                Args::new().mention("challenger", &pending.challenger).mention("opponent", &pending.opponent);
            let text = said(language, "lobby-challenge-pending", args);
            let text = self.localize(&reply_to.network, text);
            return vec![reply(reply_to, text)];
        }
        let Some(game) = self.registry.get(game) else { return Vec::new() };
        let game_name = game.name();
        // Check the challenger's wizard now, so a typo is caught before the opponent answers.
        let trial = TableSetup {
            room: place.room.clone(),
            seats: vec![
                Seat { player: challenger.clone(), choice: wizard.clone() },
                Seat { player: opponent.clone(), choice: None },
            ],
            now,
        };
        let trial = match game.open(&trial) {
            Ok(table) => table,
            Err(refusal) => {
                let language = reply_to.language;
                return vec![reply(reply_to, refusal_text(refusal, language))];
            }
        };
        let args = Args::new().mention("challenger", challenger).mention("opponent", &opponent);
        let (which, args): (fn(&ChallengeWords) -> &'static str, _) = match &wizard {
            Some(typed) => {
                // The wizard as the table names it (`pyromancer`, `火法师` → Pyromancer),
                // in the room's language (issue 31); escaped as a name is, since another
                // game's table may keep a choice as typed.
                let named = trial.choice(challenger).unwrap_or_else(|| typed.clone());
                let shown = escaped(&game.choice_in(&named, reply_to.language));
                (|words| words.challenge_as, args.text("choice", shown))
            }
            None => (|words| words.challenge, args),
        };
        let expires = now.plus(self.options.challenge_lifetime);
        self.log(Entry::Challenged {
            network: place.network.clone(),
            room: place.room.clone(),
            challenger: challenger.clone(),
            opponent: opponent.clone(),
            wizard: wizard.clone(),
            expires: Some(expires),
            guest: speaker.inbound.guest,
            game: Some(game_name.to_owned()),
        });
        let challenge = Challenge {
            game: game_name.to_owned(),
            challenger: challenger.clone(),
            opponent,
            wizard,
            expires,
            guest: speaker.inbound.guest,
        };
        self.challenges.insert(place.clone(), challenge);
        let outbound =
            self.to_rooms(place, |language| self.challenge_said(game_name, which, args.clone(), language));
        self.announced(outbound)
    }

    pub(super) fn accept(
        &mut self,
        place: &Place,
        sender: &PlayerId,
        guest: bool,
        wizard: Option<String>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(challenge) = self.challenges.get(place).filter(|c| self.challenged(c, sender)).cloned()
        else {
            let args = Args::new().rich("usages", self.challenge_usages(true, reply_to.language));
            return vec![reply(reply_to, said(reply_to.language, "lobby-accept-none", args))];
        };
        let seats = vec![
            Seat { player: challenge.challenger.clone(), choice: challenge.wizard.clone() },
            Seat { player: sender.clone(), choice: wizard },
        ];
        let before = self.tables.len();
        let out = self.open(place, &challenge.game, seats, &[challenge.guest, guest], now, reply_to);
        if self.tables.len() > before {
            self.close_challenge(place);
        }
        out
    }

    /// Whether `player` is the one a challenge was made to: exactly its opponent (a
    /// challenge names a known player, so nobody can take the name later).
    pub(super) fn challenged(&self, challenge: &Challenge, player: &PlayerId) -> bool {
        &challenge.opponent == player
    }

    pub(super) fn decline(&mut self, place: &Place, sender: &PlayerId, reply_to: &ReplyTo) -> Vec<Outbound> {
        match self.challenges.get(place) {
            Some(c) if self.challenged(c, sender) || &c.challenger == sender => {
                let mut c = c.clone();
                if self.challenged(&c, sender) {
                    c.opponent = sender.clone();
                }
                self.close_challenge(place);
                let declined = &c.opponent == sender;
                let other = if declined { &c.challenger } else { &c.opponent };
                let args = Args::new().mention("player", sender).mention("other", other);
                let outbound = self.to_rooms(place, |language| match declined {
                    // A refusal names the game refused, in its words.
                    true => self.challenge_said(&c.game, |words| words.declined, args.clone(), language),
                    false => said(language, "lobby-withdrawn", args.clone()),
                });
                self.announced(outbound)
            }
            _ => vec![reply(reply_to, said(reply_to.language, "lobby-decline-none", Args::new()))],
        }
    }

    /// `!withdraw`: the challenger takes their challenge back; a game master or room
    /// operator clears anyone's.
    pub(super) fn withdraw(&mut self, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Vec<Outbound> {
        let place = &speaker.place;
        let Some(challenge) = self.challenges.get(place).cloned() else {
            let args = Args::new().rich("usages", self.challenge_usages(false, reply_to.language));
            return vec![reply(reply_to, said(reply_to.language, "lobby-withdraw-none", args))];
        };
        if challenge.challenger == speaker.player {
            return self.decline(place, &speaker.player, reply_to);
        }
        if speaker.role == Role::Player {
            let language = reply_to.language;
            let args = Args::new()
                .mention("challenger", &challenge.challenger)
                .mention("opponent", &challenge.opponent)
                .rich("lifetime", lifetime_words(self.options.challenge_lifetime, language));
            let text = said(language, "lobby-withdraw-not-yours", args);
            let text = self.localize(&reply_to.network, text);
            return vec![reply(reply_to, text)];
        }
        self.clear_challenge(place, &speaker.player, &challenge)
    }

    /// A game master or room operator clears a challenge (`!withdraw`, or `!stop` where
    /// no table plays).
    pub(super) fn clear_challenge(
        &mut self,
        place: &Place,
        by: &PlayerId,
        challenge: &Challenge,
    ) -> Vec<Outbound> {
        self.close_challenge(place);
        let args = Args::new()
            .mention("player", by)
            .mention("challenger", &challenge.challenger)
            .mention("opponent", &challenge.opponent);
        let outbound =
            self.to_rooms(place, |language| said(language, "lobby-challenge-cleared", args.clone()));
        self.announced(outbound)
    }

    /// Closes every challenge whose time ran out by `now`, announcing it where it was
    /// made.
    pub(super) fn expire_challenges(&mut self, now: Timestamp) -> Vec<Outbound> {
        let expired: Vec<(Place, Challenge)> = self
            .challenges
            .iter()
            .filter(|(_, c)| c.expires <= now)
            .map(|(p, c)| (p.clone(), c.clone()))
            .collect();
        let mut out = Vec::new();
        for (place, challenge) in expired {
            self.close_challenge(&place);
            let args = Args::new()
                .mention("challenger", &challenge.challenger)
                .mention("opponent", &challenge.opponent);
            let outbound = self.to_rooms(&place, |language| {
                let args = args.clone().rich("usages", self.challenge_usage_of(&challenge.game, language));
                said(language, "lobby-challenge-expired", args)
            });
            out.extend(self.announced(outbound));
        }
        out
    }

    /// When the next challenge expires.
    pub(super) fn next_expiry(&self) -> Option<Timestamp> {
        self.challenges.values().map(|c| c.expires).min()
    }

    pub(super) fn close_challenge(&mut self, place: &Place) {
        if self.challenges.remove(place).is_some() {
            self.log(Entry::ChallengeClosed { network: place.network.clone(), room: place.room.clone() });
        }
    }
}

#[cfg(test)]
#[path = "challenge_tests.rs"]
mod tests;
