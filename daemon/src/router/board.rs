//! Board pictures, as far as the router goes: it notes which tables' pictures are to be
//! posted (after a Duel round or a Thaum phase, as the table's events say:
//! [`crate::board::post::redraws`], and on `!board`) and answers `!board`. It draws
//! nothing: the caller takes the noted tables ([`Router::take_boards`]) once their moves
//! are committed and has them drawn off its loop ([`crate::board::post::Painter`]).
//! Only the rooms of networks that show pictures ([`RouterConfig::pictures`]) get them;
//! `!board` elsewhere links to the table's page on the spectator site
//! (`[http] public_url`), or says where pictures are shown.

use super::*;

impl Router {
    /// Takes the tables whose picture is to be posted, each once, oldest first.
    pub fn take_boards(&mut self) -> Vec<TableId> {
        self.tables.take_boards()
    }

    /// The rooms a table's picture goes to: those of its bridge (or its one room) on a
    /// network that shows pictures.
    pub fn picture_rooms(&self, id: TableId) -> Vec<Place> {
        let Some(seating) = self.tables.get(&id) else { return Vec::new() };
        let pictures = &self.options.pictures;
        self.relay.rooms(&seating.place).into_iter().filter(|room| pictures.contains(&room.network)).collect()
    }

    /// How each player of table `id` is named in its picture: their one name
    /// ([`Router::shown_name`]; never a raw Matrix id where a name will do).
    pub fn picture_names(&self, id: TableId) -> Vec<(PlayerId, String)> {
        self.tables.players(id).iter().map(|player| (player.clone(), self.shown_name(player))).collect()
    }

    /// Notes table `id`'s picture to be posted when one of its rooms shows pictures;
    /// true when noted.
    fn post_board(&mut self, id: TableId) -> bool {
        if self.picture_rooms(id).is_empty() {
            return false;
        }
        self.tables.post_board(id);
        true
    }

    /// After a table's action or timer: a new picture when its events end a round or a
    /// phase.
    pub(super) fn board_after(&mut self, id: TableId, events: &[Event]) {
        if !self.options.pictures.is_empty() && crate::board::post::redraws(&self.registry, events) {
            self.post_board(id);
        }
    }

    /// `!board`: posts the picture of this room's table (the one playing, else the last
    /// one) in its rooms that show pictures; asked where pictures are not shown, links to
    /// the table's page, or says where to see it.
    pub(super) fn board(&mut self, place: &Place, reply_to: &ReplyTo) -> Vec<Outbound> {
        let Some(id) = self.active_at(place).or_else(|| self.finished_at(place)) else {
            let ways = self.ways_to_start(false, reply_to.language);
            let text = said::said(reply_to.language, "lobby-no-game", Args::new().rich("ways", ways));
            return vec![reply(reply_to, text)];
        };
        let posted = self.post_board(id);
        let shown_here = matches!(reply_to.destination, Destination::Room(_))
            && self.options.pictures.contains(&reply_to.network);
        if posted && shown_here {
            // The picture is the answer.
            return Vec::new();
        }
        let language = reply_to.language;
        let text = match &self.options.public_url {
            Some(url) => {
                // The page in the asker's language (`?lang=zh-CN`; English has none).
                let query = match language {
                    Language::En => "",
                    Language::ZhCn => "?lang=zh-CN",
                };
                let link = format!("{url}/tables/{id}{query}");
                said::said(language, "board-where", Args::new().text("link", link))
            }
            None => said::said(language, "board-where-not", Args::new()),
        };
        vec![reply(reply_to, text)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    /// The bridged test router (IRC `#magic`, Matrix `!m`), Matrix showing pictures.
    fn router(public_url: Option<&str>) -> Router {
        let rooms =
            [(NetworkId::new("irc"), RoomId::new("#magic")), (NetworkId::new("matrix"), RoomId::new("!m"))];
        let options = RouterConfig {
            bridges: vec![crate::relay::bridge("magic", &rooms, true)],
            pictures: [NetworkId::new("matrix")].into(),
            public_url: public_url.map(str::to_owned),
            ..RouterConfig::default()
        };
        Router::new(Registry::standard(), options)
    }

    fn irc(nick: &str, text: &str) -> Inbound {
        Inbound::new(NetworkId::new("irc"), RoomId::new("#magic"), PlayerId::new(nick), text)
    }

    fn matrix(text: &str) -> Inbound {
        Inbound::new(NetworkId::new("matrix"), RoomId::new("!m"), PlayerId::new("@bob:hs"), text)
    }

    fn texts(out: &[Outbound]) -> Vec<String> {
        out.iter().map(|o| format!("{} {}", o.network, o.message.text.plain())).collect()
    }

    #[test]
    fn a_thaum_phase_end_and_board_post_the_picture_and_irc_gets_the_link() {
        let mut router = router(Some("https://games.example.org"));
        router.handle(&irc("alice", "!new thaum"), T);
        assert!(router.take_boards().is_empty(), "opening a table posts no picture");
        router.handle(&irc("alice", "!gather 1 fire"), T);
        assert!(router.take_boards().is_empty(), "a spell within a phase posts none");
        router.handle(&irc("alice", "!phase next"), T);
        assert_eq!(router.take_boards(), [0], "the phase ended");
        assert_eq!(
            router.picture_rooms(0),
            [Place { network: NetworkId::new("matrix"), room: RoomId::new("!m") }]
        );

        // On Matrix the picture is the answer; on IRC the link, and Matrix's rooms get it.
        assert!(router.handle(&matrix("!board"), T).is_empty());
        assert_eq!(router.take_boards(), [0]);
        let out = texts(&router.handle(&irc("alice", "!board"), T));
        assert_eq!(out, ["irc alice: The board of this room's table: https://games.example.org/tables/0"]);
        assert_eq!(router.take_boards(), [0]);
    }

    #[test]
    fn without_a_site_or_a_table_board_says_what_to_do() {
        let mut router = router(None);
        let none = texts(&router.handle(&irc("alice", "!board"), T));
        assert!(none[0].contains("There is no game in this room yet. Start one with"), "{none:?}");
        router.handle(&irc("alice", "!new thaum"), T);
        let out = texts(&router.handle(&irc("alice", "!board"), T));
        assert!(out[0].contains("Board pictures are shown in the table's Matrix rooms"), "{out:?}");
    }

    #[test]
    fn no_network_showing_pictures_notes_nothing() {
        let mut router = Router::new(Registry::standard(), RouterConfig::default());
        let console = |text: &str| {
            Inbound::new(NetworkId::new("console"), RoomId::new("#c"), PlayerId::new("alice"), text)
        };
        router.handle(&console("!new thaum"), T);
        router.handle(&console("!phase next"), T);
        router.handle(&console("!board"), T);
        assert!(router.take_boards().is_empty());
    }
}
