//! A network's courier: sends that network's outbound messages, game output first.
//!
//! The daemon loop hands each network's courier what it committed, in order. The courier
//! keeps two queues: game output (announcements and answers) and relayed chat. Before
//! each send it takes in everything handed over so far and sends the oldest game message
//! if there is one, else the oldest chat; neither queue is ever reordered within itself.
//! So a long burst of relayed chat holds a game answer back by one send at most. Chat
//! lines queued for one room may go as one message of several lines (`merge_lines` at
//! most: a Matrix homeserver takes far fewer events per second than an IRC channel
//! carries lines; on IRC every line is its own PRIVMSG anyway, so there it is one), and
//! so may the game output of one action to one place (`Message::batch`: a Duel round's
//! steps, settlement and next round are one Matrix message; issue 31). On a
//! network that sends each line as its speaker (a Matrix appservice's ghosts,
//! [`GameTransport::mirrors`]) only one speaker's lines go together, each without its head.
//!
//! Relayed chat waiting for one room is bounded ([`CHAT_PER_ROOM`] lines): a line past
//! it is dropped (counted in `spellbridge_relay_dropped_total{reason="queue_full"}`) and
//! reported as sent, so the loop deletes it from the outbox and a restart does not send
//! it again. A bridge thus never falls minutes behind; game output is never dropped.
//!
//! While the network is down the courier waits and tries again, so a disconnect loses
//! nothing; it reports each sent message's outbox id so the loop can delete it. A board
//! picture (handed over by the board painter, never in the outbox) goes as game output;
//! one the network refuses is counted in `spellbridge_board_failures_total`.
//!
//! Before every send it asks the daemon's [`Tenure`] whether it may still send: a daemon
//! whose lease is lost, or ran out by its own clock (paused, then resumed), sends nothing
//! more and its courier stops (issue 34).
//!
//! What a send brings to light ([`spellbridge_core::Sent`]) is reported too, as
//! [`Learned`]: the network's id of a relayed line (a Matrix event id: replies and
//! reactions to it then name its speaker), and a private chat opened for a player.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use spellbridge_core::{
    Destination, GameTransport, Message, NetworkId, PlayerId, Relayed, Sent, TransportError, Voice,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::leader::Tenure;
use crate::metrics::{BoardStage, Metrics};
use crate::store::Queued;

/// The most characters in one merged message.
const MERGE_CHARS: usize = 4000;

/// What a courier learned by sending, for the daemon loop to hand to the router and store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Learned {
    /// A relayed line went out on `network` as the message `id` (of a merged message, the
    /// first line's speaker stands for it).
    Relayed {
        /// The network.
        network: NetworkId,
        /// Its id for the message.
        id: String,
        /// The line's speaker and words.
        line: Relayed,
    },
    /// `network` opened a private chat with `player`, who had none with the bot.
    OpenedPrivate {
        /// The network.
        network: NetworkId,
        /// Who it was opened with.
        player: PlayerId,
        /// A link to the chat, where the network gives one.
        link: Option<String>,
    },
}

/// What `sent` teaches about `message`, sent to `to` on `network`.
pub fn learned(network: &NetworkId, to: &Destination, message: &Message, sent: Sent) -> Vec<Learned> {
    let mut learned = Vec::new();
    if let (Some(id), Some(line)) = (sent.id, &message.relayed) {
        learned.push(Learned::Relayed { network: network.clone(), id, line: line.clone() });
    }
    if let (true, Destination::Private(player)) = (sent.opened_private, to) {
        learned.push(Learned::OpenedPrivate {
            network: network.clone(),
            player: player.clone(),
            link: sent.private_link,
        });
    }
    learned
}

/// What a courier has been handed and not sent yet: game output and relayed chat, each
/// in the order it came.
#[derive(Debug, Default)]
pub struct Waiting {
    game: VecDeque<Queued>,
    chat: VecDeque<Queued>,
}

/// The most relayed chat lines that wait for one room; more are dropped.
pub const CHAT_PER_ROOM: usize = 50;

impl Waiting {
    /// Takes one more message, behind those of its kind; gives back a chat line dropped
    /// because [`CHAT_PER_ROOM`] lines already wait for its room.
    #[must_use = "a line given back was dropped and must leave the outbox"]
    pub fn push(&mut self, queued: Queued) -> Option<Queued> {
        if !queued.outbound.message.chat {
            self.game.push_back(queued);
            return None;
        }
        let to = &queued.outbound.to;
        if self.chat.iter().filter(|q| q.outbound.to == *to).nth(CHAT_PER_ROOM - 1).is_some() {
            return Some(queued);
        }
        self.chat.push_back(queued);
        None
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.game.is_empty() && self.chat.is_empty()
    }

    /// What to send next: the oldest game message alone; else the oldest chat line with
    /// the said (not acted) chat lines right behind it for the same room and thread (and,
    /// `by_speaker`, the same speaker; but no reply: it starts a message of its own), up to `merge_lines` lines and [`MERGE_CHARS`]
    /// characters. Empty when nothing waits.
    pub fn next(&mut self, merge_lines: usize, by_speaker: bool) -> Vec<Queued> {
        if let Some(game) = self.game.pop_front() {
            return self.with_batch(game, merge_lines);
        }
        let Some(first) = self.chat.pop_front() else { return Vec::new() };
        let mergeable = |m: &Message| m.chat && m.voice == Voice::Say;
        if !mergeable(&first.outbound.message) {
            return vec![first];
        }
        let mut chars = first.outbound.message.text.plain().len();
        let mut batch = vec![first];
        while batch.len() < merge_lines {
            let Some(next) = self.chat.front() else { break };
            let head = &batch[0].outbound;
            let length = next.outbound.message.text.plain().len();
            let fits = mergeable(&next.outbound.message)
                && next.outbound.to == head.to
                && next.outbound.message.thread == head.message.thread
                // A reply starts a message of its own, which it answers as a whole.
                && next.outbound.message.reply_to.is_none()
                && (!by_speaker || same_speaker(&next.outbound.message, &head.message))
                && chars + 1 + length <= MERGE_CHARS;
            if !fits {
                break;
            }
            chars += 1 + length;
            batch.extend(self.chat.pop_front());
        }
        batch
    }
}

impl Waiting {
    /// `first` with the game messages of its batch to the same place that wait behind it
    /// (`Message::batch`: one action's words to one room or player), up to `merge_lines`
    /// lines and [`MERGE_CHARS`] characters; a picture goes alone. Messages to other
    /// places between them wait (each place still hears its messages in order); one to
    /// the same place that is not of the batch ends it.
    fn with_batch(&mut self, first: Queued, merge_lines: usize) -> Vec<Queued> {
        let batched = |m: &Message| m.batch.is_some() && m.picture.is_none() && m.voice == Voice::Say;
        if merge_lines < 2 || !batched(&first.outbound.message) {
            return vec![first];
        }
        let mut chars = first.outbound.message.text.plain().len();
        let mut batch = vec![first];
        let mut at = 0;
        while batch.len() < merge_lines {
            let Some(next) = self.game.get(at) else { break };
            let head = &batch[0].outbound;
            if next.outbound.to != head.to {
                at += 1;
                continue;
            }
            let length = next.outbound.message.text.plain().len();
            let fits = batched(&next.outbound.message)
                && next.outbound.message.batch == head.message.batch
                && next.outbound.message.thread == head.message.thread
                && chars + 1 + length <= MERGE_CHARS;
            if !fits {
                break;
            }
            chars += 1 + length;
            batch.extend(self.game.remove(at));
        }
        batch
    }
}

/// True when two lines were said by the same speaker (or neither has one).
fn same_speaker(one: &Message, other: &Message) -> bool {
    let who = |m: &Message| m.speaker.as_ref().map(|s| (s.network.clone(), s.nick.clone()));
    who(one) == who(other)
}

/// One message saying every line of the batch, in order. `by_speaker` (the batch is one
/// speaker's): the lines without their heads, the speaker's head then empty. A batch of
/// one (every game message) is its message, borrowed.
pub fn merged(batch: &[Queued], by_speaker: bool) -> Cow<'_, Message> {
    let mut lines = batch.iter().map(|q| &q.outbound.message);
    let Some(first) = lines.next() else { return Cow::Owned(Message::default()) };
    if batch.len() == 1 {
        return Cow::Borrowed(first);
    }
    let mut message = first.clone();
    let text = |line: &Message| if by_speaker { line.said() } else { line.text.clone() };
    message.text = text(first);
    for line in lines {
        message.text = std::mem::take(&mut message.text).text("\n").append(text(line));
    }
    if by_speaker && let Some(speaker) = &mut message.speaker {
        speaker.head = 0;
    }
    Cow::Owned(message)
}

/// The key of a batch of outbox rows (`sb-` and their ids), the same on every daemon
/// that sends them; `None` when one of them is not kept in the outbox: a key for only
/// part of what a message says could make the homeserver drop the rest as a repeat.
pub fn delivery(batch: &[Queued]) -> Option<String> {
    if batch.is_empty() || batch.iter().any(|q| q.id < 0) {
        return None;
    }
    let ids: Vec<String> = batch.iter().map(|q| q.id.to_string()).collect();
    Some(format!("sb-{}", ids.join("-")))
}

/// When a courier stops: `stop` cancelled while its network is down (shutdown), or at
/// once, before its next send, when `tenure` no longer holds (the lease is gone).
#[derive(Clone, Debug)]
pub struct Until {
    /// The daemon's transports stop.
    pub stop: CancellationToken,
    /// This daemon's lease, by its own clock.
    pub tenure: Tenure,
}

/// Sends one network's messages (see the module doc) until its queue is closed and empty,
/// or `until` says to stop.
pub async fn run(
    transport: Arc<dyn GameTransport>,
    mut queue: mpsc::UnboundedReceiver<Queued>,
    sent: mpsc::UnboundedSender<i64>,
    learned: mpsc::UnboundedSender<Learned>,
    until: Until,
    metrics: Metrics,
    merge_lines: usize,
) {
    let Until { stop, tenure } = until;
    let by_speaker = transport.mirrors();
    let mut waiting = Waiting::default();
    // A chat line dropped from a full queue is done with: the outbox forgets it.
    let take = |waiting: &mut Waiting, queued: Queued| {
        if let Some(dropped) = waiting.push(queued) {
            metrics.relay_dropped(transport.network().as_str(), "queue_full");
            tracing::debug!(network = %transport.network(), "a relayed line was dropped: the room's chat queue is full");
            if dropped.id >= 0 {
                let _ = sent.send(dropped.id);
            }
        }
    };
    loop {
        while let Ok(more) = queue.try_recv() {
            take(&mut waiting, more);
        }
        let batch = waiting.next(merge_lines, by_speaker);
        if batch.is_empty() {
            match queue.recv().await {
                Some(first) => take(&mut waiting, first),
                None => return,
            }
            continue;
        }
        let to = &batch[0].outbound.to;
        let mut message = merged(&batch, by_speaker);
        message.to_mut().delivery = delivery(&batch);
        let mut wait = Duration::from_millis(100);
        loop {
            // May I still send? Not once the lease is lost or ran out by this machine's
            // clock (a paused daemon resumed): the standby that took over sends it.
            if !tenure.holds() {
                tracing::error!(network = %transport.network(), "this daemon's lease is gone: its courier sends nothing more");
                return;
            }
            match transport.send_noted(to, &message).await {
                Ok(noted) => {
                    for news in self::learned(transport.network(), to, &message, noted) {
                        let _ = learned.send(news);
                    }
                    metrics.message_out(transport.network());
                    tracing::debug!(network = %transport.network(), ?to, lines = batch.len(), "message out");
                    break;
                }
                Err(TransportError::Disconnected { .. }) => {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Err(error) if message.picture.is_some() => {
                    metrics.board_failure(BoardStage::Upload);
                    tracing::warn!(%error, "a board picture was refused by the network; the game goes on");
                    break;
                }
                Err(error) => {
                    tracing::warn!(%error, "a message was refused by the network and is dropped");
                    break;
                }
            }
        }
        for queued in batch.iter().filter(|q| q.id >= 0) {
            let _ = sent.send(queued.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::{Destination, NetworkId, RichText, RoomId};

    use super::*;
    use crate::turn::Outbound;

    /// The most relayed chat lines a Matrix courier sends as one message.
    const MATRIX_MERGE_LINES: usize = spellbridge_adapters::matrix::config::MERGE_LINES;

    fn queued(id: i64, room: &str, text: &str, chat: bool) -> Queued {
        let message = Message { text: RichText::new().text(text), chat, ..Message::default() };
        let to = Destination::Room(RoomId::new(room));
        Queued { id, outbound: Outbound { network: NetworkId::new("matrix"), to, message } }
    }

    fn ids(batch: &[Queued]) -> Vec<i64> {
        batch.iter().map(|q| q.id).collect()
    }

    #[test]
    fn a_batch_of_outbox_rows_is_keyed_by_all_its_ids_and_one_not_kept_leaves_it_unkeyed() {
        let rows = [queued(7, "!a", "<bob> one", true), queued(9, "!a", "<bob> two", true)];
        assert_eq!(super::delivery(&rows[..1]).as_deref(), Some("sb-7"));
        assert_eq!(super::delivery(&rows).as_deref(), Some("sb-7-9"), "another batching, another key");
        let mixed = [queued(7, "!a", "<bob> one", true), queued(-1, "!a", "an answer", false)];
        assert_eq!(super::delivery(&mixed), None, "a key would drop the answer as a repeat of row 7");
        assert_eq!(super::delivery(&[]), None);
    }

    #[test]
    fn queued_chat_lines_for_one_room_go_as_one_message_and_nothing_else_joins_them() {
        let mut waiting = Waiting::default();
        for q in [
            queued(1, "!a", "<bob> one", true),
            queued(2, "!a", "<bob> two", true),
            queued(3, "!a", "<bob> three", true),
            queued(4, "!b", "<bob> elsewhere", true),
            queued(5, "!a", "<bob> four", true),
        ] {
            assert!(waiting.push(q).is_none(), "room");
        }
        let batch = waiting.next(MATRIX_MERGE_LINES, false);
        assert_eq!(ids(&batch), [1, 2, 3]);
        assert_eq!(merged(&batch, false).text.plain(), "<bob> one\n<bob> two\n<bob> three");
        assert_eq!(
            ids(&waiting.next(MATRIX_MERGE_LINES, false)),
            [4],
            "another room's line waits for the next send"
        );
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [5]);
        // An announcement is never merged, nor is anything merged into it.
        assert!(waiting.push(queued(6, "!a", "Duel begins", false)).is_none(), "room");
        assert!(waiting.push(queued(7, "!a", "Round 1 begins", false)).is_none(), "room");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [6]);
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [7]);
        assert!(waiting.next(MATRIX_MERGE_LINES, false).is_empty());
        // On IRC every chat line goes on its own.
        assert!(waiting.push(queued(8, "#a", "<bob> one", true)).is_none(), "room");
        assert!(waiting.push(queued(9, "#a", "<bob> two", true)).is_none(), "room");
        assert_eq!(ids(&waiting.next(1, false)), [8]);
    }

    /// Issue 31: what one action says to a Matrix room is one message; a line to another
    /// place between them waits; another batch, a picture, or IRC (one line per send) is
    /// sent on its own.
    #[test]
    fn one_actions_lines_to_one_place_go_as_one_message() {
        let line = |id: i64, to: &str, text: &str, batch: Option<&str>| {
            let mut queued = queued(id, to, text, false);
            queued.outbound.message.batch = batch.map(str::to_owned);
            queued
        };
        let fill = |waiting: &mut Waiting| {
            for q in [
                line(1, "!a", "Round 1, step 0", Some("0.3")),
                line(2, "@alice", "Queued.", Some("0.3")),
                line(3, "!a", "Round 1 settles.", Some("0.3")),
                line(4, "!a", "Round 2 begins", Some("0.3")),
                line(5, "!a", "Duel: …", Some("0.3answer")),
                line(6, "!a", "not of a table", None),
            ] {
                assert!(waiting.push(q).is_none(), "game output is never dropped");
            }
        };
        let mut waiting = Waiting::default();
        fill(&mut waiting);
        let round = waiting.next(MATRIX_MERGE_LINES, false);
        assert_eq!(ids(&round), [1, 3, 4]);
        assert_eq!(merged(&round, false).text.plain(), "Round 1, step 0\nRound 1 settles.\nRound 2 begins");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [2], "the private line, after");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [5], "another batch");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [6]);
        let mut picture = line(7, "!a", "The board", Some("0.4"));
        picture.outbound.message.picture = Some(spellbridge_core::Picture {
            png: std::sync::Arc::from(&b"png"[..]),
            width: 1,
            height: 1,
            replaces: "table 0".into(),
        });
        assert!(waiting.push(picture).is_none(), "room");
        assert!(waiting.push(line(8, "!a", "Round 2, step 0", Some("0.4"))).is_none(), "room");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [7], "a picture goes alone");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [8]);
        // On IRC every line is its own.
        let mut irc = Waiting::default();
        fill(&mut irc);
        assert_eq!(sent_one_by_one(&mut irc), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn game_output_goes_before_queued_chat_and_neither_is_reordered() {
        let mut waiting = Waiting::default();
        for id in 1..=40 {
            assert!(waiting.push(queued(id, "#magic", &format!("<bob> line {id}"), true)).is_none(), "room");
        }
        assert!(waiting.push(queued(200, "#magic", "alice: Duel: round 1", false)).is_none(), "room");
        assert!(waiting.push(queued(201, "#magic", "Round 1 begins", false)).is_none(), "room");
        assert!(waiting.push(queued(41, "#magic", "<bob> after", true)).is_none(), "room");
        let order = sent_one_by_one(&mut waiting);
        let expected: Vec<i64> = [200, 201].into_iter().chain(1..=41).collect();
        assert_eq!(order, expected);
    }

    /// The outbox ids of everything waiting, in the order it is sent one message at a time.
    fn sent_one_by_one(waiting: &mut Waiting) -> Vec<i64> {
        let mut order = Vec::new();
        loop {
            let batch = waiting.next(1, false);
            if batch.is_empty() {
                return order;
            }
            order.extend(ids(&batch));
        }
    }

    /// Issue 29, item 7: chat past the bound for a room is given back (to be dropped),
    /// another room's chat and game output are taken, and game output still goes first.
    #[test]
    fn chat_past_the_rooms_bound_is_dropped_and_game_output_still_goes_first() {
        let mut waiting = Waiting::default();
        for id in 1..=200 {
            let pushed = waiting.push(queued(id, "#magic", &format!("<flood> line {id}"), true));
            assert_eq!(pushed.is_some(), id > CHAT_PER_ROOM as i64, "line {id}");
        }
        assert!(
            waiting.push(queued(300, "#other", "<bob> hi", true)).is_none(),
            "another room's queue has room"
        );
        for id in 400..=450 {
            assert!(
                waiting.push(queued(id, "#magic", "Round begins", false)).is_none(),
                "game output is never dropped"
            );
        }
        let order = sent_one_by_one(&mut waiting);
        let expected: Vec<i64> = (400..=450).chain(1..=CHAT_PER_ROOM as i64).chain([300]).collect();
        assert_eq!(order, expected);
        // Sent lines make room again.
        assert!(waiting.push(queued(201, "#magic", "<flood> again", true)).is_none());
    }
    #[test]
    fn a_sent_relayed_lines_id_and_an_opened_private_chat_are_learned() {
        let matrix = NetworkId::new("matrix");
        let room = Destination::Room(RoomId::new("!a"));
        let line = Relayed { name: "alice".into(), text: "hi".into() };
        let relayed = Message { relayed: Some(line.clone()), chat: true, ..Message::from("<alice> hi") };
        let with_id = |id: &str| Sent { id: Some(id.into()), ..Sent::default() };
        assert_eq!(
            learned(&matrix, &room, &relayed, with_id("$e")),
            [Learned::Relayed { network: matrix.clone(), id: "$e".into(), line }]
        );
        assert!(learned(&matrix, &room, &relayed, Sent::default()).is_empty(), "no id (IRC)");
        assert!(
            learned(&matrix, &room, &Message::from("Round 1"), with_id("$g")).is_empty(),
            "the bot's own words"
        );
        let alice = PlayerId::new("@alice:hs");
        let private = Destination::Private(alice.clone());
        let link = Some("https://matrix.to/#/!dm".to_owned());
        let opened = Sent { id: Some("$p".into()), opened_private: true, private_link: link.clone() };
        assert_eq!(
            learned(&matrix, &private, &Message::from("Your link code"), opened),
            [Learned::OpenedPrivate { network: matrix, player: alice, link }]
        );
    }
    #[test]
    fn a_reply_is_never_merged_behind_other_lines() {
        let mut waiting = Waiting::default();
        let mut answer = queued(2, "!a", "<alice> bob: me!", true);
        answer.outbound.message.reply_to = Some("$bob".into());
        for q in [queued(1, "!a", "<alice> hi", true), answer, queued(3, "!a", "<alice> and you?", true)] {
            assert!(waiting.push(q).is_none(), "room");
        }
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, false)), [1]);
        let batch = waiting.next(MATRIX_MERGE_LINES, false);
        assert_eq!(ids(&batch), [2, 3], "lines may follow a reply");
        assert_eq!(merged(&batch, false).reply_to.as_deref(), Some("$bob"));
    }

    #[test]
    fn where_lines_go_as_their_speakers_only_one_speakers_lines_go_together() {
        use spellbridge_core::Speaker;
        let said_by = |id: i64, nick: &str, text: &str| {
            let mut q = queued(id, "!a", &format!("<{nick}> {text}"), true);
            let head = nick.len() + 3;
            q.outbound.message.speaker = Some(Speaker {
                network: NetworkId::new("irc"),
                nick: nick.into(),
                head,
                guest: false,
                network_named: false,
            });
            q
        };
        let mut waiting = Waiting::default();
        for q in [
            said_by(1, "bob", "one"),
            said_by(2, "bob", "two"),
            said_by(3, "alice", "hi"),
            said_by(4, "bob", "three"),
        ] {
            assert!(waiting.push(q).is_none(), "room");
        }
        let batch = waiting.next(MATRIX_MERGE_LINES, true);
        assert_eq!(ids(&batch), [1, 2]);
        let message = merged(&batch, true);
        assert_eq!(message.said().plain(), "one\ntwo", "said by bob, without the heads");
        assert_eq!(ids(&waiting.next(MATRIX_MERGE_LINES, true)), [3]);
        assert_eq!(merged(&[said_by(4, "bob", "alone")], true).said().plain(), "alone");
        // Bot mode merges them all, heads and all, as before.
        let mut waiting = Waiting::default();
        assert!(waiting.push(said_by(1, "bob", "one")).is_none(), "room");
        assert!(waiting.push(said_by(2, "alice", "hi")).is_none(), "room");
        let batch = waiting.next(MATRIX_MERGE_LINES, false);
        assert_eq!(merged(&batch, false).text.plain(), "<bob> one\n<alice> hi");
    }
}
