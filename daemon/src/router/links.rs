//! `!link`, `!link <code>` and `!unlink`: joining a person's identities on two networks
//! into one player (see [`crate::identity`]).
//!
//! Codes come from the router's [`SecretSource`] (the OS generator), so nothing a player
//! sees predicts one. An identity may send at most [`WRONG_CODES_PER_HOUR`] codes that
//! did not work in an hour ([`GuessLimits`]), every failure reads the same, and the
//! code's owner is told privately which identity joined them, with `!unlink` at hand.

use spellbridge_core::locale::Args;

use super::said::said;
use super::*;
use crate::identity::LinkError;
use crate::limits::WRONG_CODES_PER_HOUR;

impl Router {
    /// `!link`: a one-time code, sent privately, to say from the other network.
    pub(super) fn give_link_code(
        &mut self,
        speaker: &Speaker<'_>,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let owner = (inbound.network.clone(), inbound.sender.clone());
        let given = self.identities.directory.new_code(&speaker.player, &owner, &mut self.secrets, now);
        self.log(Entry::LinkCode {
            code: given.code.clone(),
            player: given.player,
            network: owner.0,
            identity: owner.1,
            expires: given.expires,
        });
        let code = given.code;
        let prefix = &self.options.prefix;
        // The code goes to the sender's private messages, in their language.
        let private = self.player_language(&speaker.player, &inbound.network);
        let args = Args::new().text("code", code.clone()).text("command", format!("{prefix}link {code}"));
        let secret = Outbound {
            network: inbound.network.clone(),
            to: Destination::Private(inbound.sender.clone()),
            message: said(private, "link-code", args).into(),
        };
        if inbound.private {
            vec![secret]
        } else {
            vec![secret, reply(reply_to, said(reply_to.language, "link-sent", Args::new()))]
        }
    }

    /// `!link <code>`: joins the sender's identity to the code's player.
    pub(super) fn redeem_link_code(
        &mut self,
        speaker: &Speaker<'_>,
        code: &str,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let language = reply_to.language;
        let say = |id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        if !inbound.private {
            // Anyone in the room could use the code now: it is void.
            self.close_code(code, now);
            return say("link-in-room", Args::new());
        }
        let identity = (inbound.network.clone(), inbound.sender.clone());
        if let Some(until) = self.identities.blocked_until(&identity, now) {
            let minutes = (until.0 - now.0 + 59) / 60;
            return say(
                "link-blocked",
                Args::new().num("tries", WRONG_CODES_PER_HOUR as i64).num("minutes", minutes),
            );
        }
        if self
            .tables
            .seated(&self.identities.directory.own_player(&identity.0, &identity.1))
            .next()
            .is_some()
        {
            return say("link-seated", Args::new());
        }
        let was_pending = self.identities.directory.is_pending(code, now);
        match self.identities.directory.redeem(code, &identity.0, &identity.1, now) {
            Err(error) => {
                if error == LinkError::NotValid {
                    self.identities.wrong_code(&identity, now);
                    if was_pending && !self.identities.directory.is_pending(code, now) {
                        // Tried wrongly too often: journal that it is void.
                        self.log(Entry::LinkCodeClosed { code: crate::identity::digits(code) });
                    }
                }
                match error {
                    LinkError::NotValid => say("link-not-valid", Args::new()),
                    LinkError::AlreadyLinked(player) => {
                        say("link-already-linked", Args::new().text("player", player.as_str()))
                    }
                    LinkError::HasLinks => say("link-has-links", Args::new()),
                }
            }
            Ok(redeemed) => {
                let player = redeemed.player;
                self.log(Entry::LinkCodeClosed { code: crate::identity::digits(code) });
                self.identities.directory.link(&identity.0, &identity.1, &player);
                self.log(Entry::Linked {
                    network: identity.0.clone(),
                    identity: identity.1.clone(),
                    player: player.clone(),
                });
                self.identities.directory.set_home(&player, &identity.0, &identity.1, &inbound.display_name);
                self.log(Entry::Home {
                    player: player.clone(),
                    network: identity.0.clone(),
                    identity: identity.1.clone(),
                    name: Some(inbound.display_name.clone()),
                });
                let name = self.identities.directory.display_name(&player);
                let prefix = &self.options.prefix;
                let (owner_network, owner) = redeemed.owner;
                // The owner hears of it where they asked, so a stolen code is undone at once.
                // The owner is told in their own private messages' language.
                let owner_language = self.player_language(&player, &owner_network);
                let args = Args::new()
                    .text("identity", identity.1.as_str())
                    .text("network", identity.0.as_str())
                    .text("unlink", format!("{prefix}unlink"));
                let told = Outbound {
                    network: owner_network,
                    to: Destination::Private(owner),
                    message: said(owner_language, "link-used", args).into(),
                };
                // `!unlink` is written in backticks as plain text, as it always was.
                let args = Args::new().text("name", name).text("unlink", format!("`{prefix}unlink`"));
                let answer = reply(reply_to, said(language, "link-linked", args));
                vec![answer, told]
            }
        }
    }

    /// Voids a code said where others could read it, and journals that if it was pending.
    fn close_code(&mut self, code: &str, now: Timestamp) {
        if self.identities.directory.is_pending(code, now) {
            self.identities.directory.void(code);
            self.log(Entry::LinkCodeClosed { code: crate::identity::digits(code) });
        }
    }

    /// `!unlink`: separates every identity joined to the sender's player.
    pub(super) fn unlink(&mut self, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Vec<Outbound> {
        let language = reply_to.language;
        let separated = self.identities.directory.unlink(&speaker.player);
        if separated.is_empty() {
            return vec![reply(reply_to, said(language, "link-none", Args::new()))];
        }
        self.log(Entry::Unlinked { player: speaker.player.clone() });
        let list: Vec<String> = separated
            .iter()
            .map(|(network, identity)| {
                let args = Args::new().text("identity", identity.as_str()).text("network", network.as_str());
                said(language, "link-identity-on", args).plain()
            })
            .collect();
        let separator = if language == Language::En { ", " } else { "、" };
        vec![reply(
            reply_to,
            said(language, "link-unlinked", Args::new().text("identities", list.join(separator))),
        )]
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::dice::{mix, unmix};

    use super::*;
    use crate::identity::CODE_LIFETIME_SECS;
    use crate::limits::WRONG_TRIES_PER_CODE;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    /// The daemon's router: secrets from the OS.
    fn router() -> Router {
        Router::new(Registry::standard(), RouterConfig::default())
    }

    fn on(network: &str, who: &str, text: &str) -> Inbound {
        Inbound {
            private: true,
            ..Inbound::new(NetworkId::new(network), RoomId::new(who), PlayerId::new(who), text)
        }
    }

    fn in_room(network: &str, who: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new("#magic"), PlayerId::new(who), text)
    }

    /// The code in the bot's private answer to `!link`.
    fn code_of(out: &[Outbound]) -> String {
        let text = out[0].message.text.plain();
        text.split('`').nth(1).map(str::to_owned).unwrap_or_else(|| panic!("no code in {text:?}"))
    }

    fn texts(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| o.message.text.plain()).collect()
    }

    /// Issue 13, finding 1: from a table's seed and two codes of their own, a player
    /// recovered the master seed and predicted alice's next code. With codes from the OS
    /// no such prediction holds.
    #[test]
    fn a_player_who_saw_seeds_and_their_own_codes_cannot_predict_alices_code() {
        let mut router = router();
        router.handle(&in_room("irc", "eve", "!new thaum"), T);
        // The dice seed of eve's first action (tables have secret keys now, RULES T-10;
        // this is the most a player can learn of them).
        router.handle(&in_room("irc", "eve", "!gather 1 fire"), T);
        let seed = router
            .take_journal()
            .iter()
            .find_map(|r| match r.entry {
                crate::journal::Entry::Acted { dice_seed, .. } => Some(dice_seed),
                _ => None,
            })
            .expect("a seed");
        let mine: Vec<String> =
            (0..2).map(|_| code_of(&router.handle(&on("irc", "eve", "!link"), T))).collect();
        // The old scheme: seed = mix(master ^ mix(table)), code n = mix(master ^ mix(n)) % 10^8.
        let master = unmix(seed) ^ mix(0);
        let predict = |n: u64| format!("{:08}", mix(master ^ mix(n)) % 100_000_000);
        let alices = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        assert_ne!(alices, predict(3), "alice's code was predicted");
        assert_ne!(alices, mine[1], "codes repeat");
        // Nor can the attacker redeem a guess built from the same inversion.
        let stolen = router.handle(&on("matrix", "@eve:hs", &format!("!link {}", predict(3))), T);
        assert!(texts(&stolen)[0].contains("did not link"), "{:?}", texts(&stolen));
    }

    #[test]
    fn five_wrong_codes_in_an_hour_and_even_the_right_one_is_refused() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        let wrong = if code == "00000000" { "00000001" } else { "00000000" };
        for minute in 0..5 {
            let out = router.handle(&on("matrix", "@eve:hs", &format!("!link {wrong}")), T.plus(minute * 60));
            assert!(texts(&out)[0].contains("does not work here"), "{:?}", texts(&out));
        }
        let sixth = router.handle(&on("matrix", "@eve:hs", &format!("!link {code}")), T.plus(300));
        assert!(texts(&sixth)[0].contains("not reading codes from you"), "{:?}", texts(&sixth));
        assert!(
            router.identities.directory.is_pending(&code, T.plus(300)),
            "the refused guess did not use the code"
        );
        // Another identity is not held back, and alice's code still works for her.
        let linked = router.handle(&on("matrix", "@alice:hs", &format!("!link {code}")), T.plus(300));
        assert!(texts(&linked)[0].starts_with("Linked"), "{:?}", texts(&linked));
        // An hour after the first wrong code, eve may try again.
        let later = router.handle(&on("matrix", "@eve:hs", &format!("!link {wrong}")), T.plus(3600));
        assert!(texts(&later)[0].contains("does not work here"), "{:?}", texts(&later));
    }

    /// Issue 29, item 8: `/nick guesser2` does not give five fresh guesses.
    #[test]
    fn a_renamed_guesser_stays_locked_out() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        let wrong = if code == "00000000" { "00000001" } else { "00000000" };
        for _ in 0..5 {
            router.handle(&on("two", "guesser", &format!("!link {wrong}")), T);
        }
        let renamed = Inbound {
            formerly: Some(PlayerId::new("guesser")),
            ..on("two", "guesser2", &format!("!link {code}"))
        };
        let out = router.handle(&renamed, T.plus(60));
        assert!(texts(&out)[0].contains("not reading codes from you"), "{:?}", texts(&out));
        assert!(
            router.identities.directory.is_pending(&code, T.plus(60)),
            "the refused guess did not use the code"
        );
        let again = router.handle(&on("two", "guesser2", &format!("!link {wrong}")), T.plus(120));
        assert!(texts(&again)[0].contains("not reading codes from you"), "{:?}", texts(&again));
        // Someone else on that network, even under the guesser's old nick, is not held back.
        let other = router.handle(&on("two", "guesser", &format!("!link {wrong}")), T.plus(120));
        assert!(texts(&other)[0].contains("does not work here"), "{:?}", texts(&other));
        let linked = router.handle(&on("two", "alice", &format!("!link {code}")), T.plus(120));
        assert!(texts(&linked)[0].starts_with("Linked"), "{:?}", texts(&linked));
    }

    #[test]
    fn a_code_tried_wrongly_five_times_is_void_and_journaled_so() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        // Tries from the code's own network (other identities, so no one is held back).
        for i in 0..WRONG_TRIES_PER_CODE {
            router.handle(&on("irc", &format!("eve{i}"), &format!("!link {code}")), T);
        }
        let journal = router.take_journal();
        assert!(journal.iter().any(|r| r.entry == Entry::LinkCodeClosed { code: code.clone() }));
        let out = router.handle(&on("matrix", "@alice:hs", &format!("!link {code}")), T);
        assert!(texts(&out)[0].contains("does not work here"), "{:?}", texts(&out));
    }

    #[test]
    fn unknown_same_network_and_expired_codes_get_one_answer() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        let unknown = if code == "00000000" { "00000001" } else { "00000000" };
        let answers = [
            router.handle(&on("matrix", "@eve:hs", &format!("!link {unknown}")), T),
            router.handle(&on("irc", "eve", &format!("!link {code}")), T),
            router.handle(&on("matrix", "@mallory:hs", &format!("!link {code}")), T.plus(CODE_LIFETIME_SECS)),
        ];
        let answers: Vec<Vec<String>> = answers.iter().map(|out| texts(out)).collect();
        assert!(answers.iter().all(|a| *a == answers[0]), "{answers:#?}");
    }

    #[test]
    fn the_owner_is_told_who_linked_and_can_unlink_at_once() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        let out = router.handle(&on("matrix", "@eve:hs", &format!("!link {code}")), T);
        let told = out
            .iter()
            .find(|o| o.network.as_str() == "irc" && o.to == Destination::Private(PlayerId::new("alice")))
            .unwrap_or_else(|| panic!("alice is not told: {out:?}"));
        let text = told.message.text.plain();
        assert!(
            text.contains("`@eve:hs` on matrix now plays as you") && text.contains("`!unlink`"),
            "{text}"
        );
        let undone = router.handle(&on("irc", "alice", "!unlink"), T);
        assert_eq!(texts(&undone), ["Unlinked @eve:hs on matrix."]);
        assert_eq!(
            router.identities.directory.player(&NetworkId::new("matrix"), &PlayerId::new("@eve:hs")).as_str(),
            "@eve:hs"
        );
    }

    #[test]
    fn a_pending_code_survives_a_restart() {
        let mut router = router();
        let code = code_of(&router.handle(&on("irc", "alice", "!link"), T));
        let journal = router.take_journal();
        let mut restarted = self::router();
        for record in &journal {
            restarted.replay(&record.entry).expect("replays");
        }
        let out = restarted.handle(&on("matrix", "@alice:hs", &format!("!link {code}")), T.plus(60));
        assert!(texts(&out)[0].starts_with("Linked"), "{:?}", texts(&out));
        // A used code is closed in the journal: replayed again, it does not come back.
        let mut again = self::router();
        for record in journal.iter().chain(&restarted.take_journal()) {
            again.replay(&record.entry).expect("replays");
        }
        assert!(!again.identities.directory.is_pending(&code, T.plus(60)));
    }
}
