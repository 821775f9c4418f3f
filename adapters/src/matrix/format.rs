//! Matrix message formatting, with no I/O: [`render`] turns a [`RichText`] into the
//! plain `body`, the `org.matrix.custom.html` `formatted_body` and the users to list in
//! `m.mentions`, for an `m.text` or (acted) `m.emote`. Reading an inbound message's HTML
//! is [`html`](super::html)'s. Text with no styles, colours, pills or names goes without
//! HTML ([`Rendered::marked_up`]), as clients send plain text.
//!
//! A mentioned or named player's display name is escaped and cut as every network shows
//! names ([`spellbridge_core::shown::name`]).
//!
//! HTML follows the spec's allowed subset (client-server API, "m.room.message msgtypes"):
//! `<strong>`, `<em>`, `<code>`, `<br>`, `<font color data-mx-color>` for game colours,
//! mentions as pills, `<a href="https://matrix.to/#/@user:server">name</a>`, and links to
//! web pages (a rule on the spectator site) as `<a href>`.

use matrix_sdk::ruma::UserId;
use spellbridge_core::RichText;
use spellbridge_core::text::{Hue, Segment, Style};

/// A message ready to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The plain `body`: mentions as display names, code in backticks.
    pub plain: String,
    /// The `formatted_body` in `org.matrix.custom.html`.
    pub html: String,
    /// The user ids mentioned, in order, each once (for `m.mentions.user_ids`).
    pub mentions: Vec<String>,
    /// The HTML says more than the plain body (a style, a colour, a pill or a name):
    /// only then is it worth sending.
    pub marked_up: bool,
}

/// The colour a hue is drawn in: mid-tone, readable on light and dark themes.
pub fn hue_colour(hue: Hue) -> &'static str {
    match hue {
        Hue::Red => "#d23c3c",
        Hue::Blue => "#3c78d8",
        Hue::Brown => "#a0693c",
        Hue::Green => "#3c9a50",
        Hue::Yellow => "#c8a000",
        Hue::Grey => "#8c8c8c",
    }
}

/// Renders rich text. `name_of` gives the display name to show for a mentioned Matrix
/// user (the transport looks it up in the room); a mention that is not a valid Matrix
/// user id (a player from another network) is written as plain text, without a pill.
pub fn render(text: &RichText, name_of: impl Fn(&str) -> Option<String>) -> Rendered {
    let mut plain = String::new();
    let mut html = String::new();
    let mut mentions: Vec<String> = Vec::new();
    let mut marked_up = false;
    for segment in text.segments() {
        match segment {
            Segment::Text { text, style } => {
                let (open, close) = match style {
                    Style::Plain => ("", ""),
                    Style::Bold => ("<strong>", "</strong>"),
                    Style::Italic => ("<em>", "</em>"),
                    Style::Code => ("<code>", "</code>"),
                };
                marked_up |= *style != Style::Plain;
                if *style == Style::Code {
                    plain.push('`');
                    push_plain(&mut plain, text);
                    plain.push('`');
                } else {
                    push_plain(&mut plain, text);
                }
                html.push_str(open);
                push_escaped(&mut html, text);
                html.push_str(close);
            }
            Segment::Coloured { text, hue } => {
                let colour = hue_colour(*hue);
                marked_up = true;
                push_plain(&mut plain, text);
                html.push_str(&format!("<font color=\"{colour}\" data-mx-color=\"{colour}\">"));
                push_escaped(&mut html, text);
                html.push_str("</font>");
            }
            Segment::Mention(player) => {
                let id = player.as_str();
                if UserId::parse(id).is_ok() {
                    marked_up = true;
                    let name = shown_name(&name_of, id);
                    push_plain(&mut plain, &name);
                    html.push_str("<a href=\"https://matrix.to/#/");
                    push_escaped(&mut html, id);
                    html.push_str("\">");
                    push_escaped(&mut html, &name);
                    html.push_str("</a>");
                    if !mentions.iter().any(|m| m == id) {
                        mentions.push(id.to_owned());
                    }
                } else {
                    push_plain(&mut plain, id);
                    push_escaped(&mut html, id);
                }
            }
            // The transport writes the bot's name in first (`RichText::naming_bot`).
            Segment::Bot => {
                push_plain(&mut plain, "me");
                push_escaped(&mut html, "me");
            }
            Segment::Name(player) => {
                let id = player.as_str();
                let name = shown_name(&name_of, id);
                marked_up = true;
                push_plain(&mut plain, &name);
                html.push_str("<strong>");
                push_escaped(&mut html, &name);
                html.push_str("</strong>");
            }
            Segment::Separator(text) => {
                push_plain(&mut plain, text);
                push_escaped(&mut html, text);
            }
            Segment::Link { text, url } => {
                push_plain(&mut plain, text);
                // Only a web address becomes a link (never `javascript:` or the like).
                let web = url.starts_with("https://") || url.starts_with("http://");
                if web {
                    marked_up = true;
                    html.push_str("<a href=\"");
                    push_escaped(&mut html, url);
                    html.push_str("\">");
                }
                push_escaped(&mut html, text);
                if web {
                    html.push_str("</a>");
                }
            }
        }
    }
    Rendered { plain, html, mentions, marked_up }
}

/// The name a mention of `id` shows: the display name `name_of` gives (else the id), with
/// its hidden and reversing characters escaped and cut to a name's length, as every
/// network shows names ([`spellbridge_core::shown::name`]), so a display name holding a
/// `U+202E` or a zero-width space cannot turn or disguise the announcement around it.
fn shown_name(name_of: impl Fn(&str) -> Option<String>, id: &str) -> String {
    let name = name_of(id).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| id.to_owned());
    spellbridge_core::shown::name(&name)
}

/// Appends text to a plain body, dropping control characters other than newline and tab.
fn push_plain(out: &mut String, text: &str) {
    out.extend(text.chars().filter(|c| !c.is_control() || *c == '\n' || *c == '\t'));
}

/// Appends text to HTML: escaped, newlines as `<br>`, other control characters dropped.
fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push_str("<br>"),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use spellbridge_core::PlayerId;

    use super::super::html::{html_to_rich, html_to_text};
    use super::*;

    fn names(id: &str) -> Option<String> {
        (id == "@bob:localhost").then(|| "Bob <the Bold>".to_owned())
    }

    #[test]
    fn styles_become_their_html_elements_and_code_keeps_backticks_in_plain() {
        let text = RichText::new().bold("Fire").text(" & ").italic("Water").text(": type ").code("!cast <x>");
        let out = render(&text, names);
        assert_eq!(out.plain, "Fire & Water: type `!cast <x>`");
        assert_eq!(out.html, "<strong>Fire</strong> &amp; <em>Water</em>: type <code>!cast &lt;x&gt;</code>");
        assert!(out.mentions.is_empty());
    }

    #[test]
    fn colours_are_font_tags_with_both_colour_attributes() {
        let out = render(&RichText::new().coloured("Thunder", Hue::Yellow), names);
        assert_eq!(out.plain, "Thunder");
        assert_eq!(out.html, "<font color=\"#c8a000\" data-mx-color=\"#c8a000\">Thunder</font>");
    }

    #[test]
    fn display_names_that_hide_or_reverse_text_are_shown_escaped_in_plain_and_html() {
        let hostile = |id: &str| match id {
            "@carol:localhost" => Some("carol\u{200B}".to_owned()),
            "@bob:localhost" => Some("\u{202E}niw bob \u{2066}x".to_owned()),
            _ => None,
        };
        let text = RichText::new()
            .name(&PlayerId::new("@carol:localhost"))
            .text(" conceded. 🏆 ")
            .mention(&PlayerId::new("@bob:localhost"))
            .text(" wins!");
        let out = render(&text, hostile);
        assert_eq!(out.plain, "carol\\u{200b} conceded. 🏆 \\u{202e}niw bob \\u{2066}x wins!");
        assert!(!out.html.contains('\u{202E}') && !out.html.contains('\u{200B}'), "{}", out.html);
        assert!(out.html.contains("<strong>carol\\u{200b}</strong>"), "{}", out.html);
        let long =
            render(&RichText::new().name(&PlayerId::new("@long:localhost")), |_| Some("n".repeat(500)));
        assert_eq!(long.plain.chars().count(), spellbridge_core::shown::NAME_CHARS);
    }

    #[test]
    fn mentions_are_pills_with_the_display_name_and_are_listed_once() {
        let bob = PlayerId::new("@bob:localhost");
        let text = RichText::new().mention(&bob).text(", your move. ").mention(&bob);
        let out = render(&text, names);
        assert_eq!(out.plain, "Bob <the Bold>, your move. Bob <the Bold>");
        let pill = "<a href=\"https://matrix.to/#/@bob:localhost\">Bob &lt;the Bold&gt;</a>";
        assert_eq!(out.html, format!("{pill}, your move. {pill}"));
        assert_eq!(out.mentions, ["@bob:localhost"]);
    }

    #[test]
    fn names_are_bold_display_names_that_ping_nobody() {
        let text = RichText::new().name(&PlayerId::new("@bob:localhost")).text(": surge fire");
        let out = render(&text, names);
        assert_eq!(out.plain, "Bob <the Bold>: surge fire");
        assert_eq!(out.html, "<strong>Bob &lt;the Bold&gt;</strong>: surge fire");
        assert!(out.mentions.is_empty());
    }

    #[test]
    fn mentions_without_a_name_show_the_id_and_non_matrix_players_are_plain() {
        let text = RichText::new()
            .mention(&PlayerId::new("@carol:localhost"))
            .text(" and ")
            .mention(&PlayerId::new("dave"));
        let out = render(&text, names);
        assert_eq!(out.plain, "@carol:localhost and dave");
        assert_eq!(
            out.html,
            "<a href=\"https://matrix.to/#/@carol:localhost\">@carol:localhost</a> and dave"
        );
        assert_eq!(out.mentions, ["@carol:localhost"]);
    }

    #[test]
    fn newlines_become_breaks_and_control_characters_are_dropped() {
        let out = render(&RichText::new().text("a\nb\u{7}c\rd"), names);
        assert_eq!(out.plain, "a\nbcd");
        assert_eq!(out.html, "a<br>bcd");
    }

    #[test]
    fn only_styles_colours_pills_and_names_make_html_worth_sending() {
        let plain = RichText::new().text("<alice> 2 < 3 & ").mention(&PlayerId::new("dave")).text("\nok");
        assert!(!render(&plain, names).marked_up, "escaping, a newline or a non-Matrix mention is no markup");
        let bob = PlayerId::new("@bob:localhost");
        for marked in [
            RichText::new().text("a ").bold("b"),
            RichText::new().coloured("Fire", Hue::Red),
            RichText::new().mention(&bob),
            RichText::new().name(&bob),
        ] {
            assert!(render(&marked, names).marked_up, "{marked:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn rendered_html_reads_back_as_the_plain_body(words in "[a-zA-Z0-9!<>&\"' ]{1,60}") {
            let text = RichText::new().bold(words.clone());
            let out = render(&text, names);
            let collapsed = words.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(html_to_text(&out.html), collapsed.clone());
            let rich = if collapsed.is_empty() { RichText::new() } else { RichText::new().bold(collapsed) };
            proptest::prop_assert_eq!(html_to_rich(&out.html), rich);
        }
    }
}
