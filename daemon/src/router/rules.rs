//! `!rules`: the rule ids of this room's game (the game of its table; with none, every
//! game's), and `!rules D-10`: what one rule says, in the room's language. The rules are
//! the games' own ([`GamePlugin::rules`](spellbridge_core::GamePlugin::rules)); the router
//! only finds the game and words the answer. With `[http] public_url` set, the answer
//! points to the site's rules page (`/rules/<game>`, one anchor per id).

use spellbridge_core::GamePlugin;
use spellbridge_core::locale::Args;
use spellbridge_core::text::Style;

use super::said::{joined, said};
use super::*;

/// The most characters of an unknown id said back (a refusal never repeats a whole
/// message).
const ECHOED: usize = 16;

impl Router {
    /// The answer to `!rules [id]` asked at `place`.
    pub(super) fn rules(&self, place: &Place, typed: Option<&str>, language: Language) -> RichText {
        let Some(typed) = typed else { return self.rule_ids(place, language) };
        match self.registry.rule(typed) {
            Some((game, id)) => {
                let text = game.rule_in(id, language).unwrap_or_default();
                let shown = match &self.options.public_url {
                    Some(url) => RichText::new()
                        .link(id, format!("{}/rules/{}#{id}", url.trim_end_matches('/'), game.name())),
                    None => RichText::new().text(id),
                };
                let args = Args::new()
                    .rich("id", shown)
                    .text("game", game.name_in(language))
                    .rich("text", RichText::from(text));
                said(language, "lobby-rules-rule", args)
            }
            None => {
                let mut echoed: String = typed.chars().take(ECHOED).collect();
                if typed.chars().count() > ECHOED {
                    echoed.push('…');
                }
                let games = self.registry.iter().filter(|g| !g.rules().is_empty()).collect();
                let args = Args::new()
                    .text("typed", echoed)
                    .rich("games", self.spans(games, language))
                    .text("example", self.example_rule(None));
                said(language, "lobby-rules-unknown", args)
            }
        }
    }

    /// Every rule id of the table's game at `place`; with no table, each game's first and
    /// last.
    fn rule_ids(&self, place: &Place, language: Language) -> RichText {
        let game = self
            .active_at(place)
            .or_else(|| self.finished_at(place))
            .and_then(|id| self.game_of(&self.tables[&id]))
            .filter(|game| !game.rules().is_empty());
        match game {
            Some(game) => {
                let args = Args::new()
                    .text("game", capitalised(&game.name_in(language)))
                    .text("ids", game.rules().join(" "))
                    .text("example", self.example_rule(Some(game)))
                    .rich("site", self.rules_site(Some(game), language));
                said(language, "lobby-rules-game", args)
            }
            None => {
                let games = self.registry.iter().filter(|g| !g.rules().is_empty()).collect();
                let args = Args::new()
                    .rich("games", self.spans(games, language))
                    .text("example", self.example_rule(None))
                    .rich("site", self.rules_site(None, language));
                said(language, "lobby-rules-games", args)
            }
        }
    }

    /// `games`' ids, each game's first … last: "thaum T-1 … T-10; duel D-1 … D-13".
    fn spans(&self, games: Vec<&dyn GamePlugin>, language: Language) -> RichText {
        let spans = games
            .into_iter()
            .map(|game| {
                let rules = game.rules();
                let ids = match (rules.first(), rules.last()) {
                    (Some(first), Some(last)) if first != last => said(
                        language,
                        "lobby-rules-span",
                        Args::new().text("first", *first).text("last", *last),
                    ),
                    _ => RichText::new().text(rules.join(" ")),
                };
                said(
                    language,
                    "lobby-rules-of",
                    Args::new().text("game", game.name_in(language)).rich("ids", ids),
                )
            })
            .collect();
        joined(language, "lobby-games-separator", spans)
    }

    /// A rule to try: the game's tenth (the Duel's `D-10`, the seals) or else its first;
    /// with no game named, the last game's.
    fn example_rule(&self, game: Option<&dyn GamePlugin>) -> String {
        let game = game.or_else(|| self.registry.iter().filter(|g| !g.rules().is_empty()).last());
        let rules = game.map(|g| g.rules()).unwrap_or_default();
        rules.get(9).or(rules.first()).copied().unwrap_or_default().to_owned()
    }

    /// " All of them: <url>/rules/<game>" when the site's address is known.
    fn rules_site(&self, game: Option<&dyn GamePlugin>, language: Language) -> RichText {
        let Some(url) = &self.options.public_url else { return RichText::new() };
        let path = game.map_or_else(|| "/rules".to_owned(), |g| format!("/rules/{}", g.name()));
        let query = match language {
            Language::En => "",
            Language::ZhCn => "?lang=zh-CN",
        };
        said(
            language,
            "lobby-rules-site",
            Args::new().text("url", format!("{}{path}{query}", url.trim_end_matches('/'))),
        )
    }
}

impl Router {
    /// `text` with each rule it cites (`RULES D-10`) a link to the rule's entry on the
    /// site, when the site's address is known (Matrix shows links; IRC the words alone).
    pub(super) fn rules_linked(&self, text: RichText) -> RichText {
        let Some(url) = &self.options.public_url else { return text };
        let cites = |segment: &Segment| matches!(segment, Segment::Text { text, style: Style::Plain } if self.registry.cited_rule(text).is_some());
        if !text.segments().iter().any(cites) {
            return text;
        }
        let url = url.trim_end_matches('/');
        text.into_segments().into_iter().fold(RichText::new(), |mut out, segment| match segment {
            Segment::Text { text, style: Style::Plain } => {
                let mut rest = text.as_str();
                while let Some((start, end, game)) = self.registry.cited_rule(rest) {
                    let id = &rest[start..end];
                    out = out.text(&rest[..start]).link(id, format!("{url}/rules/{game}#{id}"));
                    rest = &rest[end..];
                }
                out.text(rest)
            }
            other => out.push(other),
        })
    }
}

/// `duel` → `Duel` (a name in Chinese stays as it is).
fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timestamp = Timestamp::CONSOLE_EPOCH;

    fn router(language: Language, public_url: Option<&str>) -> Router {
        let options = RouterConfig {
            languages: crate::config::LanguageSettings::all(language),
            public_url: public_url.map(str::to_owned),
            ..RouterConfig::default()
        };
        Router::new(Registry::standard(), options)
    }

    fn said(router: &mut Router, who: &str, text: &str) -> String {
        let inbound =
            Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new(who), text);
        let out = router.handle(&inbound, T);
        out.iter().map(|o| o.message.text.plain()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn a_rule_is_said_in_the_rooms_language() {
        let mut english = router(Language::En, None);
        let d10 = said(&mut english, "alice", "!rules D-10");
        assert!(d10.starts_with("alice: D-10 (duel): A run of k ≥ 2 identical base elements seals"), "{d10}");
        assert_eq!(d10.lines().count(), 1, "{d10}");
        // Any case, no hyphen, full width: the same rule.
        for typed in ["!rules d10", "!RULES ｄ－１０", "!rule D-10"] {
            assert_eq!(said(&mut english, "alice", typed), d10, "{typed}");
        }
        let t3 = said(&mut english, "alice", "!rules T-3");
        assert!(t3.contains("T-3 (thaum): Loop Instability rises by 1"), "{t3}");

        let mut chinese = router(Language::ZhCn, None);
        let d10 = said(&mut chinese, "alice", "!规则 D-10");
        assert!(d10.contains("D-10（决斗）：相同的基础元素连续唤起 `k ≥ 2` 个"), "{d10}");
        let same = said(&mut chinese, "alice", "!rules d-10");
        assert_eq!(same, d10);
    }

    #[test]
    fn an_unknown_rule_is_refused_with_the_valid_ones() {
        let mut router = router(Language::En, None);
        for typed in ["X-99", "D-14", "T-0", "D", "<b>`x`</b>"] {
            let refused = said(&mut router, "alice", &format!("!rules {typed}"));
            assert!(refused.contains("There is no rule"), "{typed}: {refused}");
            assert!(refused.contains("thaum T-1 … T-10; duel D-1 … D-13"), "{typed}: {refused}");
            assert!(refused.contains("; nim N-1 … N-5: type e.g. `!rules N-1`"), "{refused}");
        }
        // A long id is cut when said back.
        let long = said(&mut router, "alice", &format!("!rules {}", "Z".repeat(400)));
        assert!(long.contains(&format!("`{}…`", "Z".repeat(ECHOED))) && long.len() < 300, "{long}");
        let extra = said(&mut router, "alice", "!rules D-1 D-2");
        assert!(extra.contains("!rules [id]"), "{extra}");
        let snapshot = router.snapshot();
        assert_eq!(snapshot["tables"].as_array().map(Vec::len), Some(0), "nothing changed: {snapshot}");
    }

    #[test]
    fn rules_lists_the_tables_game_or_every_game_and_links_the_site() {
        let mut router = router(Language::En, Some("https://games.example.org/"));
        let every = said(&mut router, "alice", "!rules");
        assert!(every.contains("Rules: thaum T-1 … T-10; duel D-1 … D-13; nim N-1 … N-5."), "{every}");
        assert!(every.contains("All of them: https://games.example.org/rules"), "{every}");
        said(&mut router, "alice", "!new thaum");
        let thaum = said(&mut router, "alice", "!rules");
        assert!(thaum.contains("Thaum rules: T-1 T-2 T-3 T-4 T-5 T-6 T-7 T-8 T-9 T-10."), "{thaum}");
        assert!(thaum.contains("https://games.example.org/rules/thaum"), "{thaum}");
        assert!(!thaum.contains("D-1"), "{thaum}");
    }

    fn links(out: &[Outbound]) -> Vec<(String, String)> {
        let segments = out.iter().flat_map(|o| o.message.text.segments().to_vec());
        segments
            .filter_map(|s| match s {
                Segment::Link { text, url } => Some((text, url)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_cited_rule_links_to_the_site_when_its_address_is_known() {
        let console = |who: &str, text: &str| {
            Inbound::new(NetworkId::new("console"), RoomId::new("console"), PlayerId::new(who), text)
        };
        let mut router = router(Language::En, Some("https://games.example.org"));
        router.handle(&console("bob", "hello"), T);
        router.handle(&console("alice", "!duel bob"), T);
        let opened = router.handle(&console("bob", "!accept"), T);
        let linked = links(&opened);
        assert!(
            linked.contains(&("D-1".to_owned(), "https://games.example.org/rules/duel#D-1".to_owned())),
            "{linked:?}"
        );
        let answer = router.handle(&console("alice", "!rules d-10"), T);
        assert_eq!(
            links(&answer),
            [("D-10".to_owned(), "https://games.example.org/rules/duel#D-10".to_owned())]
        );

        let mut unlinked = self::router(Language::En, None);
        unlinked.handle(&console("bob", "hello"), T);
        unlinked.handle(&console("alice", "!duel bob"), T);
        assert!(links(&unlinked.handle(&console("bob", "!accept"), T)).is_empty());
    }
}
