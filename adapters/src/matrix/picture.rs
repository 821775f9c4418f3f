//! Board pictures in Matrix rooms. A message with a [`Picture`] is uploaded (encrypted in
//! an encrypted room, by matrix-sdk) and sent as `m.image` with its width, height, size
//! and mimetype (`image/png`), the message's text as the `body` fallback for clients that
//! show no images. Then the picture of the same thing ([`Picture::replaces`], e.g.
//! `table 7`) that the bot posted last in that room is redacted, so the room keeps one.
//!
//! The last picture's event id per room and thing is kept in the store directory
//! (`pictures.json`, written atomically like the rest of the store), so a restart still
//! redacts it. A redaction that fails is logged and forgotten: the room then shows two
//! pictures, which is harmless.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use matrix_sdk::Room;
use matrix_sdk::attachment::{AttachmentConfig, AttachmentInfo, BaseImageInfo};
use matrix_sdk::ruma::events::room::message::TextMessageEventContent;
use matrix_sdk::ruma::{EventId, TransactionId, UInt};
use spellbridge_core::{Message, Picture, TransportError};

use super::store::{read_optional, write_atomically};
use super::transport::{Shared, lock};

/// Room id → what a picture shows → the event id of the bot's last picture of it there.
type Last = BTreeMap<String, BTreeMap<String, String>>;

/// The last picture of each thing in each room, as kept in `pictures.json`.
pub(super) struct Pictures {
    path: PathBuf,
    /// Read from the file on first use.
    last: Mutex<Option<Last>>,
}

impl Pictures {
    /// The pictures remembered in `path` (read when first needed).
    pub(super) fn new(path: PathBuf) -> Self {
        Pictures { path, last: Mutex::new(None) }
    }

    /// Notes `event` as the picture of `thing` in `room`; returns the one it replaces.
    fn replace(&self, room: &str, thing: &str, event: &str) -> Option<String> {
        let mut last = lock(&self.last);
        let last = last.get_or_insert_with(|| {
            let text = read_optional(&self.path).ok().flatten().unwrap_or_default();
            serde_json::from_str(&text).unwrap_or_default()
        });
        let previous = last.entry(room.to_owned()).or_default().insert(thing.to_owned(), event.to_owned());
        let text = serde_json::to_string(&*last).unwrap_or_default();
        if let Err(error) = write_atomically(&self.path, text.as_bytes()) {
            tracing::warn!(%error, "could not keep the board picture's event id; after a restart the previous picture stays");
        }
        previous
    }
}

/// Sends `message`'s picture to `room` as `m.image` and redacts the previous picture of the
/// same thing there (see the module doc).
pub(super) async fn send(
    shared: &Shared,
    room: &Room,
    message: &Message,
    picture: &Picture,
) -> Result<(), TransportError> {
    let info = BaseImageInfo {
        width: Some(UInt::from(picture.width)),
        height: Some(UInt::from(picture.height)),
        size: UInt::new(picture.png.len() as u64),
        blurhash: None,
        is_animated: Some(false),
    };
    let body = message.text.plain();
    let transaction = TransactionId::new();
    let png = picture.png.to_vec();
    let sent = shared
        .with_retry("send a board picture", || {
            let config = AttachmentConfig::new()
                .txn_id(transaction.clone())
                .info(AttachmentInfo::Image(info.clone()))
                .caption(Some(TextMessageEventContent::plain(body.clone())));
            room.send_attachment("board.png", &mime::IMAGE_PNG, png.clone(), config).into_future()
        })
        .await?;
    let previous =
        shared.pictures.replace(room.room_id().as_str(), &picture.replaces, sent.event_id.as_str());
    let Some(previous) = previous.and_then(|id| EventId::parse(id).ok()) else { return Ok(()) };
    let transaction = TransactionId::new();
    let redacted = shared
        .with_retry("redact the previous board picture", || async {
            // No reason: clients show one to every reader, in no room's language (issue 31).
            room.redact(&previous, None, Some(transaction.clone())).await.map_err(Into::into)
        })
        .await;
    if let Err(error) = redacted {
        tracing::warn!(network = %shared.options.network, room = %room.room_id(), event = %previous, %error, "could not redact the previous board picture");
    }
    Ok(())
}
