//! A raw IRC player facing the spellbridge bot, for the daemon tests: connect and join,
//! wait until the bot answers in a room, and wait for what it says (failures show the
//! daemon's log). The bot's nick and the room are the test's; every wait is bounded.

use std::time::{Duration, Instant};

use spellbridge_adapters::irc::format::strip;

use super::daemon::Daemon;
use super::inspircd::InspIrcd;
use super::irc_client::{IrcClient, Message};

/// How long the bot may take to answer once it is in the room.
pub const WAIT: Duration = Duration::from_secs(15);

/// How long the bot may take to connect and join a room.
pub const STARTUP: Duration = Duration::from_secs(30);

/// An InspIRCd for one test; the failure names the install script.
pub fn server() -> InspIrcd {
    InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"))
}

/// The bot as the players see it: its nick, its room, and the daemon behind it.
#[derive(Clone, Copy)]
pub struct Bot<'a> {
    /// Its nick.
    pub nick: &'a str,
    /// The room the test plays in.
    pub room: &'a str,
    /// The daemon, for its log when a wait fails.
    pub daemon: &'a Daemon,
}

impl Bot<'_> {
    /// A player connected to the server on `port` and in the room.
    pub async fn player(&self, port: u16, nick: &str) -> IrcClient {
        let mut client =
            IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
        client.join(self.room).await.unwrap_or_else(|e| panic!("{nick} joins: {e}"));
        client
    }

    /// Says `!games` in the room until the bot answers there (so it has joined), within
    /// [`STARTUP`].
    pub async fn wait_until_answering(&self, client: &mut IrcClient) {
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            client.privmsg(self.room, "!games").await.expect("send");
            if let Some(m) = client.next_privmsg(Duration::from_secs(1)).await
                && m.from == self.nick
                && m.text.contains("Games:")
            {
                return;
            }
        }
        panic!("the bot never answered in {}; its log:\n{}", self.room, self.daemon.log());
    }

    /// The next PRIVMSG from the bot (room or private) that contains `needle` once its
    /// formatting is stripped, within [`WAIT`].
    pub async fn expect(&self, client: &mut IrcClient, needle: &str) -> Message {
        let bot = self.nick;
        match client.expect_privmsg_matching(|m| m.from == bot && strip(&m.text).contains(needle), WAIT).await
        {
            Ok(message) => message,
            Err(e) => {
                panic!("{} waited for {needle:?}: {e}\ndaemon log:\n{}", client.nick(), self.daemon.log())
            }
        }
    }

    /// The next private PRIVMSG from the bot that contains `needle`, within [`WAIT`].
    pub async fn expect_private(&self, client: &mut IrcClient, needle: &str) -> Message {
        let (bot, nick) = (self.nick, client.nick().to_owned());
        match client
            .expect_privmsg_matching(
                |m| m.from == bot && m.target == nick && strip(&m.text).contains(needle),
                WAIT,
            )
            .await
        {
            Ok(message) => message,
            Err(e) => {
                panic!("{nick} waited for a private {needle:?}: {e}\ndaemon log:\n{}", self.daemon.log())
            }
        }
    }

    /// The next PRIVMSG or NOTICE from the bot that contains `needle`, within [`WAIT`];
    /// a failure lists what came instead.
    pub async fn expect_said(&self, client: &mut IrcClient, needle: &str) -> Message {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        while let Some(m) = client.next_message(deadline.saturating_duration_since(Instant::now())).await {
            if m.from == self.nick && strip(&m.text).contains(needle) {
                return m;
            }
            seen.push(m.to_string());
        }
        panic!(
            "{} waited for {needle:?}; got instead:\n  {}\ndaemon log:\n{}",
            client.nick(),
            seen.join("\n  "),
            self.daemon.log_tail(60)
        );
    }

    /// Everything the bot says to `client` until `quiet` passes with nothing new.
    pub async fn drain(&self, client: &mut IrcClient, quiet: Duration) -> Vec<Message> {
        let mut seen = Vec::new();
        while let Some(m) = client.next_message(quiet).await {
            if m.from == self.nick {
                seen.push(m);
            }
        }
        seen
    }
}
