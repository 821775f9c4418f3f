//! The `[[bridge]]` sections: each bridge's rooms checked against the configured
//! networks (a room belongs to one bridge, and may say the language it is told in), and
//! how its chat is relayed (`relay_lines`, `edits`, `speaker_rate`). Errors are the
//! message alone; [`Settings::parse_with`](super::Settings::parse_with) adds the file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use spellbridge_adapters::network::Network;
use spellbridge_core::{NetworkId, RoomId};

use super::{BridgeSettings, LanguageSettings, language, raw};
use crate::relay::Edits;
use crate::relay::rate::SpeakerRate;

/// Which bridge each `(network, room)` is in.
pub(super) type Bridged = BTreeMap<(String, String), String>;

/// Reads every `[[bridge]]` in file order, with the configured network `names` and
/// `networks`; a room's `language` goes into `languages`.
pub(super) fn read(
    list: Vec<raw::Bridge>,
    names: &BTreeSet<String>,
    networks: &[Arc<dyn Network>],
    languages: &mut LanguageSettings,
) -> Result<(Vec<BridgeSettings>, Bridged), String> {
    let mut bridged = Bridged::new();
    let mut bridges = Vec::new();
    for bridge in list {
        bridges.push(one(bridge, names, networks, &mut bridged, languages)?);
    }
    Ok((bridges, bridged))
}

/// One `[[bridge]]`: its rooms, then how it relays.
fn one(
    bridge: raw::Bridge,
    names: &BTreeSet<String>,
    networks: &[Arc<dyn Network>],
    bridged: &mut Bridged,
    languages: &mut LanguageSettings,
) -> Result<BridgeSettings, String> {
    let at = |what: String| format!("[[bridge]] `{}`: {what}", bridge.name);
    if bridge.rooms.len() < 2 {
        return Err(at(
            "a bridge links two or more rooms, e.g. rooms = [{ network = \"libera\", room = \"#magic\" }, \
             { network = \"matrix\", room = \"!abc:example.org\" }]"
                .to_owned(),
        ));
    }
    let mut rooms = Vec::new();
    for room in bridge.rooms {
        rooms.push(room_of(&bridge.name, room, names, networks, bridged, languages)?);
    }
    let relay_lines = bridge.relay_lines.unwrap_or(crate::relay::DEFAULT_LINES);
    if relay_lines == 0 {
        return Err(at(
            "relay_lines = 0 would relay nothing of a message; give at least 1 (the default is 5), \
             or set relay = false to relay no chat"
                .to_owned(),
        ));
    }
    let edits = edits(bridge.edits.as_deref()).map_err(at)?;
    let speaker_rate = speaker_rate(bridge.speaker_rate).map_err(at)?;
    Ok(BridgeSettings {
        speaker_rate,
        name: bridge.name,
        rooms,
        relay: bridge.relay.unwrap_or(true),
        relay_lines,
        edits,
    })
}

/// One room of the bridge `name`: on a configured network, a room that network can
/// bridge, in no other bridge, and told in one language.
fn room_of(
    name: &str,
    room: raw::BridgeRoom,
    names: &BTreeSet<String>,
    networks: &[Arc<dyn Network>],
    bridged: &mut Bridged,
    languages: &mut LanguageSettings,
) -> Result<(NetworkId, RoomId), String> {
    let at = |what: String| format!("[[bridge]] `{name}`: {what}");
    if !names.contains(&room.network) {
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        return Err(at(format!(
            "no network is called `{}`; the networks are: {}",
            room.network,
            known.join(", ")
        )));
    }
    if let Some(network) = networks.iter().find(|n| n.name() == room.network) {
        network.check_bridge_room(&room.room).map_err(at)?;
    }
    if let Some(other) = bridged.insert((room.network.clone(), room.room.clone()), name.to_owned()) {
        return Err(at(format!(
            "{} on {} is already in bridge `{other}`; a room belongs to one bridge",
            room.room, room.network
        )));
    }
    let place = (NetworkId::new(room.network), RoomId::new(room.room));
    if let Some(value) = &room.language {
        let at = format!("[[bridge]] `{name}`: the language of {} on {}", place.1, place.0);
        let language = language::read(value, &at)?;
        if let Some(other) = languages.rooms.insert(place.clone(), language)
            && other != language
        {
            return Err(format!(
                "{at} is {language}, but its network's `languages` says {other}; say it once"
            ));
        }
    }
    Ok(place)
}

/// `edits`: how a Matrix edit reaches the other rooms (default "diff").
fn edits(word: Option<&str>) -> Result<Edits, String> {
    match word {
        None => Ok(Edits::Diff),
        Some(word) => Edits::parse(word).ok_or_else(|| {
            format!(
                "edits = \"{word}\" is not a way to relay edits; write \"diff\" (the default: `s/old/new/`), \
                 \"resend\" (the whole new text) or \"off\""
            )
        }),
    }
}

/// `speaker_rate`: how fast one speaker's chat is relayed (`None`: no limit).
fn speaker_rate(rate: Option<raw::SpeakerRate>) -> Result<Option<SpeakerRate>, String> {
    match rate {
        None | Some(raw::SpeakerRate::On(true)) => Ok(Some(SpeakerRate::default())),
        Some(raw::SpeakerRate::On(false)) => Ok(None),
        Some(raw::SpeakerRate::Rate { burst, every }) if burst >= 1 && (1..=3600).contains(&every) => {
            Ok(Some(SpeakerRate { burst, every_secs: every }))
        }
        Some(raw::SpeakerRate::Rate { burst, every }) => Err(format!(
            "speaker_rate = {{ burst = {burst}, every = {every} }} is not a rate; give burst at least 1 \
             and every from 1 to 3600 seconds, e.g. {{ burst = 5, every = 1 }} (the default), or \
             speaker_rate = false for no limit"
        )),
    }
}
