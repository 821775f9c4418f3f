//! `!ignore <player>` and `!unignore <player>`: a configured bot admin (`[permissions]
//! admins`) has the bot drop a player's commands and chat. The player is told once (per
//! start of the daemon) and then dropped silently; nothing they say is relayed. The list
//! is journaled, so it survives a restart.

use spellbridge_core::locale::Args;

use super::said::said;
use super::*;

impl Router {
    /// True when one of the identities of `player` (or the sender's own) is a configured
    /// bot admin.
    fn is_admin(&self, inbound: &Inbound, player: &PlayerId) -> bool {
        let admins = &self.options.permissions.admins;
        if admins.is_empty() {
            return false;
        }
        let mut identities = self.directory.identities(player);
        identities.push((inbound.network.clone(), inbound.sender.clone()));
        identities.iter().any(|identity| admins.contains(identity))
    }

    /// `Some` when the sender is ignored: what to send instead of handling the message
    /// (the notice the first time, then nothing).
    pub(super) fn ignoring(&mut self, inbound: &Inbound) -> Option<Vec<Outbound>> {
        if self.ignored.is_empty() {
            return None;
        }
        let player = self.directory.player(&inbound.network, &inbound.sender);
        let told = self.ignored.get_mut(&player)?;
        if std::mem::replace(told, true) {
            return Some(Vec::new());
        }
        Some(vec![Outbound {
            network: inbound.network.clone(),
            to: Destination::Private(inbound.sender.clone()),
            message: said(
                self.player_language(&player, &inbound.network),
                "lobby-ignored-notice",
                Args::new(),
            )
            .into(),
        }])
    }

    /// `!ignore [player]`.
    pub(super) fn ignore(
        &mut self,
        speaker: &Speaker<'_>,
        name: Option<&str>,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let language = reply_to.language;
        let say = |id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        if !self.is_admin(speaker.inbound, &speaker.player) {
            return say("lobby-ignore-not-admin", Args::new());
        }
        let Some(name) = name else {
            if self.ignored.is_empty() {
                return say("lobby-ignore-nobody", Args::new());
            }
            let list: Vec<&str> = self.ignored.keys().map(PlayerId::as_str).collect();
            return say("lobby-ignore-list", Args::new().text("players", list.join(", ")));
        };
        let player = match self.resolve_name(name, &[], language) {
            Ok(player) => player.unwrap_or_else(|| self.named_elsewhere(speaker, name)),
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        if player == speaker.player {
            return say("lobby-ignore-self", Args::new());
        }
        let admin =
            self.directory.identities(&player).iter().any(|i| self.options.permissions.admins.contains(i));
        if admin {
            let args = Args::new().text("player", player.as_str()).text("setting", "`[permissions] admins`");
            return say("lobby-ignore-admin", args);
        }
        if self.ignored.contains_key(&player) {
            return say("lobby-ignore-already", Args::new().text("player", player.as_str()));
        }
        self.ignored.insert(player.clone(), false);
        self.log(Entry::Ignored { player: player.clone() });
        let undo = format!("{}unignore {player}", self.options.prefix);
        say("lobby-ignoring", Args::new().text("player", player.as_str()).text("undo", undo))
    }

    /// `!unignore <player>`.
    pub(super) fn unignore(
        &mut self,
        speaker: &Speaker<'_>,
        name: &str,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let language = reply_to.language;
        let say = |id: &str, args: Args| vec![reply(reply_to, said(language, id, args))];
        if !self.is_admin(speaker.inbound, &speaker.player) {
            return say("lobby-unignore-not-admin", Args::new());
        }
        let player = match self.resolve_name(name, &[], language) {
            Ok(player) => player.unwrap_or_else(|| self.named_elsewhere(speaker, name)),
            Err(problem) => return vec![reply(reply_to, problem)],
        };
        if self.ignored.remove(&player).is_none() {
            return say("lobby-unignore-not", Args::new().text("player", player.as_str()));
        }
        self.log(Entry::Unignored { player: player.clone() });
        say("lobby-unignored", Args::new().text("player", player.as_str()))
    }
}

impl Router {
    /// The player a name nobody known answers to would be: that nick on the speaker's
    /// network (`libera:eve`), else the name as typed.
    fn named_elsewhere(&self, speaker: &Speaker<'_>, name: &str) -> PlayerId {
        self.directory.would_be(&speaker.inbound.network, name).unwrap_or_else(|| PlayerId::new(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    /// The bridged test router, with `irc/root` a bot admin.
    fn router() -> Router {
        super::super::tests::bridged(Permissions {
            admins: vec![(NetworkId::new("irc"), PlayerId::new("root"))],
            game_masters: Vec::new(),
        })
    }

    fn irc(nick: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
    }

    fn texts(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| o.message.text.plain()).collect()
    }

    #[test]
    fn an_admin_ignores_a_player_who_is_told_once_then_dropped() {
        let mut router = router();
        router.handle(&irc("spammer", "hello"), T);
        let ignored = router.handle(&irc("root", "!ignore spammer"), T);
        assert!(texts(&ignored)[0].contains("Ignoring `irc:spammer`"), "{:?}", texts(&ignored));
        let first = router.handle(&irc("spammer", "!games"), T);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].to, Destination::Private(PlayerId::new("spammer")));
        assert!(texts(&first)[0].contains("asked me to ignore you"), "{:?}", texts(&first));
        // Then silence: no command taken, no chat relayed to the bridge.
        assert!(router.handle(&irc("spammer", "!new thaum"), T).is_empty());
        assert!(router.handle(&irc("spammer", "buy cheap mana"), T).is_empty());
        assert_eq!(router.snapshot()["tables"], json!([]));
        // The list (ids name their network) survives a restart (journaled); `!unignore`
        // takes them back.
        let journal = router.take_journal();
        let mut restarted = self::router();
        journal.iter().for_each(|r| restarted.replay(&r.entry).expect("replays"));
        assert_eq!(
            texts(&restarted.handle(&irc("root", "!ignore"), T)),
            ["root: Ignored: irc:spammer. `!unignore <player>` takes one back."]
        );
        restarted.handle(&irc("root", "!unignore spammer"), T);
        assert_eq!(texts(&restarted.handle(&irc("spammer", "hi all"), T)), ["<spammer> hi all"]);
    }

    #[test]
    fn only_admins_ignore_and_admins_cannot_be_ignored() {
        let mut router = router();
        router.handle(&irc("root", "!games"), T);
        let refused = router.handle(&irc("bob", "!ignore alice"), T);
        assert!(texts(&refused)[0].contains("Only the bot's admins"), "{:?}", texts(&refused));
        let game_master = Inbound { operator: true, ..irc("op", "!ignore alice") };
        assert!(texts(&router.handle(&game_master, T))[0].contains("Only the bot's admins"));
        let admin = router.handle(&irc("root", "!ignore root"), T);
        assert!(texts(&admin)[0].contains("cannot ignore yourself"), "{:?}", texts(&admin));
        assert!(router.take_journal().iter().all(|r| !matches!(r.entry, Entry::Ignored { .. })));
        let usage = router.handle(&irc("root", "!unignore"), T);
        assert!(texts(&usage)[0].contains("!unignore <player>"), "{:?}", texts(&usage));
    }
}
