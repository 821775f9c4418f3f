//! The per-player command limit as the router applies it (the counting itself is
//! [`crate::limits`]): on every network that configures one, linked identities counted
//! as one player, an IRC nick change carrying the count, the console unlimited; and a
//! bridge's `speaker_rate` for relayed chat ([`crate::relay::rate`]), linked identities
//! sharing one bucket.

use spellbridge_core::locale::{self, Args};

use super::*;
use crate::relay::rate::Pace;

impl Router {
    /// Applies the sender's network's command limit to `player` (counted across their
    /// linked identities, and across an IRC nick change: see [`Inbound::formerly`]). `Err` holds what to send
    /// instead of handling the command: a notice the first time, then nothing.
    pub(super) fn within_limits(
        &mut self,
        inbound: &Inbound,
        player: &PlayerId,
        now: Timestamp,
    ) -> Result<(), Vec<Outbound>> {
        let Some(limit) = self.options.command_limits.get(&inbound.network).copied() else {
            return Ok(());
        };
        match self.guards.command(player, limit, now) {
            Verdict::Accept => Ok(()),
            Verdict::Drop => Err(Vec::new()),
            Verdict::DropWithNotice => Err(vec![Outbound {
                network: inbound.network.clone(),
                to: Destination::Private(inbound.sender.clone()),
                message: RichText::from(limit.notice_in(self.player_language(player, &inbound.network)))
                    .into(),
            }]),
        }
    }
}

impl Router {
    /// `Some` when `player`'s chat in `here` is over its bridge's `speaker_rate`: the turn
    /// to take instead of relaying it (a private notice the first time in a flood, then
    /// nothing). The line is refused here, before anything is committed to the outbox.
    pub(super) fn too_fast(
        &mut self,
        inbound: &Inbound,
        here: &Place,
        player: &PlayerId,
        now: Timestamp,
    ) -> Option<Turn> {
        let bridge = self.relay.bridge(here).filter(|b| b.relay)?;
        let (rate, name) = (bridge.speaker_rate?, bridge.name.clone());
        let told = match self.guards.speak(player, rate, now) {
            Pace::Relay => return None,
            Pace::Drop => Vec::new(),
            Pace::DropWithNotice => {
                let language = self.player_language(player, &inbound.network);
                let args = Args::new().num("lines", rate.burst).num("seconds", rate.every_secs);
                vec![Outbound {
                    network: inbound.network.clone(),
                    to: Destination::Private(inbound.sender.clone()),
                    message: RichText::from(locale::text(language, "notice-relay-too-fast", &args)).into(),
                }]
            }
        };
        Some(Turn::new(Happened::TooFast { bridge: name }, told))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;
    const LIMIT: CommandLimit = CommandLimit { commands: 3, window_secs: 10 };

    fn limited() -> Router {
        let command_limits = [(NetworkId::new("irc"), LIMIT), (NetworkId::new("matrix"), LIMIT)].into();
        Router::new(Registry::standard(), RouterConfig { command_limits, ..RouterConfig::default() })
    }

    fn on(network: &str, who: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new(network), RoomId::new("#magic"), PlayerId::new(who), text)
    }

    /// How many of `n` `!games` from `who` on `network` were answered, and the notices.
    fn answered(router: &mut Router, network: &str, who: &str, n: usize) -> (usize, Vec<String>) {
        let mut count = 0;
        let mut notices = Vec::new();
        for _ in 0..n {
            for out in router.handle(&on(network, who, "!games"), T) {
                let text = out.message.text.plain();
                if text.starts_with("Slow down") {
                    assert_eq!(out.to, Destination::Private(PlayerId::new(who)), "the notice is private");
                    notices.push(text);
                } else {
                    count += 1;
                }
            }
        }
        (count, notices)
    }

    #[test]
    fn a_matrix_user_is_limited_too() {
        let mut router = limited();
        let (count, notices) = answered(&mut router, "matrix", "@flood:hs", 10);
        assert_eq!(count, 3);
        assert_eq!(notices.len(), 1, "told once: {notices:?}");
        assert!(notices[0].contains("faster than 3 per 10 s"), "{notices:?}");
        // Others are not held back, and the window moves on.
        assert_eq!(answered(&mut router, "matrix", "@bob:hs", 1).0, 1);
        assert_eq!(router.handle(&on("matrix", "@flood:hs", "!games"), T.plus(10)).len(), 1);
    }

    #[test]
    fn linked_identities_share_one_count() {
        let mut router = limited();
        let given = router.handle(&Inbound { private: true, ..on("irc", "alice", "!link") }, T);
        let code = given[0].message.text.plain().split('`').nth(1).expect("a code").to_owned();
        let linked = router
            .handle(&Inbound { private: true, ..on("matrix", "@alice:hs", &format!("!link {code}")) }, T);
        assert!(linked[0].message.text.plain().starts_with("Linked"), "{linked:?}");
        // alice has spent two (`!link` and this), so one more from either side, then none;
        // counted apart, the Matrix identity (one spent on `!link <code>`) would have two.
        assert_eq!(answered(&mut router, "irc", "alice", 1).0, 1);
        assert_eq!(answered(&mut router, "matrix", "@alice:hs", 3), (1, vec![LIMIT.notice()]));
    }

    #[test]
    fn a_nick_change_does_not_give_a_fresh_allowance() {
        let mut router = limited();
        assert_eq!(answered(&mut router, "irc", "mallory", 3).0, 3);
        let renamed = Inbound { formerly: Some(PlayerId::new("mallory")), ..on("irc", "mallory2", "!games") };
        let out = router.handle(&renamed, T);
        assert_eq!(out.len(), 1);
        assert!(out[0].message.text.plain().starts_with("Slow down"), "{out:?}");
        assert_eq!(answered(&mut router, "irc", "mallory2", 3).0, 0);
    }

    #[test]
    fn a_network_without_a_limit_and_the_console_have_none() {
        let mut router = limited();
        assert_eq!(answered(&mut router, "other", "alice", 20).0, 20);
        let mut console = Router::new(Registry::standard(), RouterConfig::default());
        assert_eq!(answered(&mut console, "console", "alice", 50).0, 50);
    }

    const RATE: crate::relay::rate::SpeakerRate = crate::relay::rate::SpeakerRate { burst: 3, every_secs: 2 };

    /// The bridged router (irc #magic, matrix !m) with `RATE` on its bridge.
    fn paced() -> Router {
        let rooms =
            [(NetworkId::new("irc"), RoomId::new("#magic")), (NetworkId::new("matrix"), RoomId::new("!m"))];
        let bridges =
            vec![Bridge { speaker_rate: Some(RATE), ..crate::relay::bridge("magic", &rooms, true) }];
        Router::new(Registry::standard(), RouterConfig { bridges, ..RouterConfig::default() })
    }

    fn chat(network: &str, who: &str, text: &str) -> Inbound {
        let room = if network == "irc" { "#magic" } else { "!m" };
        Inbound::new(NetworkId::new(network), RoomId::new(room), PlayerId::new(who), text)
    }

    /// How many of `n` lines `who` said at `at` crossed, and the notices they got.
    fn crossed(
        router: &mut Router,
        network: &str,
        who: &str,
        n: usize,
        at: Timestamp,
    ) -> (usize, Vec<String>) {
        let mut count = 0;
        let mut notices = Vec::new();
        for i in 0..n {
            let turn = router.handle_turn(&chat(network, who, &format!("line {i}")), at);
            for out in turn.outbound {
                if out.message.chat {
                    count += 1;
                } else {
                    assert_eq!(out.to, Destination::Private(PlayerId::new(who)), "the notice is private");
                    assert!(matches!(&turn.happened, Happened::TooFast { bridge } if bridge == "magic"));
                    notices.push(out.message.text.plain());
                }
            }
        }
        (count, notices)
    }

    /// Issue 29, item 7: a burst, then one line per interval; one notice per flood;
    /// another speaker crosses at once.
    #[test]
    fn a_speakers_chat_crosses_at_its_rate_and_they_are_told_once() {
        let mut router = paced();
        let (count, notices) = crossed(&mut router, "irc", "flood", 200, T);
        assert_eq!(count, 3, "the burst");
        assert_eq!(notices.len(), 1, "told once: {notices:?}");
        assert!(
            notices[0].contains("at most 3 lines at once") && notices[0].contains("every 2 s"),
            "{notices:?}"
        );
        assert_eq!(crossed(&mut router, "irc", "bob", 1, T).0, 1, "bob is not held back");
        assert_eq!(crossed(&mut router, "matrix", "@carol:hs", 1, T).0, 1);
        assert_eq!(crossed(&mut router, "irc", "flood", 1, T.plus(1)), (0, Vec::new()), "still told");
        assert_eq!(crossed(&mut router, "irc", "flood", 2, T.plus(2)).0, 1, "one line refilled");
        // The refused lines were never committed: nothing journaled for them.
        assert!(router.take_journal().is_empty());
    }

    #[test]
    fn linked_identities_share_one_bucket() {
        let mut router = paced();
        let given = router.handle(&Inbound { private: true, ..on("irc", "alice", "!link") }, T);
        let code = given[0].message.text.plain().split('`').nth(1).expect("a code").to_owned();
        router.handle(&Inbound { private: true, ..on("matrix", "@alice:hs", &format!("!link {code}")) }, T);
        assert_eq!(crossed(&mut router, "irc", "alice", 2, T).0, 2);
        let (count, notices) = crossed(&mut router, "matrix", "@alice:hs", 2, T);
        assert_eq!(count, 1, "one left of the shared burst");
        assert_eq!(notices.len(), 1);
        assert!(notices[0].starts_with("Slow down"), "{notices:?}");
    }
}
