//! `/`: the tables being played and the ones that finished lately, newest first, without
//! the tables of hidden rooms; its `<main>` names `/events`, which the page's script
//! follows as a table's page follows its own ([`super::events`]).

use hyper::Response;
use maud::{Markup, html};
use serde_json::Value;
use spellbridge_core::{Language, Registry};

use super::error::SiteError;
use super::names::Names;
use super::page::Body;
use super::page::{layout, ok, suffix};
use super::reader::TableRow;
use super::shared::Site;
use super::words::words;

/// How many tables of each kind are listed.
const SHOWN: usize = 50;

/// The page.
pub fn page(site: &Site, language: Language) -> Result<Option<Response<Body>>, SiteError> {
    // Read before the tables and written into the page, so its stream knows what the
    // page missed.
    let version = site.inner.feed.index_version();
    let hidden = site.hidden();
    let shown = |finished: bool| -> Result<Vec<TableRow>, SiteError> {
        Ok(site
            .reader()
            .tables(finished)?
            .into_iter()
            .filter(|row| !hidden.hides(&row.network, &row.room))
            .take(SHOWN)
            .collect())
    };
    let (live, recent) = (shown(false)?, shown(true)?);
    let names = Names::kept(site)?;
    let w = words(language);
    let main = html! {
        main data-events="/events" data-sequence=(version) data-finished="false" {
            h1 { (w.tables) }
            h2 { (w.live) }
            (list(&live, &names, &site.registry(), language))
            h2 { (w.recent) }
            (list(&recent, &names, &site.registry(), language))
        }
    };
    Ok(Some(ok(layout(language, w.tables, main))))
}

fn list(rows: &[TableRow], names: &Names, registry: &Registry, language: Language) -> Markup {
    let w = words(language);
    if rows.is_empty() {
        return html! { p.sub { (w.none) } };
    }
    html! {
        div.wide { table {
            thead { tr { th { (w.table) } th { (w.game) } th { (w.room) } th { (w.players) } th.n { (w.moves) } } }
            tbody {
                @for row in rows {
                    tr {
                        td { a href={ "/tables/" (row.id) (suffix(language)) } { "#" (row.id) } }
                        td { (game_name(registry, &row.game, language)) }
                        td { (row.room.as_str()) " " span.sub { "(" (row.network.as_str()) ")" } }
                        td { (players(&row.snapshot, names).join(", ")) }
                        td.n { (row.sequence()) }
                    }
                }
            }
        } }
    }
}

/// A game's name as people of `language` write it, as a title (`Duel`, `决斗`): its
/// name in that language ([`GamePlugin::name_in`]) with a capital; a game the registry
/// does not know, as stored.
///
/// [`GamePlugin::name_in`]: spellbridge_core::GamePlugin::name_in
pub fn game_name(registry: &Registry, game: &str, language: Language) -> String {
    let name = registry.get(game).map_or_else(|| game.to_owned(), |plugin| plugin.name_in(language));
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// The players of a stored table, in its order (a Duel's list, a Thaum table's sheets),
/// as the site shows them ([`Names`]).
pub fn players(snapshot: &Value, names: &Names) -> Vec<String> {
    super::names::ids(snapshot).iter().map(|player| names.shown(player)).collect()
}
