//! `/tables/{id}`: one table — its board picture, its public state (the facts people read
//! first, and the whole public state as JSON), its dice commitments and revealed keys
//! (RULES T-10) and its history, newest first (the latest [`RECENT`] rows open, the rest
//! folded; what the table was told in its Markdown, [`super::markdown`]). `<main>` names
//! the table's event stream, which the page's script follows; a table of a hidden room,
//! like an unknown one, is 404. The facts are the game's ([`GamePlugin::facts`] of its
//! public view), in the page's language; no game is named here.
//!
//! [`GamePlugin::facts`]: spellbridge_core::GamePlugin::facts

use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use maud::{Markup, html};
use spellbridge_core::Language;
use spellbridge_core::dice::DiceKey;
use spellbridge_core::facts::{Bit, Facts};

use super::error::SiteError;
use super::history::{self, Row, What};
use super::index::{game_name, players};
use super::names::Names;
use super::page::Body;
use super::page::{html_bytes, layout};
use super::public;
use super::reader::TableRow;
use super::shared::Site;
use super::words::{Words, words};

/// The page, or `None` (404) when there is no such table to show.
pub fn page(site: &Site, id: u64, language: Language) -> Result<Option<Response<Body>>, SiteError> {
    let Some(row) = site.reader().table(id)? else { return Ok(None) };
    if site.hidden().hides(&row.network, &row.room) {
        return Ok(None);
    }
    let cache = &site.inner.pages;
    if let Some(html) = cache.get((id, language), row.sequence(), row.finished) {
        return Ok(Some(html_bytes(StatusCode::OK, html)));
    }
    let html = Bytes::from(write(site, &row, language)?.into_string());
    cache.put((id, language), row.sequence(), row.finished, html.clone());
    Ok(Some(html_bytes(StatusCode::OK, html)))
}

/// Writes the page of `row`.
fn write(site: &Site, row: &TableRow, language: Language) -> Result<Markup, SiteError> {
    let id = row.id;
    let entries = site.reader().entries(id)?;
    let registry = site.registry();
    let (rows, problem) = history::rows(&registry, &entries, language);
    let w = words(language);
    let entry = public::entry(&registry, row);
    let names = Names::kept(site)?;
    let ids = super::names::ids(&row.snapshot);
    let named = names.named(entry.clone(), &ids);
    let title = format!("{} #{}", game_name(&registry, &row.game, language), row.id);
    // The build the table plays says its facts and draws its board.
    let state = row.snapshot.get("state").unwrap_or(&serde_json::Value::Null);
    let game = crate::games::played(&registry, &row.game, state);
    let facts = game.as_ref().map(|g| g.facts(&named["state"], language)).unwrap_or_default();
    let drawn = game.as_ref().is_some_and(|g| g.board(&named["state"], language).is_some());
    let main = html! {
        main data-events={ "/tables/" (row.id) "/events" } data-sequence=(row.sequence()) data-finished=(row.finished) {
            h1 {
                (title) " "
                @if row.finished { span.tag { (w.finished) } } @else { span.tag.live.status { (w.playing) } }
            }
            p.sub {
                (row.room.as_str()) " (" (row.network.as_str()) ") · " (players(&row.snapshot, &names).join(" · "))
                @if !row.finished { " · " (w.live_note) }
            }
            @if drawn {
                img.board id="board" src={ "/tables/" (row.id) "/board.png?v=" (row.sequence()) (board_language(language)) }
                    alt={ (w.board) ": " (title) };
            }
            h2 { (w.state) }
            (facts_html(&facts))
            details {
                summary { "JSON" }
                pre.mono { (serde_json::to_string_pretty(&entry).unwrap_or_default()) }
            }
            h2 { (w.dice) }
            (dice(row, &rows, w))
            h2 { (w.history) }
            @if let Some(problem) = &problem { p.sub { (problem) } }
            (history(&rows, &Shown { names: &names, players: &ids }, w, &|line| super::rules::linked(&registry, line, language)))
        }
    };
    Ok(layout(language, &title, main))
}

/// How many of the newest history rows are shown open; the older ones are folded.
pub const RECENT: usize = 6;

/// The facts a game gives of its public view, as HTML.
fn facts_html(facts: &Facts) -> Markup {
    html! {
        @if !facts.facts.is_empty() {
            div.facts {
                @for fact in &facts.facts {
                    div.fact {
                        b { (fact.label) }
                        @for bit in &fact.body {
                            @match bit {
                                Bit::Text(text) => { (text) }
                                Bit::Glyph { text, title } => { span.glyph title=(title) { (text) } }
                                Bit::Tag { text, live: true } => { span.tag.live { (text) } }
                                Bit::Tag { text, live: false } => { span.tag { (text) } }
                                Bit::Break => { br; }
                            }
                        }
                    }
                }
            }
        }
        @if let Some(grid) = &facts.grid {
            div.wide { table {
                thead { tr {
                    @for column in &grid.columns {
                        @if column.numeric { th.n { (column.label) } } @else { th { (column.label) } }
                    }
                } }
                tbody {
                    @for row in &grid.rows {
                        tr {
                            @for (cell, column) in row.iter().zip(&grid.columns) {
                                @if column.numeric { td.n { (cell) } } @else { td { (cell) } }
                            }
                        }
                    }
                }
            } }
        }
    }
}

/// Each dice key's commitment and, once revealed, the key: a revealed key is matched to
/// the commitment it hashes to (its SHA-256, RULES T-10).
fn dice(row: &TableRow, rows: &[Row], w: &Words) -> Markup {
    let mut keys: Vec<(Option<u64>, String, Option<String>)> = Vec::new();
    for history in rows {
        match &history.what {
            What::Opened { commitment: Some(commitment), .. } => {
                keys.push((None, commitment.to_string(), None))
            }
            What::Keyed { epoch, commitment } => keys.push((Some(*epoch), commitment.to_string(), None)),
            What::Revealed { epoch, key } => {
                let hashed = DiceKey::from_hex(key).map(|k| k.commitment().to_string()).ok();
                if let Some(kept) =
                    keys.iter_mut().find(|(_, c, k)| Some(c) == hashed.as_ref() && k.is_none())
                {
                    kept.0.get_or_insert(*epoch);
                    kept.2 = Some(key.clone());
                }
            }
            _ => {}
        }
    }
    html! {
        @if keys.is_empty() { p.sub { (w.none) } }
        @for (epoch, commitment, key) in &keys {
            div.fact {
                b { @if let Some(epoch) = epoch { (w.epoch) " " (epoch) " · " } (w.commitment) } code { (commitment) }
                b { (w.key) }
                @match key {
                    Some(key) => { code { (key) } }
                    None => { span.sub { (w.not_revealed) } }
                }
            }
        }
        @if keys.iter().any(|(_, _, key)| key.is_some()) {
            p.sub { (w.verify) " " code { "spellbridge verify --db … --table " (row.id) " --key …" } }
        }
    }
}

/// How the history names players: as the site shows them ([`Names`]), the table's
/// `players` ids in the lines it told too.
struct Shown<'a> {
    names: &'a Names,
    players: &'a [String],
}

/// The history, newest first: the latest [`RECENT`] rows, then the older ones folded;
/// `told` writes a line the table was told (Markdown rendered, its rule ids linked).
fn history(rows: &[Row], shown: &Shown<'_>, w: &Words, told: &dyn Fn(&str) -> Markup) -> Markup {
    let newest: Vec<&Row> = rows.iter().rev().collect();
    let (recent, older) = newest.split_at(newest.len().min(RECENT));
    html! {
        (history_table(recent, shown, w, "history", told))
        @if !older.is_empty() {
            details.earlier {
                summary { (w.earlier) " (" (older.len()) ")" }
                (history_table(older, shown, w, "earlier", told))
            }
        }
    }
}

fn history_table(
    rows: &[&Row],
    shown: &Shown<'_>,
    w: &Words,
    id: &str,
    told: &dyn Fn(&str) -> Markup,
) -> Markup {
    html! {
        table.history id=(id) {
            thead { tr { th.n { "#" } th { (w.when) } th { (w.who) } th { (w.command) } th { (w.seed) } th { (w.told) } } }
            tbody {
                @for row in rows {
                    tr {
                        td.n { @if let Some(sequence) = row.sequence { (sequence) } }
                        td.when { @if let Some(when) = row.when { (when.to_string().replace('T', " ").trim_end_matches('Z')) } }
                        @match &row.what {
                            What::Opened { seats, .. } => {
                                td { (seats.first().map(|p| shown.names.shown(p.as_str())).unwrap_or_default()) }
                                td { (w.opened) }
                                td {}
                            }
                            What::Acted { actor, said, seed } => {
                                td { (shown.names.shown(actor.as_str())) }
                                td {
                                    @match said {
                                        Some(said) => { code { (said) } }
                                        None => { span.sub { (w.privately) } }
                                    }
                                }
                                td { @if let Some(seed) = seed { code { (seed) } } }
                            }
                            What::Fired { seed } => {
                                td {}
                                td { span.sub { (w.timer) } }
                                td { @if let Some(seed) = seed { code { (seed) } } }
                            }
                            What::Keyed { epoch, .. } => {
                                td {}
                                td { (w.epoch) " " (epoch) " · " (w.commitment) }
                                td {}
                            }
                            What::Revealed { epoch, .. } => {
                                td {}
                                td { (w.epoch) " " (epoch) " · " (w.key) }
                                td {}
                            }
                        }
                        td {
                            @match &row.what {
                                What::Keyed { commitment, .. } => { code { (commitment.as_str()) } }
                                What::Revealed { key, .. } => { code { (key) } }
                                _ => {}
                            }
                            @if !row.told.is_empty() {
                                ul.told { @for line in &row.told { li { (told(&shown.names.in_text(line, shown.players))) } } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What the board picture's address adds to draw it in `language` (nothing for English).
fn board_language(language: Language) -> &'static str {
    match language {
        Language::En => "",
        Language::ZhCn => "&lang=zh-CN",
    }
}
