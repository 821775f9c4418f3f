//! The load step that gives a database's player ids their network (issue 13).
//!
//! Releases before it named an IRC player by their bare nick or account (`dave`), so the
//! same nick on two networks was one player. Now such an id names its network
//! (`libera:dave`); Matrix ids (`@dave:example.org`) and the console's names stay as
//! they are. Schema migration 5 marks a database that already had games
//! (`meta.player_ids = 'bare'`); the first load or `verify` of it rewrites every journal
//! entry's player ids and rebuilds every table's snapshot by replaying the rewritten
//! journal and sealed anew (see [`super::seal`]), in one transaction, then removes the mark.
//!
//! Which network a bare id belongs to is read from the journal itself: the network where
//! that identity spoke as itself (its first `Home` entry), else the network of the first
//! table or challenge it was part of. Only the arguments a game's grammar declares as
//! players ([`spellbridge_core::PlayerArgument`]) are rewritten inside commands, so a game
//! word that happens to be someone's nick stays as it was.

use std::collections::BTreeMap;

use rusqlite::params;
use spellbridge_core::grammar;
use spellbridge_core::{NetworkId, PlayerId, Registry};

use super::{SqliteStore, StoreError, classify, seal, sealed, to_json};
use crate::identity::CONSOLE_NETWORK;
use crate::identity::is_global_id;
use crate::journal::{Entry, SeatRecord, TableId};
use crate::router::{Router, RouterConfig};

/// The mark schema migration 5 leaves on a database whose player ids are bare.
pub const MARK: &str = "player_ids";

/// True when the database still has bare player ids.
pub fn needs_upgrade(store: &SqliteStore) -> Result<bool, StoreError> {
    Ok(store.meta(MARK)?.as_deref() == Some("bare"))
}

/// Rewrites the journal's player ids and rebuilds every snapshot from it, in one
/// transaction; returns the router the rewritten journal replays to.
pub fn upgrade(store: &SqliteStore, registry: Registry, options: RouterConfig) -> Result<Router, StoreError> {
    let path = store.path().to_path_buf();
    let fail = |e| classify(&path, e);
    // Each row: its id, its entry, and what it announced (kept as it was).
    let rows: Vec<(i64, Entry, Vec<u8>)> = {
        let mut statement = store
            .connection()
            .prepare("SELECT id, CAST(entry AS BLOB), CAST(events AS BLOB) FROM journal ORDER BY id")
            .map_err(fail)?;
        let texts = statement
            .query_map([], |row| {
                let bytes = |i| row.get::<_, Option<Vec<u8>>>(i).map(Option::unwrap_or_default);
                Ok((row.get::<_, i64>(0)?, bytes(1)?, bytes(2)?))
            })
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        texts
            .into_iter()
            .map(|(id, text, events)| {
                serde_json::from_slice::<Entry>(&text).map(|entry| (id, entry, events)).map_err(|e| {
                    StoreError::BadRow { path: path.clone(), detail: format!("journal row {id}: {e}") }
                })
            })
            .collect::<Result<_, _>>()?
    };
    let entries: Vec<Entry> = rows.iter().map(|(_, entry, _)| entry.clone()).collect();
    let ids = scoped_ids(&entries);
    let rewritten: Vec<(i64, Entry, Vec<u8>)> = rows
        .into_iter()
        .map(|(id, entry, events)| (id, rewrite(entry, &ids, &entries, &registry), events))
        .collect();
    let mut router = Router::new(registry, options);
    router.add_keys(store.dice_keys(None)?);
    for (_, entry, _) in &rewritten {
        router.replay(entry).map_err(|source| StoreError::Replay { path: path.clone(), source })?;
    }
    let transaction = store.connection().unchecked_transaction().map_err(fail)?;
    {
        let mut journal =
            transaction.prepare("UPDATE journal SET entry = ?2, player = ?3 WHERE id = ?1").map_err(fail)?;
        // Each table's digest over its rewritten rows, and its last row's id.
        let mut digests: BTreeMap<TableId, (seal::Digest, i64)> = BTreeMap::new();
        for (id, entry, events) in &rewritten {
            let text = to_json(entry);
            journal.execute(params![id, text, row_player(entry)]).map_err(fail)?;
            if let Some(table) = entry.table() {
                let (digest, last) = digests.entry(table).or_insert((seal::EMPTY, 0));
                *digest = seal::extend(digest, text.as_bytes(), events);
                *last = *id;
            }
        }
        // Every snapshot rebuilt from the rewritten journal, sealed with its new digest.
        for table in router.table_ids().collect::<Vec<_>>() {
            if let Some(stored) = router.stored_table(table, 0) {
                let (digest, last) = digests.get(&table).copied().unwrap_or((seal::EMPTY, 0));
                sealed::write_snapshot(&transaction, table, &stored, &digest, last).map_err(fail)?;
            }
        }
        transaction.execute("DELETE FROM meta WHERE key = ?1", [MARK]).map_err(fail)?;
    }
    transaction.commit().map_err(fail)?;
    tracing::info!(path = %path.display(), players = ids.len(), "player ids now name their network");
    Ok(router)
}

/// The journal's `player` column for an entry (as [`super::Store::commit`] writes it).
fn row_player(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::Acted { actor, .. } => Some(actor.as_str()),
        Entry::Challenged { challenger, .. } => Some(challenger.as_str()),
        Entry::Linked { identity, .. } => Some(identity.as_str()),
        Entry::Unlinked { player }
        | Entry::Home { player, .. }
        | Entry::LinkCode { player, .. }
        | Entry::Ignored { player }
        | Entry::Unignored { player }
        | Entry::PlayerLanguage { player, .. } => Some(player.as_str()),
        Entry::Opened { .. }
        | Entry::Fired { .. }
        | Entry::Keyed { .. }
        | Entry::Revealed { .. }
        | Entry::ChallengeClosed { .. }
        | Entry::LinkCodeClosed { .. }
        | Entry::RoomLanguage { .. } => None,
    }
}

/// Each bare IRC player id in the journal, and the id that names its network.
pub fn scoped_ids(entries: &[Entry]) -> BTreeMap<PlayerId, PlayerId> {
    let mut spoke_on: BTreeMap<&PlayerId, &NetworkId> = BTreeMap::new();
    let mut took_part_on: BTreeMap<&PlayerId, &NetworkId> = BTreeMap::new();
    // A network where someone spoke under a global id (a Matrix id) is a network of
    // global ids: a bare name met only there names nobody's identity.
    let mut global: Vec<&NetworkId> = Vec::new();
    for entry in entries {
        match entry {
            Entry::Home { player, network, identity, .. } => {
                if is_global_id(identity.as_str()) {
                    global.push(network);
                } else if identity == player {
                    spoke_on.entry(player).or_insert(network);
                }
            }
            Entry::Opened { network, seats, .. } => {
                for seat in seats {
                    took_part_on.entry(&seat.player).or_insert(network);
                }
            }
            Entry::Challenged { network, challenger, opponent, .. } => {
                took_part_on.entry(challenger).or_insert(network);
                took_part_on.entry(opponent).or_insert(network);
            }
            _ => {}
        }
    }
    let bare = |player: &PlayerId| !is_global_id(player.as_str()) && !player.as_str().contains(':');
    let mut ids = BTreeMap::new();
    for player in spoke_on.keys().chain(took_part_on.keys()) {
        let network = spoke_on.get(player).or_else(|| took_part_on.get(player));
        let Some(network) = network.filter(|n| n.as_str() != CONSOLE_NETWORK && !global.contains(n)) else {
            continue;
        };
        if bare(player) {
            ids.insert((*player).clone(), PlayerId::new(format!("{network}:{player}")));
        }
    }
    ids
}

/// One entry with its player ids rewritten. Inside a command only the arguments the
/// table's game declares as players change.
fn rewrite(entry: Entry, ids: &BTreeMap<PlayerId, PlayerId>, all: &[Entry], registry: &Registry) -> Entry {
    let id = |player: PlayerId| ids.get(&player).cloned().unwrap_or(player);
    match entry {
        // A journal with bare ids is older than events; if one has some anyway they name
        // the bare ids, and ids cannot be told from game words in them (a player called
        // `fire`): they are dropped, and replay is not compared with them.
        Entry::Opened { table, game, network, room, seed, commitment, seats, now, opening, events: _ } => {
            Entry::Opened {
                // Only the seats' ids: another string in the state may equal some nick.
                opening: rewrite_json(
                    opening,
                    &ids.iter()
                        .filter(|(bare, _)| seats.iter().any(|s| &s.player == *bare))
                        .map(|(b, s)| (b.clone(), s.clone()))
                        .collect(),
                ),
                seats: seats
                    .into_iter()
                    .map(|s| SeatRecord { player: id(s.player), choice: s.choice, guest: s.guest })
                    .collect(),
                table,
                game,
                network,
                room,
                seed,
                commitment,
                now,
                events: Vec::new(),
            }
        }
        Entry::Acted {
            table, sequence, actor, command, typed, private, role, now, dice_seed, draws, ..
        } => {
            let command = rewrite_command(&command, game_of(all, table), ids, registry);
            Entry::Acted {
                actor: id(actor),
                command,
                // The text's players were rewritten: replay reads it.
                parsed: None,
                table,
                sequence,
                typed,
                private,
                role,
                now,
                dice_seed,
                draws,
                events: Vec::new(),
            }
        }
        Entry::Challenged { network, room, challenger, opponent, wizard, expires, guest, game } => {
            Entry::Challenged {
                challenger: id(challenger),
                opponent: id(opponent),
                network,
                room,
                wizard,
                expires,
                guest,
                game,
            }
        }
        Entry::Linked { network, identity, player } => {
            Entry::Linked { player: id(player), network, identity }
        }
        Entry::Unlinked { player } => Entry::Unlinked { player: id(player) },
        Entry::Ignored { player } => Entry::Ignored { player: id(player) },
        Entry::Unignored { player } => Entry::Unignored { player: id(player) },
        Entry::PlayerLanguage { player, language } => Entry::PlayerLanguage { player: id(player), language },
        Entry::Home { player, network, identity, name } => {
            Entry::Home { player: id(player), network, identity, name }
        }
        Entry::LinkCode { code, player, network, identity, expires } => {
            Entry::LinkCode { player: id(player), code, network, identity, expires }
        }
        Entry::Fired { table, sequence, at, dice_seed, draws, .. } => {
            Entry::Fired { table, sequence, at, dice_seed, draws, events: Vec::new() }
        }
        other @ (Entry::Keyed { .. }
        | Entry::Revealed { .. }
        | Entry::ChallengeClosed { .. }
        | Entry::LinkCodeClosed { .. }
        | Entry::RoomLanguage { .. }) => other,
    }
}

/// The game of a table, from its `Opened` entry.
fn game_of(entries: &[Entry], table: TableId) -> Option<&str> {
    entries.iter().find_map(|entry| match entry {
        Entry::Opened { table: t, game, .. } if *t == table => Some(game.as_str()),
        _ => None,
    })
}

/// A resolved command with the ids in its player arguments rewritten.
fn rewrite_command(
    command: &str,
    game: Option<&str>,
    ids: &BTreeMap<PlayerId, PlayerId>,
    registry: &Registry,
) -> String {
    let Some(plugin) = game.and_then(|game| registry.get(game)) else { return command.to_owned() };
    let Ok(mut parsed) = grammar::read(plugin.commands(), command) else { return command.to_owned() };
    let mut changed = false;
    for (_, id) in parsed.players_mut() {
        if let Some(scoped) = ids.get(id) {
            *id = scoped.clone();
            changed = true;
        }
    }
    if changed { parsed.text() } else { command.to_owned() }
}

/// A table's opening state with its seats' ids rewritten (object keys and string values
/// equal to one).
fn rewrite_json(value: serde_json::Value, ids: &BTreeMap<PlayerId, PlayerId>) -> serde_json::Value {
    use serde_json::Value;
    let id = |text: String| ids.get(&PlayerId::new(text.as_str())).map_or(text, |p| p.as_str().to_owned());
    match value {
        Value::String(text) => Value::String(id(text)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| rewrite_json(v, ids)).collect()),
        Value::Object(fields) => {
            Value::Object(fields.into_iter().map(|(k, v)| (id(k), rewrite_json(v, ids))).collect())
        }
        other => other,
    }
}
