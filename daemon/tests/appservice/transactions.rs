//! Item 2: the appservice API. The test plays the homeserver against the daemon's
//! listener (repeated, out-of-order and unauthorised transactions, a transaction taken
//! in whose acknowledgement was lost across a restart), and the real Synapse pushes its
//! own transactions, pings the listener and has the daemon answer for ghost users.

use super::support::*;

/// The homeserver's side of the appservice API, played by the test.
struct Homeserver {
    http: reqwest::Client,
    port: u16,
    hs_token: String,
}

impl Homeserver {
    /// `PUT /transactions/{txn}` with `events`, the token as `token` says; the status.
    async fn push(&self, token: Token, txn: &str, events: &[Value]) -> u16 {
        let mut url = format!("http://127.0.0.1:{}/_matrix/app/v1/transactions/{}", self.port, encode(txn));
        let mut request = self.http.put(&url);
        match token {
            Token::Header => request = request.bearer_auth(&self.hs_token),
            Token::Query => {
                url.push_str(&format!("?access_token={}", self.hs_token));
                request = self.http.put(&url);
            }
            Token::Wrong => request = request.bearer_auth("not-the-token"),
            Token::None => {}
        }
        let response = request
            .json(&json!({"events": events}))
            .timeout(WAIT)
            .send()
            .await
            .unwrap_or_else(|e| panic!("PUT {txn}: {e}"));
        response.status().as_u16()
    }

    /// `GET path` with the token; the status and the JSON body.
    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.hs_token)
            .timeout(WAIT)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

#[derive(Clone, Copy)]
enum Token {
    Header,
    Query,
    Wrong,
    None,
}

/// `!games` from `sender` in `room`, as a homeserver pushes it (an event id of its own).
fn games(id: &str, room: &str, sender: &str) -> Value {
    said(id, room, sender, "!games")
}

/// `body` from `sender` in `room`, as a homeserver pushes it.
fn said(id: &str, room: &str, sender: &str, body: &str) -> Value {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    json!({
        "type": "m.room.message",
        "event_id": format!("${id}:localhost"),
        "room_id": room,
        "sender": sender,
        "origin_server_ts": now as u64,
        "content": {"msgtype": "m.text", "body": body},
    })
}

/// Everything the bot says in `room` until nothing comes for 3 s.
async fn bot_says(client: &mut MatrixClient, room: &str) -> Vec<String> {
    let bot = bot_id();
    let mut said = Vec::new();
    while let Some(message) = client.next_message(Duration::from_secs(3)).await {
        if message.sender == bot && message.room_id == room {
            said.push(message.body);
        }
    }
    said
}

/// How many answers to `!games` the bot gives in `room` until nothing comes for 3 s.
async fn answers(client: &mut MatrixClient, room: &str) -> usize {
    let bot = bot_id();
    let mut count = 0;
    while let Some(message) = client.next_message(Duration::from_secs(3)).await {
        if message.sender == bot && message.room_id == room && message.body.contains("Games:") {
            count += 1;
        }
    }
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_are_applied_once_whatever_the_homeserver_repeats() {
    let port = free_port();
    let mut daemon = prepared(port, "");
    let (as_token, hs_token) = tokens(&daemon);
    let synapse = synapse_for(&daemon);
    start(&mut daemon, &synapse, port, "");
    let mut alice = person(&synapse, "alice").await;
    let alice_id = alice.user_id().to_owned();
    let room = games_room(&synapse, &mut alice).await;
    until_bot_answers(&mut alice, &room, &daemon, &synapse).await;
    answers(&mut alice, &room).await;

    // Synapse pushes the room's events to the listener, which hands them over.
    tokio::task::block_in_place(|| daemon.wait_for_log("took in an appservice transaction", WAIT))
        .unwrap_or_else(|e| panic!("{e}"));
    // Synapse reaches the listener with its token: its ping goes through.
    let bot_as =
        MatrixClient::from_token(&synapse.base_url(), &bot_id(), &as_token).unwrap_or_else(|e| panic!("{e}"));
    let ping = bot_as
        .call(
            Method::POST,
            "/_matrix/client/v1/appservice/spellbridge-matrix/ping",
            Some(&json!({"transaction_id": "p1"})),
        )
        .await
        .unwrap_or_else(|e| panic!("Synapse could not ping the appservice: {e}"));
    assert!(ping.get("duration_ms").is_some(), "{ping}");

    let homeserver = Homeserver { http: reqwest::Client::new(), port, hs_token };
    let push = |txn: &'static str, id: &'static str, token: Token| {
        let event = games(id, &room, &alice_id);
        let homeserver = &homeserver;
        async move { homeserver.push(token, txn, &[event]).await }
    };

    // No token, or another one: refused, nothing applied.
    assert_eq!(push("t1", "a", Token::None).await, 401);
    assert_eq!(push("t1", "a", Token::Wrong).await, 403);
    assert_eq!(answers(&mut alice, &room).await, 0, "an unauthorised transaction was applied");

    // Taken in once; repeated (the same events, or others under the same id) acknowledged
    // and not applied again.
    assert_eq!(push("t1", "a", Token::Header).await, 200);
    assert_eq!(answers(&mut alice, &room).await, 1);
    assert_eq!(push("t1", "a", Token::Header).await, 200);
    assert_eq!(push("t1", "b", Token::Header).await, 200);
    assert_eq!(answers(&mut alice, &room).await, 0, "a repeated transaction was applied again");

    // Out of order, and the legacy query token.
    assert_eq!(push("t3", "c", Token::Header).await, 200);
    assert_eq!(push("t2", "d", Token::Query).await, 200);
    assert_eq!(answers(&mut alice, &room).await, 2);

    // A transaction handed over, whose acknowledgement the homeserver never got (the
    // daemon stopped before noting it): sent again after the restart, applied once. (A
    // move that is kept: questions such as `!games` are answered, never journaled.)
    let open = said("e", &room, &alice_id, "!new thaum");
    assert_eq!(homeserver.push(Token::Header, "t4", std::slice::from_ref(&open)).await, 200);
    let opened = bot_says(&mut alice, &room).await;
    assert!(opened.iter().any(|l| l.contains("opens a Thaum table")), "{opened:?}");
    let status = daemon.terminate(Duration::from_secs(15)).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{status}");
    let database = rusqlite::Connection::open(daemon.path("games.db")).unwrap_or_else(|e| panic!("{e}"));
    let forgotten = database
        .execute("DELETE FROM appservice_txns WHERE network = 'matrix' AND txn_id = 't4'", [])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(forgotten, 1, "t4 was noted");
    drop(database);
    daemon.spawn().unwrap_or_else(|e| panic!("{e}"));
    until_bot_answers(&mut alice, &room, &daemon, &synapse).await;
    answers(&mut alice, &room).await;
    // The listener starts with the transport, before the bot logs in and answers.
    assert_eq!(homeserver.push(Token::Header, "t4", std::slice::from_ref(&open)).await, 200);
    let again = bot_says(&mut alice, &room).await;
    assert!(again.is_empty(), "the move was applied again after the restart: {again:?}");
    assert_eq!(push("t1", "f", Token::Header).await, 200, "t1 is still known after the restart");
    assert_eq!(
        answers(&mut alice, &room).await,
        0,
        "a transaction taken in before the restart was read again"
    );
    assert_eq!(push("t5", "g", Token::Header).await, 200);
    assert_eq!(answers(&mut alice, &room).await, 1, "a new transaction after the restart");

    // Users and aliases: a ghost is registered when the homeserver asks; nobody else is ours.
    let ghost = "@irc_libera_bob:localhost";
    let (status, body) = homeserver.get(&format!("/_matrix/app/v1/users/{}", encode(ghost))).await;
    assert_eq!(status, 200, "{body}");
    alice
        .call(Method::GET, &format!("/_matrix/client/v3/profile/{}", encode(ghost)), None)
        .await
        .unwrap_or_else(|e| panic!("the ghost was not registered: {e}"));
    let (status, body) = homeserver.get(&format!("/_matrix/app/v1/users/{}", encode("@bob:localhost"))).await;
    assert_eq!((status, body["errcode"].as_str()), (404, Some("M_NOT_FOUND")), "{body}");
    let (status, body) =
        homeserver.get(&format!("/_matrix/app/v1/rooms/{}", encode("#magic:localhost"))).await;
    assert_eq!((status, body["errcode"].as_str()), (404, Some("M_NOT_FOUND")), "{body}");
    daemon.ensure_running().unwrap_or_else(|e| panic!("{e}"));
}
