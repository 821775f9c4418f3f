//! Where what the router says goes: a table's announcements to every room of its
//! bridge, a player's to their home network, answers to where they were asked; each
//! shown as its network can show it (mentions and names localized).

use super::*;

impl Router {
    /// Turns a table's announcements into outbound messages: the table's to every room of
    /// its bridge (or its one room), a player's to where their private messages go.
    pub(super) fn deliver(&self, id: TableId, announcements: Vec<Announcement>) -> Vec<Outbound> {
        let Some(place) = self.tables.get(&id).map(|s| s.place.clone()) else { return Vec::new() };
        let mut out = Vec::with_capacity(announcements.len());
        for announcement in announcements {
            match announcement.to {
                Audience::Table => out.extend(self.to_rooms(&place, announcement.text)),
                Audience::Player(player) => out.push(self.to_player(&place, &player, announcement.text)),
            }
        }
        out
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
            .map(|announcement| match announcement.to {
                Audience::Table => Outbound {
                    network: reply_to.network.clone(),
                    to: reply_to.destination.clone(),
                    message: Message {
                        text: self.localize(&reply_to.network, announcement.text),
                        thread: reply_to.thread.clone(),
                        ..Message::default()
                    },
                },
                Audience::Player(player) => self.to_player(&place, &player, announcement.text),
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
        let (network, identity) =
            self.directory.home(player).cloned().unwrap_or_else(|| (place.network.clone(), player.clone()));
        Outbound {
            message: self.localize(&network, text).into(),
            to: Destination::Private(identity),
            network,
        }
    }

    /// Shows each mentioned player as `network` can: a mention of their identity there,
    /// or, when they only have identities elsewhere, their name in bold.
    pub(super) fn localize(&self, network: &NetworkId, text: RichText) -> RichText {
        let needs_work = text.segments().iter().any(|segment| match segment {
            Segment::Mention(player) | Segment::Name(player) => {
                self.directory.identity_on(player, network).as_ref() != Some(player)
            }
            _ => false,
        });
        if !needs_work {
            return text;
        }
        text.into_segments().into_iter().fold(RichText::new(), |out, segment| match segment {
            Segment::Mention(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.mention(&identity),
                None if self.directory.identities(&player).is_empty() => out.mention(&player),
                None => out.bold(self.directory.display_name(&player)),
            },
            Segment::Name(player) => match self.directory.identity_on(&player, network) {
                Some(identity) => out.name(&identity),
                None if self.directory.identities(&player).is_empty() => out.name(&player),
                None => out.bold(self.directory.display_name(&player)),
            },
            other => out.push(other),
        })
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
