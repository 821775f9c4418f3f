//! The appservice API's own listener (issue 17, item 2), on `listen`: HTTP/1.1 on hyper,
//! which the build already has. The homeserver pushes the events of the rooms the bot
//! is in as transactions, and asks about users and aliases:
//!
//! - `PUT /_matrix/app/v1/transactions/{txnId}`: the events are read with ruma's
//!   appservice types and handed to the daemon through the same path as the `/sync`
//!   loop's ([`hand_over`](super::super::sync)), which drops what a ghost said. A
//!   transaction already taken in ([`SeenTransactions`]) is acknowledged unread; a new
//!   one is noted once its events are handed over, then acknowledged. The daemon drops a
//!   message whose event id it has committed, so the same event from the bot's own
//!   `/sync` (which still runs: it decrypts encrypted rooms and keeps the bot's session
//!   and device) or from a transaction sent again is applied once.
//! - `GET /_matrix/app/v1/users/{userId}`: a ghost's id is registered and answered 200;
//!   any other user 404.
//! - `GET /_matrix/app/v1/rooms/{roomAlias}`: 404 (the registration claims no aliases).
//! - `POST /_matrix/app/v1/ping`: 200.
//!
//! Every request must carry the registration's `hs_token` ([`api::authorize`]): 401
//! without one, 403 with another, and then nothing of it is read. Errors are ruma's
//! Matrix error bodies.
//!
//! No client can hold the listener (issue 29, item 6): at most [`MOST_CONNECTIONS`] are
//! served at once (a homeserver sends one transaction at a time; more are answered 503
//! and closed at once), and a connection that has not sent a whole request head within
//! [`READ_TIMEOUT`] — a new one, or a kept-alive one between requests — is closed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use matrix_sdk::deserialized_responses::TimelineEvent;
use matrix_sdk::ruma::api::appservice::event::push_events;
use matrix_sdk::ruma::api::appservice::ping::send_ping;
use matrix_sdk::ruma::api::appservice::query::query_user_id;
use matrix_sdk::ruma::api::error::{ErrorBody, ErrorKind, StandardErrorBody};
use matrix_sdk::ruma::api::{IncomingRequest, OutgoingResponse};
use matrix_sdk::ruma::events::room::member::MembershipState;
use matrix_sdk::ruma::{OwnedRoomId, OwnedUserId, UserId};
use spellbridge_core::Inbound;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::AppserviceOptions;
use super::api::{self, Auth, Route};
use super::login;
use super::txns::SeenTransactions;
use crate::matrix::inbound::{self, Read};
use crate::matrix::sync::hand_over;
use crate::matrix::transport::Shared;

/// The largest transaction body read (Synapse sends at most 100 events per transaction).
const MOST_BODY: usize = 32 * 1024 * 1024;
/// How long a request head may take to arrive (and a kept-alive connection may sit idle).
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// The most connections served at once.
const MOST_CONNECTIONS: usize = 32;
/// The whole answer to a connection over [`MOST_CONNECTIONS`].
const REFUSAL: &str = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
    content-length: 70\r\nretry-after: 1\r\nconnection: close\r\n\r\n\
    {\"errcode\":\"M_LIMIT_EXCEEDED\",\"error\":\"too many connections at once\"}\n";
/// The pause before trying to bind the listener again.
const BIND_RETRY: Duration = Duration::from_secs(5);

/// What the listener's requests need.
pub(in crate::matrix) struct Api {
    pub(in crate::matrix) shared: Arc<Shared>,
    pub(in crate::matrix) inbound: mpsc::Sender<Inbound>,
    pub(in crate::matrix) txns: Arc<dyn SeenTransactions>,
    pub(in crate::matrix) options: AppserviceOptions,
}

/// Listens on `listen` until shutdown (binding again after a pause while the address is
/// taken).
pub(in crate::matrix) async fn serve(api: Arc<Api>) {
    let shutdown = api.shared.shutdown.clone();
    let network = api.shared.options.network.clone();
    let listener = loop {
        match TcpListener::bind(api.options.listen).await {
            Ok(listener) => break listener,
            Err(error) => {
                tracing::error!(network = %network, listen = %api.options.listen, %error, "cannot listen for the homeserver (appservice API); trying again");
                if !api.shared.pause(BIND_RETRY).await {
                    return;
                }
            }
        }
    };
    tracing::info!(network = %network, listen = %api.options.listen, "serving the appservice API");
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) if connections.len() >= MOST_CONNECTIONS => {
                    tracing::debug!(network = %network, %peer, most = MOST_CONNECTIONS, "refused an appservice API connection: too many open");
                    // One write into an empty socket buffer: it never waits on the client.
                    let _ = stream.try_write(REFUSAL.as_bytes());
                }
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let api = api.clone();
                    connections.spawn(async move {
                        let service = service_fn(move |request| {
                            let api = api.clone();
                            async move { Ok::<_, Infallible>(api.respond(request).await) }
                        });
                        let served = http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(READ_TIMEOUT)
                            .serve_connection(TokioIo::new(stream), service);
                        if let Err(error) = served.await {
                            tracing::debug!(%error, "an appservice API connection ended with an error");
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "the appservice API could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
    connections.shutdown().await;
}

impl Api {
    async fn respond(&self, request: Request<Incoming>) -> Response<Full<Bytes>> {
        let route = api::route(request.method(), request.uri().path());
        if route == Route::Unknown {
            return error(StatusCode::NOT_FOUND, ErrorKind::Unrecognized, "not an appservice API endpoint");
        }
        match api::authorize(request.headers(), request.uri().query(), &self.options.hs_token) {
            Auth::Granted => {}
            Auth::Missing => {
                return error(StatusCode::UNAUTHORIZED, ErrorKind::Unauthorized, "no homeserver token");
            }
            Auth::Wrong => {
                return error(StatusCode::FORBIDDEN, ErrorKind::Forbidden, "not the homeserver's token");
            }
        }
        match route {
            Route::Transaction(txn) => self.transaction(request, &txn).await,
            Route::User(user) => self.user(request, &user).await,
            Route::Room(_) => {
                error(StatusCode::NOT_FOUND, ErrorKind::NotFound, "this bridge claims no room aliases")
            }
            Route::Ping => match read::<send_ping::v1::Request>(request, &[]).await {
                Ok(_) => ok(send_ping::v1::Response::new()),
                Err(response) => response,
            },
            Route::Unknown => {
                error(StatusCode::NOT_FOUND, ErrorKind::Unrecognized, "not an appservice API endpoint")
            }
        }
    }

    async fn transaction(&self, request: Request<Incoming>, txn: &str) -> Response<Full<Bytes>> {
        let network = self.shared.options.network.as_str();
        match self.txns.seen(network, txn) {
            Ok(true) => {
                tracing::debug!(
                    network,
                    txn,
                    "an appservice transaction taken in before; acknowledged again"
                );
                return ok(push_events::v1::Response::new());
            }
            Ok(false) => {}
            Err(reason) => {
                tracing::error!(network, txn, %reason, "cannot read the appservice transactions taken in; the homeserver will send it again");
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorKind::Unknown,
                    "cannot read the transactions taken in",
                );
            }
        }
        let pushed = match read::<push_events::v1::Request>(request, &[txn]).await {
            Ok(pushed) => pushed,
            Err(response) => return response,
        };
        let handed = self.hand_over_all(&pushed.events).await;
        tracing::debug!(
            network,
            txn,
            events = pushed.events.len(),
            handed,
            "took in an appservice transaction"
        );
        if let Err(reason) = self.txns.note(network, txn) {
            // Its events' ids guard against applying them twice when it comes again.
            tracing::warn!(network, txn, %reason, "cannot note an appservice transaction as taken in");
        }
        ok(push_events::v1::Response::new())
    }

    /// Hands over every message of the transaction from a room the bot is in (not the
    /// bot's own, not a ghost's); how many.
    async fn hand_over_all(
        &self,
        events: &[matrix_sdk::ruma::serde::Raw<matrix_sdk::ruma::events::AnyTimelineEvent>],
    ) -> usize {
        let Some(client) = self.shared.client() else {
            tracing::debug!("a transaction before the bot logged in: its events come with the first sync");
            return 0;
        };
        let Some(own) = client.user_id().map(ToOwned::to_owned) else { return 0 };
        let mut handed = 0;
        for raw in events {
            let Ok(Some(room_id)) = raw.get_field::<OwnedRoomId>("room_id") else { continue };
            let Ok(Some(sender)) = raw.get_field::<OwnedUserId>("sender") else { continue };
            // A member event the sync has not stored yet: a third member spoils a private
            // chat before the messages after it are handed over.
            if let Some((user, membership, name)) = member_event(raw)
                && user != own
                && client.get_room(&room_id).is_some()
            {
                self.shared.present.member_event(&room_id, &user, &membership, name.as_deref());
                self.shared.facts.member_event(&room_id, user, membership);
            }
            if sender == own {
                continue;
            }
            let Some(room) = client.get_room(&room_id) else {
                tracing::trace!(room = %room_id, "an event of a room the bot is not in");
                continue;
            };
            let event = TimelineEvent::from_plaintext(raw.clone().cast_unchecked());
            if let Read::Message(received) = inbound::read(&event, &own) {
                hand_over(&self.shared, &self.inbound, &room, *received).await;
                handed += 1;
            }
        }
        handed
    }

    async fn user(&self, request: Request<Incoming>, segment: &str) -> Response<Full<Bytes>> {
        let query = match read::<query_user_id::v1::Request>(request, &[segment]).await {
            Ok(query) => query,
            Err(response) => return response,
        };
        let user: &UserId = &query.user_id;
        if !self.options.ghosts.is_ghost(user.as_str()) {
            return error(StatusCode::NOT_FOUND, ErrorKind::NotFound, "not one of this bridge's ghosts");
        }
        let sender = match UserId::parse(&self.shared.options.user_id)
            .and_then(|bot| login::sender(&bot, &self.options.sender_localpart))
        {
            Ok(sender) => sender,
            Err(_) => {
                return error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorKind::Unknown,
                    "the appservice's sender user id is wrong",
                );
            }
        };
        let registered = async {
            let client =
                login::appservice_client(&self.shared.options.homeserver, &sender, &self.options.as_token)
                    .await?;
            login::register(&client, user.localpart()).await
        };
        match registered.await {
            Ok(()) => {
                tracing::info!(network = %self.shared.options.network, ghost = %user, "registered a ghost the homeserver asked for");
                ok(query_user_id::v1::Response::new())
            }
            Err(reason) => {
                tracing::warn!(network = %self.shared.options.network, ghost = %user, %reason, "cannot register a ghost");
                error(StatusCode::INTERNAL_SERVER_ERROR, ErrorKind::Unknown, "cannot register the ghost now")
            }
        }
    }
}

/// The user, membership and display name of an `m.room.member` event; `None` for other
/// events.
fn member_event(
    raw: &matrix_sdk::ruma::serde::Raw<matrix_sdk::ruma::events::AnyTimelineEvent>,
) -> Option<(OwnedUserId, MembershipState, Option<String>)> {
    if raw.get_field::<String>("type").ok().flatten().as_deref() != Some("m.room.member") {
        return None;
    }
    let user = raw.get_field::<OwnedUserId>("state_key").ok().flatten()?;
    let content = raw.get_field::<serde_json::Value>("content").ok().flatten()?;
    let membership = content.get("membership")?.as_str()?;
    let name = content.get("displayname").and_then(|n| n.as_str()).map(str::to_owned);
    Some((user, MembershipState::from(membership), name))
}

/// Reads the whole request (its body up to [`MOST_BODY`]) as ruma's `R`; the error is
/// the answer to give.
async fn read<R: IncomingRequest>(
    request: Request<Incoming>,
    path_args: &[&str],
) -> Result<R, Response<Full<Bytes>>> {
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, MOST_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(reason) => {
            return Err(error(
                StatusCode::BAD_REQUEST,
                ErrorKind::TooLarge,
                &format!("cannot read the body: {reason}"),
            ));
        }
    };
    R::try_from_http_request(Request::from_parts(parts, body), path_args)
        .map_err(|reason| error(StatusCode::BAD_REQUEST, ErrorKind::BadJson, &reason.to_string()))
}

fn ok(response: impl OutgoingResponse) -> Response<Full<Bytes>> {
    match response.try_into_http_response::<Vec<u8>>() {
        Ok(response) => response.map(|body| Full::new(Bytes::from(body))),
        Err(reason) => {
            tracing::error!(%reason, "cannot write an appservice API answer");
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        }
    }
}

fn error(status: StatusCode, kind: ErrorKind, message: &str) -> Response<Full<Bytes>> {
    ok(ErrorBody::Standard(StandardErrorBody::new(kind, message.to_owned())).into_error(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_whole_503_with_a_matrix_error() {
        let (head, body) = REFUSAL.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head} / {}", body.len());
        let json: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(json["errcode"], "M_LIMIT_EXCEEDED");
    }
}
