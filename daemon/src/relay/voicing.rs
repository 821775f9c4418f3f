//! A relayed message written as lines in its speaker's voice: said (`<alice> hello`) or
//! acted (`alice waves`), each line at most the bridge's cap, and a message or emote
//! naming its [`Speaker`] for a network that shows the speaker as themselves (issue 17).

use spellbridge_core::{Inbound, Language, Message, RichText, Said, Speaker, Voice};

use super::{lines, speaker};

/// How the lines of one relayed message are written.
pub(super) struct Voicing<'a> {
    /// What was said.
    pub inbound: &'a Inbound,
    /// The speaker's name as relayed.
    pub name: &'a str,
    /// What the name adds after it.
    pub marks: speaker::Marks,
    /// The most lines the message becomes.
    pub cap: usize,
    /// The language of the room it goes to.
    pub language: Language,
}

impl Voicing<'_> {
    /// `<name> body`.
    pub fn said(&self, body: RichText) -> Vec<Message> {
        self.lines(format!("<{}> ", self.name), body, Voice::Say)
    }

    /// `name body`.
    pub fn acted(&self, body: RichText) -> Vec<Message> {
        self.lines(format!("{} ", self.name), body, Voice::Act)
    }

    fn lines(&self, head: String, body: RichText, voice: Voice) -> Vec<Message> {
        let lines = lines::lines_in(&head, &body, self.cap, self.language).into_iter();
        let speaker = self.speaker(&head);
        lines
            .map(|text| Message { text, voice, chat: true, speaker: speaker.clone(), ..Message::default() })
            .collect()
    }

    /// The speaker of a message or emote (not of an edit, reaction or deletion).
    fn speaker(&self, head: &str) -> Option<Speaker> {
        matches!(self.inbound.said, Said::Message | Said::Emote).then(|| Speaker {
            network: self.inbound.network.clone(),
            nick: self.inbound.display_name.clone(),
            head: head.len(),
            guest: self.marks.guest,
            network_named: self.marks.network,
        })
    }
}
