//! `/tables/{id}`: one table — its board picture, its public state (the facts people read
//! first, and the whole public state as JSON), its dice commitments and revealed keys
//! (RULES T-10) and its history, newest first. `<main>` names the table's event stream, which the
//! page's script follows; a table of a hidden room, like an unknown one, is 404.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use maud::{Markup, html};
use serde_json::Value;
use spellbridge_core::Language;
use spellbridge_core::dice::DiceKey;

use super::history::{self, Row, What};
use super::index::{game_name, players};
use super::names::Names;
use super::page::{html_bytes, layout};
use super::public;
use super::reader::TableRow;
use super::words::{Words, words};
use super::{Body, Site, SiteError};

/// The last page written of each recently shown table, by language: after a move every
/// open page fetches the table's page again, and all of them get the one written first.
#[derive(Default)]
pub struct Cache {
    pages: Mutex<BTreeMap<(u64, Language), Written>>,
}

/// A written page: the table's sequence and whether it had finished, and the HTML.
type Written = (u64, bool, Bytes);

/// How many pages are kept.
const KEPT: usize = 64;

impl Cache {
    fn get(&self, key: (u64, Language), sequence: u64, finished: bool) -> Option<Bytes> {
        let pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        pages.get(&key).filter(|(s, f, _)| (*s, *f) == (sequence, finished)).map(|(_, _, html)| html.clone())
    }

    fn put(&self, key: (u64, Language), sequence: u64, finished: bool, html: Bytes) {
        let mut pages = self.pages.lock().unwrap_or_else(PoisonError::into_inner);
        if pages.len() >= KEPT && !pages.contains_key(&key) {
            pages.pop_first();
        }
        pages.insert(key, (sequence, finished, html));
    }
}

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
    let (rows, problem) = history::rows(site.registry(), &entries, language);
    let w = words(language);
    let entry = public::entry(row);
    let names = Names::kept(site)?;
    let named = names.named(entry.clone(), &super::names::ids(&row.snapshot));
    let title = format!("{} #{}", game_name(&row.game), row.id);
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
            @if matches!(row.game.as_str(), "duel" | "thaum") {
                img.board id="board" src={ "/tables/" (row.id) "/board.png?v=" (row.sequence()) (board_language(language)) }
                    alt={ (w.board) ": " (title) };
            }
            h2 { (w.state) }
            (facts(row, &named["state"], w))
            details {
                summary { "JSON" }
                pre.mono { (serde_json::to_string_pretty(&entry).unwrap_or_default()) }
            }
            h2 { (w.dice) }
            (dice(row, &rows, w))
            h2 { (w.history) }
            @if let Some(problem) = &problem { p.sub { (problem) } }
            (history_table(&rows, &names, &super::names::ids(&row.snapshot), w))
        }
    };
    Ok(layout(language, &title, main))
}

/// The facts of a state people look for first.
fn facts(row: &TableRow, state: &Value, w: &Words) -> Markup {
    match row.game.as_str() {
        "duel" => duel_facts(state, w),
        "thaum" => thaum_facts(state, w),
        _ => html! {},
    }
}

/// The Duel's elements in the rules' order.
const ELEMENTS: [&str; 6] = ["water", "fire", "thunder", "wind", "earth", "void"];

/// An element's glyph, as the Duel's rules write it.
fn glyph(element: &str) -> &'static str {
    match element {
        "water" => "水",
        "fire" => "火",
        "thunder" => "雷",
        "wind" => "风",
        "earth" => "土",
        "void" => "虚无",
        _ => "?",
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn duel_facts(state: &Value, w: &Words) -> Markup {
    let players: Vec<String> = state["players"].as_array().into_iter().flatten().map(text).collect();
    let track = state["track"].as_i64().unwrap_or(0);
    let toward = match (track.signum(), players.first(), players.get(1)) {
        (1, Some(first), _) => format!("{track} → {first}"),
        (-1, _, Some(second)) => format!("{} → {second}", -track),
        _ => "0".to_owned(),
    };
    html! {
        div.facts {
            div.fact { b { (w.track) } (toward) " / 30" }
            @if let Some(winner) = state["winner"].as_str() { div.fact { b { (w.winner) } (winner) } }
            @if !state["finished"].as_bool().unwrap_or(false) {
                div.fact { b { (w.round) } (text(&state["round"]["number"])) }
            }
            @for player in &players {
                div.fact {
                    b { (spellbridge_core::shown::name(player)) " · " (text(&state["wizards"][player])) }
                    @for element in ELEMENTS {
                        @if let Some(count) = state["pools"][player].get(element) {
                            span.glyph title=(element) { (glyph(element)) } " " (text(count)) " "
                        }
                    }
                    @if !state["finished"].as_bool().unwrap_or(false) {
                        br;
                        @if state["round"]["casters"][player]["acted"].as_bool().unwrap_or(false) {
                            span.tag.live { (w.has_cast) }
                        } @else {
                            span.tag { (w.not_cast) }
                        }
                    }
                }
            }
        }
    }
}

fn thaum_facts(state: &Value, w: &Words) -> Markup {
    let thaums = ["fire", "water", "earth", "air"];
    html! {
        div.facts {
            div.fact { b { "Season" } (text(&state["season"])) }
            div.fact { b { "Phase" } (text(&state["phase"])) }
            div.fact { b { "Loop Instability" } (text(&state["loop_instability"])) " / 9" }
        }
        table {
            thead { tr {
                th { (w.players) } th.n { "Mana" }
                @for thaum in thaums { th.n { (thaum) } }
                th.n { "Coins" }
            } }
            tbody {
                @for (player, sheet) in state["players"].as_object().into_iter().flatten() {
                    tr {
                        td { (spellbridge_core::shown::name(player)) }
                        td.n { (text(&sheet["mana"])) }
                        @for thaum in thaums { td.n { (text(&sheet["thaums"][thaum])) } }
                        td.n { (text(&sheet["coins"])) }
                    }
                }
            }
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
                b { @if let Some(epoch) = epoch { "epoch " (epoch) " · " } (w.commitment) } code { (commitment) }
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

fn history_table(rows: &[Row], names: &Names, players: &[String], w: &Words) -> Markup {
    html! {
        table #history {
            thead { tr { th.n { "#" } th { (w.when) } th { (w.who) } th { (w.command) } th { (w.seed) } th { (w.told) } } }
            tbody {
                @for row in rows.iter().rev() {
                    tr {
                        td.n { @if let Some(sequence) = row.sequence { (sequence) } }
                        td.when { @if let Some(when) = row.when { (when.to_string().replace('T', " ").trim_end_matches('Z')) } }
                        @match &row.what {
                            What::Opened { seats, .. } => {
                                td { (seats.first().map(|p| names.shown(p.as_str())).unwrap_or_default()) }
                                td { (w.opened) }
                                td {}
                            }
                            What::Acted { actor, said, seed } => {
                                td { (names.shown(actor.as_str())) }
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
                                td { "epoch " (epoch) " · " (w.commitment) }
                                td {}
                            }
                            What::Revealed { epoch, .. } => {
                                td {}
                                td { "epoch " (epoch) " · " (w.key) }
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
                                ul.told { @for line in &row.told { li { (names.in_text(line, players)) } } }
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
