//! `!link`, `!link <code>` and `!unlink`: joining a person's identities on two networks
//! into one player (see [`crate::identity`]).

use super::*;

impl Router {
    /// `!link`: a one-time code, sent privately, to say from the other network.
    pub(super) fn give_link_code(
        &mut self,
        speaker: &Speaker<'_>,
        reply_to: &ReplyTo,
        now: Timestamp,
    ) -> Vec<Outbound> {
        let inbound = speaker.inbound;
        let code = self.directory.new_code(&speaker.player, &inbound.network, &mut self.secrets, now);
        let prefix = &self.options.prefix;
        let secret = Outbound {
            network: inbound.network.clone(),
            to: Destination::Private(inbound.sender.clone()),
            message: RichText::new()
                .text("Your link code is ")
                .code(code.clone())
                .text(". From your identity on the other network, send me privately ")
                .code(format!("{prefix}link {code}"))
                .text(" within ten minutes; then you play as one player from both networks.")
                .into(),
        };
        if inbound.private {
            vec![secret]
        } else {
            vec![secret, reply(reply_to, RichText::from("I sent you a link code privately."))]
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
        let say = |text: RichText| vec![reply(reply_to, text)];
        if !inbound.private {
            // Anyone in the room could use the code now: it is void.
            self.directory.void(code);
            return say(RichText::from(
                "Send link codes to me privately: anyone here could have used that one, so it no longer \
                 works. Type `!link` on your other network for a new code.",
            ));
        }
        let identity = &inbound.sender;
        if self.active_tables().any(|id| self.tables[&id].table.players().contains(identity)) {
            return say(RichText::from(
                "You are playing at a table as this identity; link once its game is over (or link \
                 first, then sit down).",
            ));
        }
        match self.directory.redeem(code, &inbound.network, identity, now) {
            Err(error) => say(RichText::from(format!("That did not link: {error}"))),
            Ok(player) => {
                self.directory.link(&inbound.network, identity, &player);
                self.log(Entry::Linked {
                    network: inbound.network.clone(),
                    identity: identity.clone(),
                    player: player.clone(),
                });
                self.directory.set_home(&player, &inbound.network, identity, &inbound.display_name);
                self.log(Entry::Home {
                    player: player.clone(),
                    network: inbound.network.clone(),
                    identity: identity.clone(),
                    name: Some(inbound.display_name.clone()),
                });
                let name = self.directory.display_name(&player);
                say(RichText::new()
                    .text(format!("Linked: here you now play as {name}, the same player as on "))
                    .text(format!("the other network. Type `{}unlink` to undo it.", self.options.prefix)))
            }
        }
    }

    /// `!unlink`: separates every identity joined to the sender's player.
    pub(super) fn unlink(&mut self, speaker: &Speaker<'_>, reply_to: &ReplyTo) -> Vec<Outbound> {
        let separated = self.directory.unlink(&speaker.player);
        if separated.is_empty() {
            return vec![reply(
                reply_to,
                RichText::from("You have no linked identities; `!link` links one."),
            )];
        }
        self.log(Entry::Unlinked { player: speaker.player.clone() });
        let list: Vec<String> =
            separated.iter().map(|(network, identity)| format!("{identity} on {network}")).collect();
        vec![reply(reply_to, RichText::from(format!("Unlinked {}.", list.join(", "))))]
    }
}
