//! `/`: the tables being played and the ones that finished lately, newest first, without
//! the tables of hidden rooms.

use hyper::Response;
use maud::{Markup, html};
use serde_json::Value;
use spellbridge_core::Language;

use super::names::Names;
use super::page::{layout, ok, suffix};
use super::reader::TableRow;
use super::words::words;
use super::{Body, Site, SiteError};

/// How many tables of each kind are listed.
const SHOWN: usize = 50;

/// The page.
pub fn page(site: &Site, language: Language) -> Result<Option<Response<Body>>, SiteError> {
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
        main {
            h1 { (w.tables) }
            h2 { (w.live) }
            (list(&live, &names, language))
            h2 { (w.recent) }
            (list(&recent, &names, language))
        }
    };
    Ok(Some(ok(layout(language, w.tables, main))))
}

fn list(rows: &[TableRow], names: &Names, language: Language) -> Markup {
    let w = words(language);
    if rows.is_empty() {
        return html! { p.sub { (w.none) } };
    }
    html! {
        table {
            thead { tr { th { (w.table) } th { (w.game) } th { (w.room) } th { (w.players) } th.n { (w.moves) } } }
            tbody {
                @for row in rows {
                    tr {
                        td { a href={ "/tables/" (row.id) (suffix(language)) } { "#" (row.id) } }
                        td { (game_name(&row.game)) }
                        td { (row.room.as_str()) " " span.sub { "(" (row.network.as_str()) ")" } }
                        td { (players(&row.snapshot, names).join(", ")) }
                        td.n { (row.sequence()) }
                    }
                }
            }
        }
    }
}

/// A game's name as people write it.
pub fn game_name(game: &str) -> String {
    match game {
        "duel" => "Duel".to_owned(),
        "thaum" => "Thaum".to_owned(),
        other => other.to_owned(),
    }
}

/// The players of a stored table, in its order (a Duel's list, a Thaum table's sheets),
/// as the site shows them ([`Names`]).
pub fn players(snapshot: &Value, names: &Names) -> Vec<String> {
    super::names::ids(snapshot).iter().map(|player| names.shown(player)).collect()
}
