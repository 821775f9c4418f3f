//! A raw Matrix client-server API client for tests (async, tokio + reqwest), playing a
//! human user against a [`super::synapse::Synapse`] and serving as the benchmark floor:
//! it logs in (or takes an access token), creates rooms and direct chats, joins, accepts
//! invites, sends plain and HTML messages and events of any type, reacts, redacts, sets
//! power levels, reads one event or a room's members back from the server, and reads
//! what arrives with a loop of
//! long-poll `/sync` requests that passes the `next_batch` token on (no delay between
//! syncs, unlike matrix-sdk's `Client::sync`).
//!
//! It has no end-to-end encryption: in an encrypted room it sees `m.room.encrypted`
//! events, not their text. Room ids are opaque strings (room version 12 ids have no
//! server part); the client never parses one.
//!
//! Timeline events that arrive while the client waits for something else are kept in
//! order for the next read, except that [`MatrixClient::next_message`] and
//! [`MatrixClient::expect_message_matching`] consume the events they skip.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use reqwest::Method;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::HarnessError;

/// How long one request other than a long-poll sync may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Timeline events asked for per room and sync: enough that a burst between two syncs
/// is not cut (`limited`).
const TIMELINE_LIMIT: u32 = 500;

/// Events remembered for error messages.
const RECENT_EVENTS: usize = 20;

/// One timeline event as a sync returned it.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The room it was sent in.
    pub room_id: String,
    /// Its id.
    pub event_id: String,
    /// Who sent it (a full user id).
    pub sender: String,
    /// Its type, such as `m.room.message` or `m.room.member`.
    pub event_type: String,
    /// The state key of a state event.
    pub state_key: Option<String>,
    /// Its content, as sent.
    pub content: Value,
    /// The sender's server's timestamp, in milliseconds.
    pub origin_server_ts: u64,
}

impl Event {
    /// The message in an `m.room.message` event with a text body, or `None`.
    pub fn message(&self) -> Option<Message> {
        if self.event_type != "m.room.message" {
            return None;
        }
        let body = self.content.get("body")?.as_str()?.to_owned();
        let formatted_body = (self.content.get("format").and_then(Value::as_str) == Some(HTML_FORMAT))
            .then(|| self.content.get("formatted_body").and_then(Value::as_str).map(str::to_owned))
            .flatten();
        Some(Message {
            room_id: self.room_id.clone(),
            event_id: self.event_id.clone(),
            sender: self.sender.clone(),
            msgtype: self.content.get("msgtype").and_then(Value::as_str).unwrap_or_default().to_owned(),
            body,
            formatted_body,
            replaces: (self.content["m.relates_to"]["rel_type"] == "m.replace")
                .then(|| self.content["m.relates_to"]["event_id"].as_str().map(str::to_owned))
                .flatten(),
            new_body: self.content["m.new_content"]["body"].as_str().map(str::to_owned),
        })
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {} from {}: {}", self.event_type, self.room_id, self.sender, self.content)
    }
}

/// An `m.room.message` as a client received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The room it was sent in.
    pub room_id: String,
    /// Its event id.
    pub event_id: String,
    /// Who sent it (a full user id).
    pub sender: String,
    /// `m.text`, `m.notice`, `m.emote`…
    pub msgtype: String,
    /// The plain-text body.
    pub body: String,
    /// The `org.matrix.custom.html` body, if the message has one.
    pub formatted_body: Option<String>,
    /// An edit (`m.replace`): the event it edits.
    pub replaces: Option<String>,
    /// An edit: the body it gives the event it edits (`m.new_content`).
    pub new_body: Option<String>,
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {} from {}: {:?}", self.msgtype, self.room_id, self.sender, self.body)?;
        if let Some(html) = &self.formatted_body {
            write!(f, " (html {html:?})")?;
        }
        Ok(())
    }
}

/// An invite a sync reported and the client has not acted on yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invite {
    /// The room invited to.
    pub room_id: String,
    /// Who sent the invite.
    pub inviter: String,
    /// Whether the inviter marked it as a direct chat.
    pub is_direct: bool,
}

const HTML_FORMAT: &str = "org.matrix.custom.html";

/// A logged-in test client.
pub struct MatrixClient {
    http: reqwest::Client,
    base_url: String,
    user_id: String,
    device_id: Option<String>,
    access_token: String,
    filter_id: Option<String>,
    next_batch: Option<String>,
    /// Timeline events synced but not yet read.
    pending: VecDeque<Event>,
    /// Invites synced and not yet accepted, rejected or withdrawn.
    invites: Vec<Invite>,
    /// The last events synced, for error messages.
    recent: VecDeque<String>,
    /// Makes transaction ids unique to this client, even for a reused access token.
    txn_prefix: String,
    txn_counter: u64,
}

impl MatrixClient {
    /// Logs in with a password (a new device) at `base_url` (such as
    /// [`super::synapse::Synapse::base_url`]); `user` is a localpart or a full user id.
    pub async fn login(base_url: &str, user: &str, password: &str) -> Result<Self, HarnessError> {
        let mut client = Self::new(base_url, user, String::new())?;
        let body = json!({
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": user},
            "password": password,
            "initial_device_display_name": "spellbridge test client",
        });
        let answer = client.call(Method::POST, "/_matrix/client/v3/login", Some(&body)).await?;
        let field = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(user_id), Some(token)) = (field("user_id"), field("access_token")) else {
            return Err(client.error(format!("login answered without user_id or access_token: {answer}")));
        };
        client.user_id = user_id;
        client.access_token = token;
        client.device_id = field("device_id");
        Ok(client)
    }

    /// A client for an account whose access token is known (from
    /// [`super::synapse::Synapse::register`] or an earlier login). Sends no request.
    pub fn from_token(base_url: &str, user_id: &str, access_token: &str) -> Result<Self, HarnessError> {
        Self::new(base_url, user_id, access_token.to_owned())
    }

    fn new(base_url: &str, user: &str, access_token: String) -> Result<Self, HarnessError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .build()
            .map_err(|e| error(user, format!("building the HTTP client: {e}")))?;
        static CLIENTS: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        Ok(Self {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            user_id: user.to_owned(),
            device_id: None,
            access_token,
            filter_id: None,
            next_batch: None,
            pending: VecDeque::new(),
            invites: Vec::new(),
            recent: VecDeque::new(),
            txn_prefix: format!("sb{nanos:x}.{}", CLIENTS.fetch_add(1, Ordering::Relaxed)),
            txn_counter: 0,
        })
    }

    /// The full user id, such as `@alice:localhost`.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// The access token.
    pub fn access_token(&self) -> &str {
        &self.access_token
    }

    /// The device id, when the client logged in itself.
    pub fn device_id(&self) -> Option<&str> {
        self.device_id.as_deref()
    }

    /// The homeserver URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The sync token the next sync passes on (`None` before the first sync).
    pub fn next_batch(&self) -> Option<&str> {
        self.next_batch.as_deref()
    }

    /// Creates a private room named `name`, inviting `invite` (full user ids), with
    /// `m.room.encryption` (megolm) set when `encrypted`. Returns the room id.
    pub async fn create_room<S: AsRef<str>>(
        &mut self,
        name: &str,
        invite: &[S],
        encrypted: bool,
    ) -> Result<String, HarnessError> {
        let invite: Vec<&str> = invite.iter().map(AsRef::as_ref).collect();
        let mut body = json!({"name": name, "preset": "private_chat", "invite": invite});
        if encrypted {
            body["initial_state"] = json!([encryption_state()]);
        }
        self.create(&body).await
    }

    /// Creates a direct chat with `user_id` (`is_direct`, trusted private chat: invite
    /// only; its history for joined members only, so the bot can vouch for it as private)
    /// and records it in this account's `m.direct`. Returns the room id.
    pub async fn create_dm(&mut self, user_id: &str, encrypted: bool) -> Result<String, HarnessError> {
        let history = json!({"type": "m.room.history_visibility", "state_key": "", "content": {"history_visibility": "joined"}});
        let mut body = json!({"preset": "trusted_private_chat", "is_direct": true, "invite": [user_id], "initial_state": [history]});
        if encrypted {
            body["initial_state"] = json!([history, encryption_state()]);
        }
        let room_id = self.create(&body).await?;
        let path = format!("/_matrix/client/v3/user/{}/account_data/m.direct", encode(&self.user_id));
        let mut direct = match self.request(Method::GET, &path, None).await? {
            (200, Value::Object(map)) => Value::Object(map),
            _ => json!({}),
        };
        match direct.get_mut(user_id).and_then(Value::as_array_mut) {
            Some(rooms) => rooms.push(Value::from(room_id.as_str())),
            None => direct[user_id] = json!([room_id]),
        }
        self.call(Method::PUT, &path, Some(&direct)).await?;
        Ok(room_id)
    }

    async fn create(&mut self, body: &Value) -> Result<String, HarnessError> {
        let answer = self.call(Method::POST, "/_matrix/client/v3/createRoom", Some(body)).await?;
        answer
            .get("room_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(format!("createRoom answered without a room_id: {answer}")))
    }

    /// Joins a room by id or alias; returns the room id.
    pub async fn join(&mut self, room: &str) -> Result<String, HarnessError> {
        let path = format!("/_matrix/client/v3/join/{}", encode(room));
        let answer = self.call(Method::POST, &path, Some(&json!({}))).await?;
        let room_id = answer
            .get("room_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(format!("join answered without a room_id: {answer}")))?;
        self.invites.retain(|i| i.room_id != room_id);
        Ok(room_id)
    }

    /// Leaves a room (or rejects an invite to it).
    pub async fn leave(&mut self, room_id: &str) -> Result<(), HarnessError> {
        let path = format!("/_matrix/client/v3/rooms/{}/leave", encode(room_id));
        self.call(Method::POST, &path, Some(&json!({}))).await?;
        self.invites.retain(|i| i.room_id != room_id);
        Ok(())
    }

    /// Invites `user_id` to a room.
    pub async fn invite(&mut self, room_id: &str, user_id: &str) -> Result<(), HarnessError> {
        let path = format!("/_matrix/client/v3/rooms/{}/invite", encode(room_id));
        self.call(Method::POST, &path, Some(&json!({"user_id": user_id}))).await.map(drop)
    }

    /// The rooms this account is joined to (asks the server).
    pub async fn joined_rooms(&mut self) -> Result<Vec<String>, HarnessError> {
        let answer = self.call(Method::GET, "/_matrix/client/v3/joined_rooms", None).await?;
        Ok(answer
            .get("joined_rooms")
            .and_then(Value::as_array)
            .map(|rooms| rooms.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default())
    }

    /// The invites seen by syncs so far and not yet accepted, rejected or withdrawn.
    pub fn invites(&self) -> &[Invite] {
        &self.invites
    }

    /// Syncs until an invite is pending (or `timeout` passes) and returns the oldest.
    pub async fn wait_invite(&mut self, timeout: Duration) -> Option<Invite> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(invite) = self.invites.first() {
                return Some(invite.clone());
            }
            let remaining = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
            if self.sync_into_pending(remaining).await.is_err() {
                tokio::time::sleep(remaining.min(Duration::from_millis(100))).await;
            }
        }
    }

    /// Accepts an invite: joins the room.
    pub async fn accept_invite(&mut self, room_id: &str) -> Result<(), HarnessError> {
        self.join(room_id).await.map(drop)
    }

    /// Sends a plain `m.text` message; returns its event id.
    pub async fn send_text(&mut self, room_id: &str, body: &str) -> Result<String, HarnessError> {
        self.send_message(room_id, json!({"msgtype": "m.text", "body": body})).await
    }

    /// Sends an `m.text` message with an `org.matrix.custom.html` body; returns its
    /// event id.
    pub async fn send_html(
        &mut self,
        room_id: &str,
        body: &str,
        formatted_body: &str,
    ) -> Result<String, HarnessError> {
        let content = json!({"msgtype": "m.text", "body": body, "format": HTML_FORMAT, "formatted_body": formatted_body});
        self.send_message(room_id, content).await
    }

    /// Sends an `m.room.message` with any content (replies, edits, odd content);
    /// returns its event id.
    pub async fn send_message(&mut self, room_id: &str, content: Value) -> Result<String, HarnessError> {
        self.send_event(room_id, "m.room.message", content).await
    }

    /// Sends a message-like event of any type (`PUT /rooms/{id}/send/{type}/{txn}`);
    /// returns its event id.
    pub async fn send_event(
        &mut self,
        room_id: &str,
        event_type: &str,
        content: Value,
    ) -> Result<String, HarnessError> {
        self.txn_counter += 1;
        let path = format!(
            "/_matrix/client/v3/rooms/{}/send/{}/{}.{}",
            encode(room_id),
            encode(event_type),
            self.txn_prefix,
            self.txn_counter
        );
        let answer = self.call(Method::PUT, &path, Some(&content)).await?;
        answer
            .get("event_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(format!("send answered without an event_id: {answer}")))
    }

    /// Reacts to an event with `key` (an `m.reaction` annotation); returns its event id.
    pub async fn react(&mut self, room_id: &str, event_id: &str, key: &str) -> Result<String, HarnessError> {
        let content = json!({"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}});
        self.send_event(room_id, "m.reaction", content).await
    }

    /// Redacts an event (`PUT /rooms/{id}/redact/{event}/{txn}`); returns the redaction's
    /// event id.
    pub async fn redact(
        &mut self,
        room_id: &str,
        event_id: &str,
        reason: Option<&str>,
    ) -> Result<String, HarnessError> {
        self.txn_counter += 1;
        let path = format!(
            "/_matrix/client/v3/rooms/{}/redact/{}/{}.{}",
            encode(room_id),
            encode(event_id),
            self.txn_prefix,
            self.txn_counter
        );
        let body = reason.map_or_else(|| json!({}), |reason| json!({"reason": reason}));
        let answer = self.call(Method::PUT, &path, Some(&body)).await?;
        answer
            .get("event_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(format!("redact answered without an event_id: {answer}")))
    }

    /// Sets `user_id`'s power level in a room: reads `m.room.power_levels`, changes that
    /// user's entry and sends the state back.
    pub async fn set_power_level(
        &mut self,
        room_id: &str,
        user_id: &str,
        level: i64,
    ) -> Result<(), HarnessError> {
        let path = format!("/_matrix/client/v3/rooms/{}/state/m.room.power_levels/", encode(room_id));
        let mut levels = self.call(Method::GET, &path, None).await?;
        if !levels.get("users").is_some_and(Value::is_object) {
            levels["users"] = json!({});
        }
        levels["users"][user_id] = json!(level);
        self.call(Method::PUT, &path, Some(&levels)).await.map(drop)
    }

    /// Sets this user's display name (`PUT /profile/{user}/displayname`); the server
    /// updates the member event of every room the user is in.
    pub async fn set_display_name(&mut self, name: &str) -> Result<(), HarnessError> {
        let path = format!("/_matrix/client/v3/profile/{}/displayname", encode(&self.user_id));
        self.call(Method::PUT, &path, Some(&json!({"displayname": name}))).await.map(drop)
    }

    /// One event as the server has it now (`GET /rooms/{id}/event/{event}`).
    pub async fn event(&self, room_id: &str, event_id: &str) -> Result<Event, HarnessError> {
        let path = format!("/_matrix/client/v3/rooms/{}/event/{}", encode(room_id), encode(event_id));
        let answer = self.call(Method::GET, &path, None).await?;
        parse_event(room_id, &answer).ok_or_else(|| self.error(format!("not an event: {answer}")))
    }

    /// The users joined to a room now (asks the server).
    pub async fn joined_members(&self, room_id: &str) -> Result<Vec<String>, HarnessError> {
        let path = format!("/_matrix/client/v3/rooms/{}/joined_members", encode(room_id));
        let answer = self.call(Method::GET, &path, None).await?;
        Ok(answer
            .get("joined")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default())
    }

    /// One `/sync` that waits up to `timeout_ms` for something new, passing the
    /// previous `next_batch` on and keeping the new one. Returns the timeline events
    /// not read yet: those kept from earlier syncs, then the new ones (the first sync
    /// of a client returns each room's recent history). Invites are recorded for
    /// [`Self::invites`].
    pub async fn sync_once(&mut self, timeout_ms: u64) -> Result<Vec<Event>, HarnessError> {
        self.sync_into_pending(Duration::from_millis(timeout_ms)).await?;
        Ok(self.pending.drain(..).collect())
    }

    /// Syncs without waiting and drops every unread event: later reads see only what
    /// happens from now on.
    pub async fn catch_up(&mut self) -> Result<(), HarnessError> {
        self.sync_into_pending(Duration::ZERO).await?;
        self.pending.clear();
        Ok(())
    }

    /// The next timeline event (any type, from anyone, this client's own included),
    /// syncing as needed; `None` when nothing arrived within `timeout`.
    pub async fn next_event(&mut self, timeout: Duration) -> Option<Event> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            let remaining = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
            // A failed sync (the server restarting, say) is retried until the deadline.
            if self.sync_into_pending(remaining).await.is_err() {
                tokio::time::sleep(remaining.min(Duration::from_millis(100))).await;
            }
        }
    }

    /// The next `m.room.message` from someone else, skipping (and consuming) other
    /// events and this client's own messages; `None` when none arrived within `timeout`.
    pub async fn next_message(&mut self, timeout: Duration) -> Option<Message> {
        let deadline = Instant::now() + timeout;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let event = self.next_event(remaining).await?;
            if event.sender != self.user_id
                && let Some(message) = event.message()
            {
                return Some(message);
            }
        }
    }

    /// The next message from someone else for which `matches` holds, skipping (and
    /// consuming) everything before it; an error listing what arrived instead when
    /// none did within `timeout`.
    pub async fn expect_message_matching(
        &mut self,
        mut matches: impl FnMut(&Message) -> bool,
        timeout: Duration,
    ) -> Result<Message, HarnessError> {
        let deadline = Instant::now() + timeout;
        let mut skipped = Vec::new();
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.next_message(remaining).await else {
                let skipped = if skipped.is_empty() { "none".to_owned() } else { skipped.join("\n  ") };
                return Err(self.error(format!(
                    "no matching message within {timeout:?}; messages skipped:\n  {skipped}"
                )));
            };
            if matches(&message) {
                return Ok(message);
            }
            skipped.push(message.to_string());
        }
    }

    /// Logs this device out (its access token stops working).
    pub async fn logout(&mut self) -> Result<(), HarnessError> {
        self.call(Method::POST, "/_matrix/client/v3/logout", Some(&json!({}))).await.map(drop)
    }

    /// One authenticated request to `path` (such as `/_matrix/client/v3/joined_rooms`):
    /// the HTTP status and the JSON body (`null` when the body is not JSON), whatever
    /// the status. An error only when no answer came.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), HarnessError> {
        self.request_with_timeout(method, path, body, REQUEST_TIMEOUT).await
    }

    /// Like [`Self::request`], but a status other than 2xx is an error that names the
    /// Matrix `errcode` and `error`.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, HarnessError> {
        let what = format!("{method} {path}");
        match self.request(method, path, body).await? {
            (200..=299, answer) => Ok(answer),
            (status, answer) => Err(self.error(format!("{what} answered {status}: {answer}"))),
        }
    }

    async fn request_with_timeout(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<(u16, Value), HarnessError> {
        let url = format!("{}{path}", self.base_url);
        let build = || {
            let mut request = self.http.request(method.clone(), &url).timeout(timeout);
            if !self.access_token.is_empty() {
                request = request.bearer_auth(&self.access_token);
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            request
        };
        let response = match build().send().await {
            // A kept-alive connection to a server that has since restarted fails on
            // first use ("connection closed before message completed"): the request
            // never reached the new server, so send it once more on a new connection.
            Err(e) if !e.is_timeout() && e.status().is_none() => build().send().await,
            result => result,
        }
        .map_err(|e| self.error(format!("{method} {path}: {}", chain(&e))))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| self.error(format!("{method} {path}: reading the answer: {}", chain(&e))))?;
        Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
    }

    /// One sync that waits up to `wait`; new timeline events go to `pending`.
    async fn sync_into_pending(&mut self, wait: Duration) -> Result<(), HarnessError> {
        let filter = self.filter_id().await?;
        let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        let mut path = format!("/_matrix/client/v3/sync?timeout={wait_ms}&filter={}", encode(&filter));
        if let Some(since) = &self.next_batch {
            path.push_str("&since=");
            path.push_str(&encode(since));
        }
        let (status, answer) =
            self.request_with_timeout(Method::GET, &path, None, wait + REQUEST_TIMEOUT).await?;
        if status != 200 {
            return Err(self.error(format!("sync answered {status}: {answer}")));
        }
        let Some(next_batch) = answer.get("next_batch").and_then(Value::as_str) else {
            return Err(self.error(format!("sync answered without next_batch: {answer}")));
        };
        self.next_batch = Some(next_batch.to_owned());
        let rooms = answer.get("rooms");
        let mut new_events = Vec::new();
        for (room_id, room) in
            rooms.and_then(|r| r.get("join")).and_then(Value::as_object).into_iter().flatten()
        {
            self.invites.retain(|i| &i.room_id != room_id);
            let events = room.pointer("/timeline/events").and_then(Value::as_array);
            new_events.extend(events.into_iter().flatten().filter_map(|e| parse_event(room_id, e)));
        }
        for (room_id, room) in
            rooms.and_then(|r| r.get("invite")).and_then(Value::as_object).into_iter().flatten()
        {
            let me =
                room.pointer("/invite_state/events").and_then(Value::as_array).into_iter().flatten().find(
                    |e| {
                        e.get("type").and_then(Value::as_str) == Some("m.room.member")
                            && e.get("state_key").and_then(Value::as_str) == Some(self.user_id.as_str())
                    },
                );
            let inviter = me.and_then(|e| e.get("sender")).and_then(Value::as_str).unwrap_or_default();
            let is_direct =
                me.and_then(|e| e.pointer("/content/is_direct")).and_then(Value::as_bool) == Some(true);
            if !self.invites.iter().any(|i| &i.room_id == room_id) {
                self.invites.push(Invite {
                    room_id: room_id.clone(),
                    inviter: inviter.to_owned(),
                    is_direct,
                });
            }
        }
        for room_id in rooms
            .and_then(|r| r.get("leave"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(id, _)| id)
        {
            self.invites.retain(|i| &i.room_id != room_id);
        }
        // Rooms come in no particular order: interleave them by time (a stable sort
        // keeps each room's own order).
        new_events.sort_by_key(|e| e.origin_server_ts);
        for event in new_events {
            if self.recent.len() == RECENT_EVENTS {
                self.recent.pop_front();
            }
            self.recent.push_back(event.to_string());
            self.pending.push_back(event);
        }
        Ok(())
    }

    /// The id of the sync filter (uploaded on first use): long timelines, no presence,
    /// typing, receipts or account data.
    async fn filter_id(&mut self) -> Result<String, HarnessError> {
        if let Some(id) = &self.filter_id {
            return Ok(id.clone());
        }
        let filter = json!({
            "presence": {"not_types": ["*"]},
            "account_data": {"not_types": ["*"]},
            "room": {
                "timeline": {"limit": TIMELINE_LIMIT},
                "ephemeral": {"not_types": ["*"]},
                "account_data": {"not_types": ["*"]},
            },
        });
        let path = format!("/_matrix/client/v3/user/{}/filter", encode(&self.user_id));
        let answer = self.call(Method::POST, &path, Some(&filter)).await?;
        let id = answer
            .get("filter_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.error(format!("filter upload answered without filter_id: {answer}")))?;
        self.filter_id = Some(id.clone());
        Ok(id)
    }

    fn error(&self, reason: String) -> HarnessError {
        let recent = if self.recent.is_empty() {
            String::new()
        } else {
            format!("\n--- last events synced:\n  {}", Vec::from(self.recent.clone()).join("\n  "))
        };
        error(&self.user_id, format!("{reason}{recent}"))
    }
}

/// A client error: "Matrix client @alice:localhost: …". (The shared `HarnessError` has
/// no Matrix variant yet: its `Io` variant carries it.)
fn error(user: &str, reason: String) -> HarnessError {
    HarnessError::Io { what: format!("Matrix client {user}"), source: io::Error::other(reason) }
}

/// An error and its causes: reqwest's own message names only the URL.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn encryption_state() -> Value {
    json!({"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}})
}

fn parse_event(room_id: &str, event: &Value) -> Option<Event> {
    let text = |key: &str| event.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(Event {
        room_id: room_id.to_owned(),
        event_id: text("event_id")?,
        sender: text("sender")?,
        event_type: text("type")?,
        state_key: text("state_key"),
        content: event.get("content").cloned().unwrap_or(Value::Null),
        origin_server_ts: event.get("origin_server_ts").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// Percent-encodes everything but RFC 3986's unreserved characters, for a path segment
/// (a room or user id) or a query value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_percent_encoded_whole() {
        assert_eq!(encode("!abc-_.~Z9"), "%21abc-_.~Z9");
        assert_eq!(encode("@alice:localhost"), "%40alice%3Alocalhost");
        assert_eq!(encode("#room/é"), "%23room%2F%C3%A9");
    }

    #[test]
    fn a_message_event_gives_its_text_and_html() {
        let event = parse_event(
            "!room",
            &json!({"event_id": "$e", "sender": "@a:localhost", "type": "m.room.message",
                    "origin_server_ts": 5,
                    "content": {"msgtype": "m.text", "body": "*hi*", "format": HTML_FORMAT,
                                "formatted_body": "<em>hi</em>"}}),
        )
        .unwrap_or_else(|| panic!("a well-formed event parses"));
        let message = event.message().unwrap_or_else(|| panic!("it is a message"));
        assert_eq!(message.body, "*hi*");
        assert_eq!(message.formatted_body.as_deref(), Some("<em>hi</em>"));
        assert_eq!(message.room_id, "!room");

        let odd = parse_event(
            "!room",
            &json!({"event_id": "$f", "sender": "@a:localhost", "type": "m.room.message",
                    "content": {"msgtype": "m.text", "body": 5}}),
        )
        .unwrap_or_else(|| panic!("the envelope is fine"));
        assert_eq!(odd.message(), None);
        assert_eq!(parse_event("!room", &json!({"type": "m.room.message"})), None);
    }
}
