//! Where what the router says goes: a table's announcements to every room of its
//! bridge, a player's to their home network, answers to where they were asked; each
//! shown as its network can show it (mentions and names localized), in the form its
//! transport asks for (a game's compact form on IRC, its full form elsewhere).

use super::*;
use crate::identity::local_part;

impl Router {
    /// Turns a table's announcements into outbound messages: the table's to every room of
    /// its bridge (or its one room), a player's to where their private messages go.
    pub(super) fn deliver(&self, id: TableId, announcements: Vec<Announcement>) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        let mut out = Vec::with_capacity(announcements.len());
        for announcement in announcements {
            let form = announcement.form;
            let outbound = match announcement.to {
                Audience::Table => self.to_rooms(&place, announcement.text),
                Audience::Player(player) => vec![self.to_player(&place, &player, announcement.text)],
            };
            out.extend(outbound.into_iter().filter(|o| self.is_sent(&o.network, form)));
        }
        out
    }

    /// True when an announcement for `form` (`None`: every form) goes to `network`.
    fn is_sent(&self, network: &NetworkId, form: Option<Form>) -> bool {
        form.is_none_or(|form| self.options.forms.get(network).copied().unwrap_or_default() == form)
    }

    /// Turns the answer to a question (`!status`) into outbound messages: what the table
    /// would say to everyone goes only to where it was asked.
    pub(super) fn deliver_reply(
        &self,
        id: TableId,
        announcements: Vec<Announcement>,
        reply_to: &ReplyTo,
    ) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        announcements
            .into_iter()
            .filter_map(|announcement| match announcement.to {
                Audience::Table if !self.is_sent(&reply_to.network, announcement.form) => None,
                Audience::Table => Some(Outbound {
                    network: reply_to.network.clone(),
                    to: reply_to.destination.clone(),
                    message: Message {
                        text: self.localize(&reply_to.network, announcement.text),
                        thread: reply_to.thread.clone(),
                        ..Message::default()
                    },
                }),
                Audience::Player(player) => Some(self.to_player(&place, &player, announcement.text))
                    .filter(|o| self.is_sent(&o.network, announcement.form)),
            })
            .collect()
    }

    /// A message to every room of the bridge `place` is in (or to `place` alone).
    pub(super) fn to_rooms(&self, place: &Place, text: RichText) -> Vec<Outbound> {
        self.relay
            .rooms(place)
            .into_iter()
            .map(|room| Outbound {
                to: Destination::Room(room.room),
                message: self.localize(&room.network, text.clone()).into(),
                network: room.network,
            })
            .collect()
    }

    /// A private message to a player, on the network and identity they last used (else
    /// as the table's network knows them).
    pub(super) fn to_player(&self, place: &Place, player: &PlayerId, text: RichText) -> Outbound {
        let (network, identity) = self
            .directory
            .home(player)
            .cloned()
            .or_else(|| self.directory.identities(player).into_iter().next())
            .unwrap_or_else(|| (place.network.clone(), PlayerId::new(local_part(player))));
        Outbound {
            message: self.localize(&network, text).into(),
            to: Destination::Private(identity),
            network,
        }
    }

    /// Shows each mentioned player as `network` can: a mention of their identity there,
    /// or, when they have none there, their name in bold; a name someone else is also
    /// known by is shown as the player id (`oftc:dave`), so two networks' `dave` at one
    /// bridged table can be told apart.
    pub(super) fn localize(&self, network: &NetworkId, text: RichText) -> RichText {
        let needs_work = text.segments().iter().any(|segment| match segment {
            Segment::Mention(player) | Segment::Name(player) => {
                self.directory.identity_on(player, network).as_ref() != Some(player)
            }
            Segment::Text { text, .. } => text.contains(':'),
            _ => false,
        });
        if !needs_work {
            return text;
        }
        text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
            Segment::Mention(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.mention(&identity),
                None => out.bold(self.shown_elsewhere(&player)),
            },
            Segment::Name(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.name(&identity),
                None => out.bold(self.shown_elsewhere(&player)),
            },
            Segment::Text { text, style } => {
                let text = self.localize_ids(network, &text).unwrap_or(text);
                out.push(Segment::Text { text, style })
            }
            other => out.push(other),
        })
    }

    /// A game's plain text with each player id in it (`libera:dave`, written by a game
    /// into a sentence) shown as the player is shown on `network`; `None` when there is
    /// none.
    fn localize_ids(&self, network: &NetworkId, text: &str) -> Option<String> {
        let in_id = |c: char| c.is_alphanumeric() || "[]\\`_^{|}-:".contains(c);
        let mut out = String::with_capacity(text.len());
        let mut changed = false;
        let mut rest = text;
        while let Some(start) = rest.find(in_id) {
            out.push_str(&rest[..start]);
            let word = &rest[start..];
            let end = word.find(|c: char| !in_id(c)).unwrap_or(word.len());
            let (word, after) = word.split_at(end);
            let id = word.trim_end_matches(':');
            if self.directory.is_scoped_id(id) {
                let player = PlayerId::new(id);
                match self.directory.identity_on(&player, network) {
                    Some(identity) => out.push_str(identity.as_str()),
                    None => out.push_str(&self.shown_elsewhere(&player)),
                }
                out.push_str(&word[id.len()..]);
                changed = true;
            } else {
                out.push_str(word);
            }
            rest = after;
        }
        out.push_str(rest);
        changed.then_some(out)
    }

    /// How a player is written on a network where they have no identity: their name,
    /// unless someone else answers to it too; then their player id.
    fn shown_elsewhere(&self, player: &PlayerId) -> String {
        let name = self.directory.display_name(player);
        let shown = if self.directory.name_is_shared(player, &name) { player.as_str() } else { &name };
        crate::names::escaped(shown)
    }
}

/// A reply to the sender: in a room it names them first, as chat bots do; in the thread
/// they wrote in, if any.
pub(super) fn reply(reply_to: &ReplyTo, text: RichText) -> Outbound {
    let text = match reply_to.destination {
        Destination::Room(_) => RichText::new().mention(&reply_to.addressee).text(": ").append(text),
        Destination::Private(_) => text,
    };
    Outbound {
        network: reply_to.network.clone(),
        to: reply_to.destination.clone(),
        message: Message { text, thread: reply_to.thread.clone(), ..Message::default() },
    }
}
