//! Duel challenges: `!duel`, `!accept`, `!decline`. A challenge waits in its place (a
//! room, or a bridge's hub) until the challenged player answers.

use super::*;

impl Router {
    pub(super) fn challenge(
        &mut self,
        speaker: &Speaker<'_>,
        opponent: PlayerId,
        wizard: Option<String>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let (place, challenger) = (&speaker.place, &speaker.player);
        let say = |text: &str| vec![reply(reply_to, RichText::from(text))];
        if speaker.inbound.private {
            return say("Challenge in the room where you want to play: `!duel <player> [wizard]` there.");
        }
        if &opponent == challenger {
            return say("You cannot duel yourself: type `!duel <player>` with another player's name.");
        }
        if self.active_at(place).is_some() {
            return say(
                "This room already has a table; one table per room. Finish it first, or challenge in another room.",
            );
        }
        if let Some(pending) = self.challenges.get(place) {
            let text = RichText::new()
                .mention(&pending.challenger)
                .text(" has already challenged ")
                .mention(&pending.opponent)
                .text(" here; wait for `!accept` or `!decline`.");
            let text = self.localize(&reply_to.network, text);
            return vec![reply(reply_to, text)];
        }
        let Some(duel) = self.registry.get("duel") else {
            return say("The Duel game is not enabled on this bot.");
        };
        // Check the challenger's wizard now, so a typo is caught before the opponent answers.
        let trial = TableSetup {
            room: place.room.clone(),
            seats: vec![
                Seat { player: challenger.clone(), choice: wizard.clone() },
                Seat { player: opponent.clone(), choice: None },
            ],
            now,
        };
        if let Err(refusal) = duel.open(&trial) {
            return vec![reply(reply_to, refusal_text(refusal))];
        }
        let text = RichText::new()
            .mention(challenger)
            .text(" challenges ")
            .mention(&opponent)
            .text(" to a Duel")
            .text(wizard.as_deref().map(|w| format!(" as {w}")).unwrap_or_default())
            .text("! ")
            .mention(&opponent)
            .text(": type ")
            .code("!accept [wizard]")
            .text(" or ")
            .code("!decline")
            .text(" (")
            .code("!wizards")
            .text(" lists the wizards).");
        self.log(Entry::Challenged {
            network: place.network.clone(),
            room: place.room.clone(),
            challenger: challenger.clone(),
            opponent: opponent.clone(),
            wizard: wizard.clone(),
        });
        self.challenges.insert(place.clone(), Challenge { challenger: challenger.clone(), opponent, wizard });
        let outbound = self.to_rooms(place, text);
        self.announced(outbound)
    }

    pub(super) fn accept(
        &mut self,
        place: &Place,
        sender: &PlayerId,
        wizard: Option<String>,
        now: Timestamp,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(challenge) = self.challenges.get(place).filter(|c| self.challenged(c, sender)).cloned()
        else {
            return vec![reply(
                reply_to,
                RichText::from(
                    "Nobody has challenged you in this room. Challenge someone with `!duel <player> [wizard]`.",
                ),
            )];
        };
        let seats = vec![
            Seat { player: challenge.challenger.clone(), choice: challenge.wizard.clone() },
            Seat { player: sender.clone(), choice: wizard },
        ];
        let before = self.tables.len();
        let out = self.open(place, "duel", seats, now, reply_to);
        if self.tables.len() > before {
            self.close_challenge(place);
        }
        out
    }

    /// Whether `player` is the one a challenge was made to: its opponent, or the one
    /// player its opponent's name names now. A name typed in `!duel` that named nobody
    /// the bot had heard yet (a Matrix display name, say, of someone who has not spoken
    /// since the start) is kept as typed; once that person speaks, it names them.
    pub(super) fn challenged(&self, challenge: &Challenge, player: &PlayerId) -> bool {
        &challenge.opponent == player
            || self.directory.resolve(challenge.opponent.as_str()).is_ok_and(|p| p.as_ref() == Some(player))
    }

    pub(super) fn decline(&mut self, place: &Place, sender: &PlayerId, reply_to: &ReplyTo) -> Vec<Outbound> {
        match self.challenges.get(place) {
            Some(c) if self.challenged(c, sender) || &c.challenger == sender => {
                let mut c = c.clone();
                if self.challenged(&c, sender) {
                    c.opponent = sender.clone();
                }
                self.close_challenge(place);
                let verb = if &c.opponent == sender {
                    " declines the Duel with "
                } else {
                    " withdraws the challenge to "
                };
                let other = if &c.opponent == sender { &c.challenger } else { &c.opponent };
                let text = RichText::new().mention(sender).text(verb).mention(other).text(".");
                let outbound = self.to_rooms(place, text);
                self.announced(outbound)
            }
            _ => vec![reply(
                reply_to,
                RichText::from("There is no challenge for you to decline in this room."),
            )],
        }
    }

    pub(super) fn close_challenge(&mut self, place: &Place) {
        if self.challenges.remove(place).is_some() {
            self.log(Entry::ChallengeClosed { network: place.network.clone(), room: place.room.clone() });
        }
    }
}
