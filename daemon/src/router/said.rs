//! The router's own sentences, from the catalogues (`locales/*/lobby.ftl`, `link.ftl`,
//! `router.ftl`, issue 19), in the language of where they are said; and lists joined as
//! each language joins them ("a, b or c", "a、b 或 c").

use spellbridge_core::locale::{self, Args};
use spellbridge_core::{Language, RichText};

/// The message `id` in `language`, with `args`.
pub(super) fn said(language: Language, id: &str, args: Args) -> RichText {
    locale::rich(language, id, &args)
}

/// `items` as "a, b or c" in `language` (`common-comma`, `common-or`).
pub(super) fn or_list(language: Language, mut items: Vec<RichText>) -> RichText {
    let Some(mut text) = items.pop() else { return RichText::new() };
    if let Some(before) = items.pop() {
        text = said(language, "common-or", Args::new().rich("first", before).rich("last", text));
    }
    while let Some(before) = items.pop() {
        text = said(language, "common-comma", Args::new().rich("first", before).rich("rest", text));
    }
    text
}

/// `items` joined by `separator`'s message (`lobby-games-separator`).
pub(super) fn joined(language: Language, separator: &str, items: Vec<RichText>) -> RichText {
    let between = said(language, separator, Args::new());
    items.into_iter().enumerate().fold(RichText::new(), |text, (i, item)| {
        if i == 0 { text.append(item) } else { text.append(between.clone()).append(item) }
    })
}

/// A lobby command's summary message (`!help <command>`); a game's lobby command is
/// explained by its game.
pub(super) fn lobby_summary(command: &str) -> Option<&'static str> {
    Some(match command {
        "help" => "lobby-summary-help",
        "games" => "lobby-summary-games",
        "new" => "lobby-summary-new",
        "accept" => "lobby-summary-accept",
        "decline" => "lobby-summary-decline",
        "withdraw" => "lobby-summary-withdraw",
        "link" => "lobby-summary-link",
        "unlink" => "lobby-summary-unlink",
        "ignore" => "lobby-summary-ignore",
        "unignore" => "lobby-summary-unignore",
        "lang" => "lobby-summary-lang",
        "board" => "lobby-summary-board",
        "stats" => "lobby-summary-stats",
        "top" => "lobby-summary-top",
        "rules" => "lobby-summary-rules",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> RichText {
        RichText::new().code(text)
    }

    #[test]
    fn lists_are_joined_as_each_language_joins_them() {
        let three = || vec![code("a"), code("b"), code("c")];
        assert_eq!(or_list(Language::En, three()).plain(), "`a`, `b` or `c`");
        assert_eq!(or_list(Language::ZhCn, three()).plain(), "`a`、`b` 或 `c`");
        assert_eq!(or_list(Language::En, vec![code("a")]).plain(), "`a`");
        assert_eq!(joined(Language::En, "lobby-games-separator", three()).plain(), "`a`; `b`; `c`");
    }

    /// Every lobby command has its summary in the catalogue, in English as declared.
    #[test]
    fn every_lobby_command_is_explained_in_each_language() {
        for command in crate::lobby::LOBBY_COMMANDS {
            let id = lobby_summary(command.name).unwrap_or_else(|| panic!("{} has no summary", command.name));
            assert_eq!(locale::text(Language::En, id, &Args::new()), command.summary, "{id}");
            assert!(locale::has(Language::ZhCn, id), "{id}");
        }
    }
}
