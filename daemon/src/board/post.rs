//! When a table's picture is posted, what it says to clients that show no images, and
//! the painter that draws it away from the daemon's loop.
//!
//! A picture is posted when a table's own events end a part of its game (a Duel round
//! settled, a Thaum phase ended: [`redraws`], as the game says), and on `!board`. The
//! router only notes the table; `serve` hands the [`Painter`] the table's public snapshot
//! entry and the rooms that show pictures, and goes on: the painter's one thread renders
//! each job in order (a job whose table has a newer job waiting is skipped: the room
//! would only see it replaced) and hands the picture, with its text fallback
//! ([`Board::caption`]), to each room's courier behind the text already queued there. A
//! picture that fails to render is logged and counted, and the game goes on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use serde_json::Value;
use spellbridge_core::{
    Destination, Event, Language, Message, NetworkId, Picture, PlayerId, Registry, RichText, RoomId,
};
use tokio::sync::mpsc;

use super::Board;
use crate::games::Games;
use crate::journal::TableId;
use crate::metrics::{BoardStage, Metrics};
use crate::store::Queued;
use crate::turn::Outbound;

/// True when a table's `events` end a part of its game worth a new picture (a Duel round
/// settled, a Thaum phase ended: each game says, [`GamePlugin::redraws`]).
///
/// [`GamePlugin::redraws`]: spellbridge_core::GamePlugin::redraws
pub fn redraws(registry: &Registry, events: &[Event]) -> bool {
    registry.iter().any(|game| game.redraws(events))
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
    /// Starts the painter's thread, drawing the games `games` holds at each picture (a
    /// reload's too) and sending to `couriers`.
    pub fn start(
        couriers: BTreeMap<NetworkId, mpsc::UnboundedSender<Queued>>,
        metrics: Metrics,
        games: Games,
    ) -> Painter {
        let (jobs, waiting) = std_mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("board-painter".to_owned())
            .spawn(move || paint(&waiting, &couriers, &metrics, games));
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
    games: Games,
) {
    let board = Board::over(games);
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
        let caption = board.caption(&entry, language);
        let message =
            Message { picture: Some(picture.clone()), ..Message::from(RichText::from(caption.as_str())) };
        let outbound = Outbound { network, to: Destination::Room(room), message };
        let _ = courier.send(Queued { id: -1, outbound });
    }
}
