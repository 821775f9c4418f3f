//! A third network kind, the line protocol ([`crate::line`]), added in one line with
//! `Networks::register`, configured from `[[line]]` by the daemon's own config code,
//! described and tried by `check-config`'s code, and carrying a game (the third game,
//! [`crate::rps`]) through the daemon's `run` over a loopback TCP socket, with no
//! change in the daemon.

use std::time::Duration;

use spellbridge::config::{Catalogue, Settings};
use spellbridge_adapters::network::Networks;
use spellbridge_core::Registry;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_util::sync::CancellationToken;

use crate::line::LineKind;
use crate::rps::Rps;

/// How long any one step may take before the test fails.
const WAIT: Duration = Duration::from_secs(20);

/// The standard games and networks, and the two added: one line each.
fn catalogue() -> Catalogue {
    Catalogue {
        games: Registry::standard().register(Rps::default()),
        networks: Networks::standard().register(LineKind),
    }
}

/// The server's side of the bot's connection.
struct Server {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
    next_id: u32,
}

impl Server {
    /// Reads lines until one equals or contains `wanted`; returns it.
    async fn expect(&mut self, wanted: &str) -> String {
        let mut seen = Vec::new();
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no `{wanted}` within {WAIT:?}; the bot said: {seen:#?}"))
                .expect("reads")
                .unwrap_or_else(|| panic!("the bot hung up before `{wanted}`; it said: {seen:#?}"));
            if line.contains(wanted) {
                return line;
            }
            seen.push(line);
        }
    }

    async fn say(&mut self, line: String) {
        self.next_id += 1;
        let line = line.replacen("{id}", &self.next_id.to_string(), 1);
        self.write.write_all(format!("{line}\n").as_bytes()).await.expect("writes");
    }

    async fn room(&mut self, sender: &str, text: &str) {
        self.say(format!("MSG {{id}} #magic {sender} {text}")).await;
    }

    async fn private(&mut self, sender: &str, text: &str) {
        self.say(format!("PRIV {{id}} {sender} {text}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_network_carries_a_game_through_the_daemon() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("spellbridge.toml");
    let http = spellbridge_tests::harness::endpoint::free_port().expect("a free port");
    let text = format!(
        "[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n\n[[line]]\nname = \"lines\"\nserver = \"{address}\"\nrooms = [\"#magic\"]\n\
         [line.user_limit]\nenabled = false\n\n[games.rps]\nbest_of = 1\n"
    );
    std::fs::write(&config, text).expect("writes the config");
    let settings = Settings::load_with(&config, &catalogue()).expect("the config is valid");
    assert_eq!(
        spellbridge::probe::describe(settings.networks[0].as_ref()),
        format!("line lines: {address}, rooms #magic"),
        "check-config describes the network as its kind says"
    );
    assert_eq!(settings.networks[0].user_limit(), None, "the shared user_limit table is read");

    let stop = CancellationToken::new();
    // The daemon on its own runtime, as `spellbridge run` starts it (its loop holds the
    // store, which stays on one thread).
    let (done_tx, done) = tokio::sync::oneshot::channel();
    let daemon_stop = stop.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
        let _ = done_tx.send(
            runtime.block_on(spellbridge::serve::run(settings, daemon_stop)).map_err(|e| e.to_string()),
        );
    });
    let (socket, _) =
        tokio::time::timeout(WAIT, listener.accept()).await.expect("the bot connects").expect("accepts");
    let (read, write) = socket.into_split();
    let mut server = Server { lines: BufReader::new(read).lines(), write, next_id: 0 };
    server.expect("JOIN #magic").await;
    // The metrics follow the transport's own connection state (the `Transport` trait).
    let up = |status: u16, body: &str| status == 200 && body.contains("\"lines\"");
    let (_, health) = spellbridge_tests::harness::endpoint::wait_for(http, "/healthz", WAIT, up)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(health.contains("\"up\":true"), "{health}");

    server.room("alice", "!new rps").await;
    server.expect("SAY #magic alice opens rock-paper-scissors").await;
    server.room("bob", "!join").await;
    server.expect("joins. Both players").await;
    server.private("alice", "!throw rock").await;
    let told = server.expect("TELL").await;
    assert!(told.contains("You throw rock; waiting for your opponent."), "{told}");
    server.private("bob", "!throw paper").await;
    let revealed = server.expect("SAY #magic alice throws rock").await;
    assert_eq!(revealed, "SAY #magic alice throws rock, bob throws paper: bob wins the match!");

    stop.cancel();
    server.expect("QUIT").await;
    tokio::time::timeout(WAIT, done)
        .await
        .expect("the daemon stops")
        .expect("reports")
        .expect("runs cleanly");
}

#[tokio::test]
async fn check_config_connect_tries_a_line_network_as_its_kind_says() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let text = format!("[[line]]\nname = \"lines\"\nserver = \"{address}\"\n");
    let path = std::path::Path::new("/etc/spellbridge/spellbridge.toml");
    let settings = Settings::parse_with(&text, path, &catalogue()).expect("valid");
    let outcomes = spellbridge::probe::connect_all(&settings).await;
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].line, format!("line lines: ok (connected to {address})"));
    assert!(outcomes[0].ok);
    drop(listener);
    let bad = Settings::parse_with("[[line]]\nname = \"x\"\nserver = \"nowhere\"\n", path, &catalogue())
        .expect_err("not an address");
    assert!(bad.to_string().contains("[[line]] `x`: `server` must be an address and port"), "{bad}");
    let unknown = Settings::parse_with(
        "[[line]]\nname = \"x\"\nserver = \"127.0.0.1:1\"\nport = 1\n",
        path,
        &catalogue(),
    )
    .expect_err("unknown key");
    assert!(unknown.to_string().contains("unknown field `port`"), "{unknown}");
}
