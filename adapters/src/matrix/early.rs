//! Which rooms of a `/sync` response can be read before matrix-sdk has processed it.
//!
//! matrix-sdk's own work on a response (crypto bookkeeping, push rules for every event,
//! two SQLite commits) takes 2.5–3 ms, all of it before `sync_once` returns
//! (docs/benchmarks.md). A room whose update is nothing but plain messages needs none
//! of it: what the daemon is told of such a room and its senders is in the store
//! already, and a sync that brings it no state event changes none of that. So the sync
//! loop hands those messages over from the response as it came
//! (`Client::sync_once_request`, vendor/README.md), then lets matrix-sdk process it.
//!
//! A room qualifies when its timeline was not cut short (its gap must come first), its
//! update changes no state (no `state` section and no state event in the timeline) and
//! none of its events is encrypted. Whether the room itself is known, joined and
//! unencrypted is asked of the store by the caller.

use matrix_sdk::ruma::api::client::sync::sync_events::v3::JoinedRoom;
use matrix_sdk::ruma::events::AnySyncTimelineEvent;
use matrix_sdk::ruma::serde::Raw;

/// Whether a joined room's update is nothing but plain messages (see the module doc).
pub(super) fn plain_messages_only(update: &JoinedRoom) -> bool {
    !update.timeline.limited
        && update.state.is_empty()
        && update.timeline.events.iter().all(|event| !changes_state(event) && !encrypted(event))
}

/// Whether a timeline event is a state event (it has a `state_key`).
pub(super) fn changes_state(event: &Raw<AnySyncTimelineEvent>) -> bool {
    event.get_field::<String>("state_key").ok().flatten().is_some()
}

fn encrypted(event: &Raw<AnySyncTimelineEvent>) -> bool {
    event.get_field::<String>("type").ok().flatten().is_none_or(|kind| kind == "m.room.encrypted")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn message(n: u32) -> Value {
        json!({
            "type": "m.room.message",
            "event_id": format!("$m{n}"),
            "sender": "@alice:localhost",
            "origin_server_ts": 1,
            "content": { "msgtype": "m.text", "body": "!status" },
        })
    }

    fn room(update: Value) -> JoinedRoom {
        serde_json::from_value(update).expect("a joined room update")
    }

    #[test]
    fn a_room_with_only_messages_is_read_early() {
        let update = room(json!({ "timeline": { "events": [message(1), message(2)] } }));
        assert!(plain_messages_only(&update));
    }

    #[test]
    fn a_cut_short_timeline_waits_for_its_gap() {
        let update =
            room(json!({ "timeline": { "limited": true, "prev_batch": "p", "events": [message(1)] } }));
        assert!(!plain_messages_only(&update));
    }

    #[test]
    fn a_state_section_or_a_state_event_in_the_timeline_waits_for_matrix_sdk() {
        let member = json!({
            "type": "m.room.member",
            "state_key": "@bob:localhost",
            "event_id": "$join",
            "sender": "@bob:localhost",
            "origin_server_ts": 1,
            "content": { "membership": "join" },
        });
        let in_state =
            room(json!({ "state": { "events": [member] }, "timeline": { "events": [message(1)] } }));
        assert!(!plain_messages_only(&in_state));
        let in_timeline = room(json!({ "timeline": { "events": [message(1), member] } }));
        assert!(!plain_messages_only(&in_timeline));
    }

    #[test]
    fn an_encrypted_or_typeless_event_waits_for_matrix_sdk() {
        let encrypted = json!({
            "type": "m.room.encrypted",
            "event_id": "$e",
            "sender": "@alice:localhost",
            "origin_server_ts": 1,
            "content": { "algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "x", "session_id": "s" },
        });
        assert!(!plain_messages_only(&room(json!({ "timeline": { "events": [message(1), encrypted] } }))));
        let typeless = json!({ "event_id": "$t", "sender": "@alice:localhost", "content": {} });
        assert!(!plain_messages_only(&room(json!({ "timeline": { "events": [typeless] } }))));
    }
}
