//! The people in the failover tests: an IRC user ([`Irc`]) and a Matrix user ([`Mx`]),
//! each keeping every message received in order, so a test can wait for one line and
//! later count every line (nothing lost, nothing doubled).

use std::time::Duration;

use spellbridge_adapters::irc::format::strip;
use spellbridge_tests::harness::irc_client::{IrcClient, Message as IrcMessage};
use spellbridge_tests::harness::matrix_client::{MatrixClient, Message as MxMessage};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::time::Instant;

use super::support::{BOT, matrix_id, password};

/// How long one expected message may take (a takeover included).
const WAIT: Duration = Duration::from_secs(30);
/// How long a daemon may take to answer on a network after it starts or takes over.
pub(super) const STARTUP: Duration = Duration::from_secs(60);
/// How long "nothing more arrives" is watched for.
const QUIET: Duration = Duration::from_secs(2);

/// A person on IRC, in some channels, with every message received kept in order.
pub(super) struct Irc {
    pub(super) client: IrcClient,
    pub(super) seen: Vec<IrcMessage>,
    pub(super) taken: Vec<bool>,
}

impl Irc {
    pub(super) async fn connect(port: u16, nick: &str, channels: &[&str]) -> Irc {
        let mut client =
            IrcClient::connect(port, nick).await.unwrap_or_else(|e| panic!("{nick} connects: {e}"));
        for channel in channels {
            client.join(channel).await.unwrap_or_else(|e| panic!("{nick} joins {channel}: {e}"));
        }
        Irc { client, seen: Vec::new(), taken: Vec::new() }
    }

    pub(super) async fn say(&mut self, target: &str, text: &str) {
        let nick = self.client.nick().to_owned();
        self.client.privmsg(target, text).await.unwrap_or_else(|e| panic!("{nick} says {text:?}: {e}"));
    }

    /// The next message not taken yet from a bot nick (`spellbridge…`) to `target`
    /// containing `needle`, within [`WAIT`].
    pub(super) async fn expect(&mut self, target: &str, needle: &str) -> IrcMessage {
        let deadline = Instant::now() + WAIT;
        loop {
            let found = (0..self.seen.len()).find(|&i| {
                let m = &self.seen[i];
                !self.taken[i]
                    && m.from.starts_with(BOT)
                    && m.target == target
                    && strip(&m.text).contains(needle)
            });
            if let Some(i) = found {
                self.taken[i] = true;
                return self.seen[i].clone();
            }
            match self.client.next_message(deadline.saturating_duration_since(Instant::now())).await {
                Some(m) => {
                    self.seen.push(m);
                    self.taken.push(false);
                }
                None => panic!(
                    "{} waited {WAIT:?} for {needle:?} to {target}; the last lines:\n{}",
                    self.client.nick(),
                    self.listing(30)
                ),
            }
        }
    }

    pub(super) async fn pump(&mut self) {
        while let Some(m) = self.client.next_message(QUIET).await {
            self.seen.push(m);
            self.taken.push(false);
        }
    }

    pub(super) async fn settle(&mut self) {
        self.pump().await;
        self.seen.clear();
        self.taken.clear();
    }

    /// How many lines from a bot nick to `target` contain `needle`.
    pub(super) fn count(&self, target: &str, needle: &str) -> usize {
        self.seen
            .iter()
            .filter(|m| m.from.starts_with(BOT) && m.target == target && strip(&m.text).contains(needle))
            .count()
    }

    pub(super) fn listing(&self, last: usize) -> String {
        let lines: Vec<String> =
            self.seen.iter().map(|m| format!("{} → {}: {}", m.from, m.target, strip(&m.text))).collect();
        lines[lines.len().saturating_sub(last)..].join("\n")
    }
}

/// A person on Matrix, with every message received kept in order.
pub(super) struct Mx {
    pub(super) client: MatrixClient,
    pub(super) seen: Vec<MxMessage>,
    pub(super) taken: Vec<bool>,
}

impl Mx {
    pub(super) async fn new(synapse: &Synapse, localpart: &str, name: &str) -> Mx {
        let (user_id, token) = synapse
            .register(localpart, &password(localpart), false)
            .unwrap_or_else(|e| panic!("registering {localpart}: {e}"));
        let mut client = MatrixClient::from_token(&synapse.base_url(), &user_id, &token)
            .unwrap_or_else(|e| panic!("{localpart}'s client: {e}"));
        client.set_display_name(name).await.unwrap_or_else(|e| panic!("{e}"));
        Mx { client, seen: Vec::new(), taken: Vec::new() }
    }

    pub(super) async fn say(&mut self, room: &str, text: &str) {
        self.client
            .send_text(room, text)
            .await
            .unwrap_or_else(|e| panic!("{} says {text:?}: {e}", self.client.user_id()));
    }

    /// The next message not taken yet from the bot in `room` containing `needle`.
    pub(super) async fn expect(&mut self, room: &str, needle: &str) -> MxMessage {
        let bot = matrix_id(BOT);
        let deadline = Instant::now() + WAIT;
        loop {
            let found = (0..self.seen.len()).find(|&i| {
                let m = &self.seen[i];
                !self.taken[i] && m.sender == bot && m.room_id == room && shown(m).contains(needle)
            });
            if let Some(i) = found {
                self.taken[i] = true;
                return self.seen[i].clone();
            }
            match self.client.next_message(deadline.saturating_duration_since(Instant::now())).await {
                Some(m) => {
                    self.seen.push(m);
                    self.taken.push(false);
                }
                None => panic!(
                    "{} waited {WAIT:?} for {needle:?} in {room}; the last messages:\n{}",
                    self.client.user_id(),
                    self.seen
                        .iter()
                        .rev()
                        .take(30)
                        .map(|m| format!("{}: {}", m.sender, shown(m)))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    }

    pub(super) async fn pump(&mut self) {
        while let Some(m) = self.client.next_message(QUIET).await {
            self.seen.push(m);
            self.taken.push(false);
        }
    }

    pub(super) async fn settle(&mut self) {
        self.client.catch_up().await.unwrap_or_else(|e| panic!("{e}"));
        self.seen.clear();
        self.taken.clear();
    }

    /// Says `!games` in `room` until the bot answers there.
    pub(super) async fn until_bot_in(&mut self, room: &str) {
        let bot = matrix_id(BOT);
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            self.say(room, "!games").await;
            let until = Instant::now() + Duration::from_secs(3);
            while let Some(m) =
                self.client.next_message(until.saturating_duration_since(Instant::now())).await
            {
                if m.sender == bot && m.room_id == room && m.body.contains("Games:") {
                    return;
                }
            }
        }
        panic!("the bot never answered {} in {room} within {STARTUP:?}", self.client.user_id());
    }

    /// How many lines of the bot's messages in `room`, as a client shows them (an edit's
    /// new body in place of the message it edits), contain `needle`.
    pub(super) fn count(&self, room: &str, needle: &str) -> usize {
        let bot = matrix_id(BOT);
        let mut shown_lines: Vec<(&str, String)> = Vec::new();
        for m in self.seen.iter().filter(|m| m.room_id == room && m.sender == bot) {
            let edited = m.replaces.as_deref().and_then(|id| shown_lines.iter_mut().find(|(e, _)| *e == id));
            match (edited, &m.new_body) {
                (Some(original), Some(body)) => original.1 = body.clone(),
                _ => shown_lines.push((&m.event_id, m.body.clone())),
            }
        }
        shown_lines.iter().flat_map(|(_, body)| body.lines()).filter(|l| l.contains(needle)).count()
    }
}

/// A message's text as a client shows it (an edit's new body).
fn shown(m: &MxMessage) -> &str {
    m.new_body.as_deref().unwrap_or(&m.body)
}
