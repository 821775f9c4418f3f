//! `/tables/{id}`: one table — its board picture, its public state (the facts people read
//! first, and the whole public state as JSON), its dice commitments and revealed keys
//! (RULES T-10) and its history, newest first (the latest [`RECENT`] rows open, the rest
//! folded; what the table was told in its Markdown, [`super::markdown`]). `<main>` names
//! the table's event stream, which the page's script follows; a table of a hidden room,
//! like an unknown one, is 404. Element and wizard names are in the page's language.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use maud::{Markup, html};
use serde_json::Value;
use spellbridge_core::Language;
use spellbridge_core::dice::DiceKey;
use spellbridge_core::games::duel::{Element, wizard};

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
    let ids = super::names::ids(&row.snapshot);
    let named = names.named(entry.clone(), &ids);
    let title = format!("{} #{}", game_name(&row.game, language), row.id);
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
            (facts(row, &named["state"], language))
            details {
                summary { "JSON" }
                pre.mono { (serde_json::to_string_pretty(&entry).unwrap_or_default()) }
            }
            h2 { (w.dice) }
            (dice(row, &rows, w))
            h2 { (w.history) }
            @if let Some(problem) = &problem { p.sub { (problem) } }
            (history(&rows, &Shown { names: &names, players: &ids }, w, &|line| super::rules::linked(site.registry(), line, language)))
        }
    };
    Ok(layout(language, &title, main))
}

/// How many of the newest history rows are shown open; the older ones are folded.
pub const RECENT: usize = 6;

/// The facts of a state people look for first.
fn facts(row: &TableRow, state: &Value, language: Language) -> Markup {
    match row.game.as_str() {
        "duel" => duel_facts(state, language),
        "thaum" => thaum_facts(state, words(language)),
        _ => html! {},
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn duel_facts(state: &Value, language: Language) -> Markup {
    let w = words(language);
    let finished = state["finished"].as_bool().unwrap_or(false);
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
            @if !finished {
                div.fact { b { (w.round) } (text(&state["round"]["number"])) }
            }
            @for player in &players {
                div.fact {
                    b { (spellbridge_core::shown::name(player)) " · " (wizard::name_in(&text(&state["wizards"][player]), language)) }
                    @for element in Element::ALL {
                        @if let Some(count) = state["pools"][player].get(element.word()) {
                            span.glyph title=(element.name()) { (element.name_in(language)) } " " (text(count)) " "
                        }
                    }
                    @if !finished {
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
            div.fact { b { (w.season) } (text(&state["season"])) }
            div.fact { b { (w.phase) } (text(&state["phase"])) }
            div.fact { b { (w.instability) } (text(&state["loop_instability"])) " / 9" }
        }
        div.wide { table {
            thead { tr {
                th { (w.players) } th.n { (w.mana) }
                @for thaum in w.thaums { th.n { (thaum) } }
                th.n { (w.coins) }
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
        } }
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
