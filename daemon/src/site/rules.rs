//! `/rules/<game>`: a game's rules at hand, one entry per rule id with an anchor of its
//! own (`/rules/duel#D-10`), in the page's language, as the game words them
//! ([`GamePlugin::rules`](spellbridge_core::GamePlugin::rules)); `/rules` shows every
//! game's. A game this build does not have is 404. Also [`linked`]: a line the table was
//! told, with each rule id it cites (`RULES D-10`, `规则 D-10`) a link to its entry.

use hyper::Response;
use maud::{Markup, html};
use spellbridge_core::{GamePlugin, Language, Registry};

use super::page::Body;
use super::page::{layout, ok};
use super::words::{keep, words};

/// The page of `game`'s rules (every game's with `None`); `None` when no game is called so.
pub fn page(registry: &Registry, game: Option<&str>, language: Language) -> Option<Response<Body>> {
    let games: Vec<&dyn GamePlugin> = match game {
        Some(name) => vec![registry.iter().find(|g| g.name() == name)?],
        None => registry.iter().collect(),
    };
    let w = words(language);
    let title = match games.as_slice() {
        [one] => format!("{} · {}", one.name_in(language), w.rules),
        _ => w.rules.to_owned(),
    };
    let main = html! {
        main {
            h1 { (title) }
            @for game in &games {
                @let rules = game.rules();
                @if !rules.is_empty() {
                    h2 { a href={ "/rules/" (game.name()) (keep(language)) } { (game.name_in(language)) } }
                    p.sub { (game.summary_in(language)) }
                    dl.rules {
                        @for id in rules {
                            dt id=(id) { a href={ "#" (id) } { (id) } }
                            dd { (game.rule_in(id, language).unwrap_or_default()) }
                        }
                    }
                }
            }
        }
    };
    Some(ok(layout(language, &title, main)))
}

/// `line` with each rule id of `registry`'s games that it cites after `RULES` or `规则`
/// a link to the id's entry on its game's rules page, the rest rendered as Markdown
/// ([`super::markdown`]: escaped first).
pub fn linked(registry: &Registry, line: &str, language: Language) -> Markup {
    let mut pieces: Vec<(String, Option<String>)> = Vec::new();
    let mut rest = line;
    while let Some((start, end, game)) = registry.cited_rule(rest) {
        let id = &rest[start..end];
        pieces.push((rest[..start].to_owned(), None));
        pieces.push((id.to_owned(), Some(format!("/rules/{game}{}#{id}", keep(language)))));
        rest = &rest[end..];
    }
    pieces.push((rest.to_owned(), None));
    html! {
        @for (text, link) in &pieces {
            @match link {
                Some(href) => a href=(href) { (text) },
                None => (super::markdown::render(text)),
            }
        }
    }
}
