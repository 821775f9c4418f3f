//! `/tables/{id}/events` and `/events`: server-sent events (`text/event-stream`). A
//! table's stream starts with
//! the table's `update` (its public entry) as it is, then sends one after each committed
//! move ([`super::feed`]) and a keep-alive comment whenever it has been quiet for the
//! keep-alive interval (less than the listener's idle timeout, which closes a silent
//! connection). `/`'s stream is the same with the index's counter for its `sequence`
//! ([`super::feed`]): it says that a shown table changed, never which or how.
//!
//! Bounded: at most `[http] max_event_streams` are open at once (more are answered 503,
//! saying so); each stream's task writes into a small channel of its own, so a client
//! that reads slowly holds only its own task, never the feed or the engine, and skips to
//! the latest update when it catches up. A stream ends when its client goes, when the
//! daemon stops, or when its table's room becomes hidden.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::body::{Bytes, Frame};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER};
use hyper::{Response, StatusCode};
use spellbridge_core::{NetworkId, RoomId};
use tokio::sync::{mpsc, watch};

use super::feed::Update;
use super::follow;
use super::page::Body;
use super::page::{failed, not_found, whole};
use super::shared::Site;
use super::streams::StreamSlot;
use crate::journal::TableId;

/// How many frames wait for a slow client before its task waits too.
const QUEUED: usize = 4;

/// A response body fed by a stream's task.
struct Frames(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Frames {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.get_mut().0.poll_recv(cx).map(|frame| frame.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// The answer to `/tables/{id}/events`.
pub async fn answer(site: &Site, id: TableId) -> Response<Body> {
    let place =
        match site.blocking(move |site| Ok(site.reader().table(id)?.map(|r| (r.network, r.room)))).await {
            Ok(Some(place)) if !site.hidden().hides(&place.0, &place.1) => place,
            Ok(_) => return not_found(spellbridge_core::Language::En),
            Err(error) => return failed(&error),
        };
    let Some(slot) = site.inner.streams.take() else { return too_many(site) };
    // Subscribe before reading, so a change committed meanwhile is not missed.
    let updates = site.inner.feed.subscribe(id);
    let first = match site.blocking(move |site| follow::current(site, id)).await {
        Ok(Update::Event(event)) => event,
        Ok(Update::Gone) => return not_found(spellbridge_core::Language::En),
        Err(error) => return failed(&error),
    };
    let (frames, receiver) = mpsc::channel(QUEUED);
    tokio::spawn(pump(site.clone(), place, first, updates, frames, slot));
    streaming(receiver)
}

/// The answer to `/events`: the index's counter now, then each time it changes.
pub async fn answer_index(site: &Site) -> Response<Body> {
    let Some(slot) = site.inner.streams.take() else { return too_many(site) };
    let updates = site.inner.feed.subscribe_index();
    let (frames, receiver) = mpsc::channel(QUEUED);
    tokio::spawn(pump_index(site.clone(), updates, frames, slot));
    streaming(receiver)
}

/// `/`'s `update` event for the index's counter `version`.
fn index_update(version: u64) -> Bytes {
    Bytes::from(format!(
        "event: update\nid: {version}\ndata: {{\"sequence\":{version},\"finished\":false}}\n\n"
    ))
}

/// `/`'s stream's task: the counter now, then each new value and the keep-alives, until
/// the client goes or the feed ends.
async fn pump_index(
    site: Site,
    mut updates: watch::Receiver<u64>,
    frames: mpsc::Sender<Bytes>,
    _slot: StreamSlot,
) {
    let keepalive = site.inner.keepalive;
    let first = *updates.borrow_and_update();
    let mut open = b"retry: 3000\n\n".to_vec();
    open.extend_from_slice(&index_update(first));
    if frames.send(Bytes::from(open)).await.is_err() {
        return;
    }
    let mut quiet = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    quiet.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let frame = tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() {
                    return;
                }
                quiet.reset();
                index_update(*updates.borrow_and_update())
            }
            _ = quiet.tick() => Bytes::from_static(b": keep-alive\n\n"),
        };
        if frames.send(frame).await.is_err() {
            return;
        }
    }
}

/// The 503 when `[http] max_event_streams` are open.
fn too_many(site: &Site) -> Response<Body> {
    tracing::debug!(max = site.inner.streams.max, "refused an event stream: too many open");
    let text = format!(
        "too many live pages are open: at most {} at once ([http] max_event_streams); reload in a moment\n",
        site.inner.streams.max
    );
    let mut refused = whole(StatusCode::SERVICE_UNAVAILABLE, Bytes::from(text), "text/plain; charset=utf-8");
    refused.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("5"));
    refused
}

/// A streaming answer fed by `receiver`, with the headers of an event stream.
fn streaming(receiver: mpsc::Receiver<Bytes>) -> Response<Body> {
    let mut response = Response::new(Frames(receiver).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache, no-transform"));
    headers.insert(HeaderName::from_static("x-accel-buffering"), HeaderValue::from_static("no"));
    headers.insert(HeaderName::from_static("x-content-type-options"), HeaderValue::from_static("nosniff"));
    response
}

/// One stream's task: the first update, then each new one and the keep-alives, until the
/// client goes (its body is dropped), the feed ends, or the table is hidden.
async fn pump(
    site: Site,
    place: (NetworkId, RoomId),
    first: Arc<str>,
    mut updates: watch::Receiver<Update>,
    frames: mpsc::Sender<Bytes>,
    _slot: StreamSlot,
) {
    let keepalive = site.inner.keepalive;
    let open = format!("retry: 3000\n\n{first}");
    if frames.send(Bytes::from(open)).await.is_err() {
        return;
    }
    // A receiver starts with the value it subscribed to as seen: any update published
    // since is `changed`, and one the first frame already showed is skipped below.
    let mut last = first;
    let mut quiet = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    quiet.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let frame = tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() {
                    return;
                }
                let update = updates.borrow_and_update().clone();
                match update {
                    Update::Event(event) if event != last => {
                        last = event.clone();
                        quiet.reset();
                        Bytes::from(event.to_string())
                    }
                    Update::Event(_) => continue,
                    Update::Gone => return,
                }
            }
            _ = quiet.tick() => {
                if site.hidden().hides(&place.0, &place.1) {
                    return;
                }
                Bytes::from_static(b": keep-alive\n\n")
            }
        };
        if frames.send(frame).await.is_err() {
            return;
        }
    }
}

/// The keep-alive interval of a stream (tests).
pub fn keepalive(site: &Site) -> Duration {
    site.inner.keepalive
}

impl Site {
    /// How many event streams are open now.
    pub fn event_streams(&self) -> usize {
        self.inner.streams.open()
    }
}
