//! When a table's picture is posted, what it says to clients that show no images, and
//! the painter that draws it away from the daemon's loop.
//!
//! A picture is posted after a Duel round settles (or the duel ends) and after a Thaum
//! phase ends (or the table stops), as the table's own events say ([`redraws`]), and on
//! `!board`. The router only notes the table; `serve` hands the [`Painter`] the table's
//! public snapshot entry and the rooms that show pictures, and goes on: the painter's one
//! thread renders each job in order (a job whose table has a newer job waiting is
//! skipped: the room would only see it replaced) and hands the picture, with its text
//! fallback ([`caption`]), to each room's courier behind the text already queued there.
//! A picture that fails to render is logged and counted, and the game goes on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use serde_json::Value;
use spellbridge_core::games::duel::DuelNews;
use spellbridge_core::games::thaum::ThaumEvent;
use spellbridge_core::games::thaum::render::roman;
use spellbridge_core::locale::{self, Args};
use spellbridge_core::{
    Audience, Destination, Event, Language, Message, NetworkId, Picture, PlayerId, RichText, RoomId,
};
use tokio::sync::mpsc;

use super::Board;
use crate::journal::TableId;
use crate::metrics::{BoardStage, Metrics};
use crate::store::Queued;
use crate::turn::Outbound;

/// True when a table's `events` end a part of the game worth a new picture: a Duel round
/// settled, the duel ended or was stopped; a Thaum phase ended or the table stopped.
pub fn redraws(events: &[Event]) -> bool {
    events.iter().filter(|event| event.to == Audience::Table).any(|event| {
        matches!(
            event.get::<DuelNews>(),
            Some(DuelNews::Settled { .. } | DuelNews::Finished { .. } | DuelNews::Stopped { .. })
        ) || matches!(
            event.get::<ThaumEvent>(),
            Some(ThaumEvent::PhaseEnded { .. } | ThaumEvent::Stopped { .. })
        )
    })
}

/// The text a picture is sent with, for clients that show no images (Matrix `body`), in
/// the room's `language`, from the table's public snapshot entry: only what the room was
/// told.
pub fn caption(table: &Value, language: Language) -> String {
    let id = table.get("table").and_then(Value::as_u64).unwrap_or_default().to_string();
    let state = table.get("state").unwrap_or(&Value::Null);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let say = |id: &str, args: Args| locale::text(language, id, &args);
    match table.get("game").and_then(Value::as_str).unwrap_or_default() {
        "duel" => {
            let players: Vec<String> =
                state["players"].as_array().map(|p| p.iter().map(text).collect()).unwrap_or_default();
            let seated: Vec<String> = players
                .iter()
                .map(|p| {
                    let args =
                        Args::new().text("player", p.as_str()).text("wizard", text(&state["wizards"][p]));
                    say("board-duel-seat", args)
                })
                .collect();
            let seated = seated.join(&say("board-duel-against", Args::new()));
            let track = state["track"].as_i64().unwrap_or_default();
            let args =
                Args::new().text("table", id).text("seated", seated).text("track", track.abs().to_string());
            let leader = match track.signum() {
                1 => players.first(),
                -1 => players.get(1),
                _ => None,
            };
            let board = match leader {
                Some(leader) => say("board-duel-toward", args.text("leader", leader.as_str())),
                None => say("board-duel", args),
            };
            match state["winner"].as_str() {
                Some("draw") => format!("{board} {}", say("board-duel-draw", Args::new())),
                Some(winner) => {
                    format!("{board} {}", say("board-duel-won", Args::new().text("winner", winner)))
                }
                None => board,
            }
        }
        "thaum" => {
            let mut coins: Vec<(String, u64)> = state["players"]
                .as_object()
                .map(|p| {
                    p.iter()
                        .map(|(name, sheet)| (name.clone(), sheet["coins"].as_u64().unwrap_or(0)))
                        .collect()
                })
                .unwrap_or_default();
            coins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let coins: Vec<String> = coins
                .iter()
                .map(|(name, n)| {
                    say(
                        "board-thaum-coins",
                        Args::new().text("player", name.as_str()).text("coins", n.to_string()),
                    )
                })
                .collect();
            let number = |key: &str| state[key].as_u64().unwrap_or(0);
            // RULES: Phases are Roman numerals in English; the glossary writes digits in Chinese.
            let phase = match language {
                Language::En => roman(u32::try_from(number("phase")).unwrap_or(0)),
                _ => number("phase").to_string(),
            };
            let args = Args::new()
                .text("table", id)
                .text("season", number("season").to_string())
                .text("phase", phase)
                .text("instability", number("loop_instability").to_string())
                .text("coins", coins.join(&say("board-thaum-separator", Args::new())));
            say("board-thaum", args)
        }
        game => say("board-other", Args::new().text("game", game).text("table", id)),
    }
}

/// One picture to draw: a table's public snapshot entry and the rooms to show it in.
pub struct Job {
    /// The table.
    pub table: TableId,
    /// Its entry of the public snapshot, as JSON text (without a game's history).
    pub entry: String,
    /// The rooms that show pictures: each network's courier, the room, and the language
    /// its text is written in.
    pub rooms: Vec<(NetworkId, RoomId, Language)>,
    /// The name each player is shown under instead of their id (see [`named`]).
    pub names: Vec<(PlayerId, String)>,
}

/// `table`'s entry with each player id in its state (a value, or a key) written as the
/// name in `names`: the picture and its text show `alice`, not `@alice:example.org`.
pub fn named(mut table: Value, names: &[(PlayerId, String)]) -> Value {
    fn rename(value: &mut Value, names: &BTreeMap<&str, &str>) {
        match value {
            Value::String(text) => {
                if let Some(name) = names.get(text.as_str()) {
                    *text = (*name).to_owned();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| rename(item, names)),
            Value::Object(map) => {
                for (key, mut item) in std::mem::take(map) {
                    rename(&mut item, names);
                    map.insert(names.get(key.as_str()).map_or(key, |name| (*name).to_owned()), item);
                }
            }
            _ => {}
        }
    }
    let names: BTreeMap<&str, &str> = names
        .iter()
        .filter(|(id, name)| id.as_str() != name)
        .map(|(id, name)| (id.as_str(), name.as_str()))
        .collect();
    if !names.is_empty()
        && let Some(state) = table.get_mut("state")
    {
        rename(state, &names);
    }
    table
}

/// Draws pictures on a thread of its own and hands them to the couriers (see the module
/// doc). Dropping it ends the thread once the job at hand is done.
pub struct Painter {
    jobs: std_mpsc::Sender<Job>,
}

impl Painter {
    /// Starts the painter's thread, sending to `couriers`.
    pub fn start(couriers: BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>, metrics: Metrics) -> Painter {
        let (jobs, waiting) = std_mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("board-painter".to_owned())
            .spawn(move || paint(&waiting, &couriers, &metrics));
        if let Err(error) = spawned {
            tracing::error!(%error, "the board painter could not start; no pictures will be posted");
        }
        Painter { jobs }
    }

    /// Queues a picture; returns at once.
    pub fn post(&self, job: Job) {
        let _ = self.jobs.send(job);
    }
}

/// The painter's loop: takes every job waiting, keeps the latest of each table, draws
/// them in order.
fn paint(
    waiting: &std_mpsc::Receiver<Job>,
    couriers: &BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    metrics: &Metrics,
) {
    let board = Board::new();
    while let Ok(first) = waiting.recv() {
        let mut jobs = vec![first];
        jobs.extend(waiting.try_iter());
        let latest: BTreeMap<TableId, usize> =
            jobs.iter().enumerate().map(|(i, job)| (job.table, i)).collect();
        for (i, job) in jobs.into_iter().enumerate() {
            if latest.get(&job.table) == Some(&i) {
                draw(&board, job, couriers, metrics);
            }
        }
    }
}

fn draw(
    board: &Board,
    job: Job,
    couriers: &BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
    metrics: &Metrics,
) {
    let entry = match serde_json::from_str::<Value>(&job.entry) {
        Ok(entry) => named(entry, &job.names),
        Err(error) => {
            metrics.board_failure(BoardStage::Render);
            tracing::warn!(table = job.table, %error, "the board picture could not be drawn; the game goes on");
            return;
        }
    };
    // One picture per language among the rooms, its labels in that language.
    let mut pictures: BTreeMap<Language, Picture> = BTreeMap::new();
    for (_, _, language) in &job.rooms {
        if pictures.contains_key(language) {
            continue;
        }
        let started = Instant::now();
        match board.png_in(&entry, *language) {
            Ok(png) => {
                metrics.board_drawn(started.elapsed());
                let picture = Picture {
                    png: Arc::from(png.png),
                    width: png.width,
                    height: png.height,
                    replaces: format!("table {}", job.table),
                };
                pictures.insert(*language, picture);
            }
            Err(error) => {
                metrics.board_failure(BoardStage::Render);
                tracing::warn!(table = job.table, %error, "the board picture could not be drawn; the game goes on");
                return;
            }
        }
    }
    for (network, room, language) in job.rooms {
        let Some(courier) = couriers.get(&network) else { continue };
        let Some(picture) = pictures.get(&language) else { continue };
        let caption = caption(&entry, language);
        let message =
            Message { picture: Some(picture.clone()), ..Message::from(RichText::from(caption.as_str())) };
        let outbound = Outbound { network, to: Destination::Room(room), message };
        let _ = courier.send(Queued { id: -1, outbound });
    }
}
