//! The operations endpoint and logs of `spellbridge run` as a child process: `/healthz`
//! follows a real InspIRCd going down and coming back, `/metrics` counts a command from
//! a raw IRC client, and `[log] format = "json"` writes one JSON object per stderr line.
//!
//! These need InspIRCd (`tests/scripts/install-inspircd.sh`); without it they fail with
//! the harness's message, they never skip.

use std::time::{Duration, Instant};

use spellbridge_tests::harness::daemon::Daemon;
use spellbridge_tests::harness::endpoint;
use spellbridge_tests::harness::inspircd::InspIrcd;
use spellbridge_tests::harness::irc_client::IrcClient;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const BOT: &str = "spellbridge";
const ROOM: &str = "#magic";

/// The daemon (the shared harness's child process) and its endpoint's port.
struct Ops {
    daemon: Daemon,
    http: u16,
}

impl Ops {
    /// Starts `spellbridge run` with `[http] listen` on a free loopback port; `config` is
    /// the rest of the config.
    fn start(config: &str) -> Ops {
        let http = endpoint::free_port().unwrap_or_else(|e| panic!("{e}"));
        let config = format!(
            "prefix = \"!\"\n[store]\npath = \"games.db\"\n[http]\nlisten = \"127.0.0.1:{http}\"\n{config}\n"
        );
        let daemon = Daemon::start(BIN, &config).unwrap_or_else(|e| panic!("{e}"));
        Ops { daemon, http }
    }

    fn log(&self) -> String {
        self.daemon.log()
    }

    /// `GET path` on the endpoint: status and body, or `None` while nothing answers.
    async fn get(&self, path: &str) -> Option<(u16, String)> {
        endpoint::get(self.http, path).await
    }

    /// Polls `GET path` (bounded by `limit`) until `done` holds; panics with the last answer.
    async fn wait_for(&self, path: &str, limit: Duration, done: impl Fn(u16, &str) -> bool) -> (u16, String) {
        endpoint::wait_for(self.http, path, limit, done)
            .await
            .unwrap_or_else(|e| panic!("{e}\ndaemon log:\n{}", self.log()))
    }

    /// SIGTERM, then waits (bounded) for a clean exit; returns whether it exited cleanly.
    fn terminate(&mut self) -> bool {
        self.daemon.terminate(Duration::from_secs(10)).is_ok_and(|status| status.success())
    }
}

/// The value of the sample `name` (with its labels, as written) in a metrics text.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_follows_the_irc_server_and_metrics_count_a_command() {
    let mut irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let daemon = Ops::start(&format!(
        "[[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\nreconnect_delay = \"1s\"\n[irc.flood]\nenabled = false\n",
        irc.port()
    ));
    let (_, body) = daemon.wait_for("/healthz", Duration::from_secs(30), |status, _| status == 200).await;
    let health: serde_json::Value = serde_json::from_str(&body).expect("healthz is JSON");
    assert_eq!(health["networks"]["test"]["up"], true, "{body}");
    assert_eq!(daemon.get("/nowhere").await.map(|(status, _)| status), Some(404));

    let mut alice = IrcClient::connect(irc.port(), "alice").await.expect("alice connects");
    alice.join(ROOM).await.expect("alice joins");
    wait_for_answer(&mut alice, &daemon).await;
    let (_, metrics) = daemon
        .wait_for("/metrics", Duration::from_secs(10), |_, text| {
            sample(text, "spellbridge_messages_out_total{network=\"test\"}").is_some_and(|n| n >= 1.0)
        })
        .await;
    let at_least_one = |name: &str| {
        assert!(
            sample(&metrics, name).is_some_and(|n| n >= 1.0),
            "{name} should be at least 1 in:\n{metrics}"
        )
    };
    at_least_one("spellbridge_messages_in_total{network=\"test\"}");
    at_least_one("spellbridge_commands_total{outcome=\"query\"}");
    at_least_one("spellbridge_command_latency_seconds_count");
    at_least_one("spellbridge_network_up{network=\"test\"}");
    assert!(metrics.contains("spellbridge_command_latency_seconds_bucket{le=\"0.0001\"}"), "{metrics}");

    irc.stop().expect("stop the server");
    let (_, body) = daemon
        .wait_for("/healthz", Duration::from_secs(30), |status, body| {
            status == 503 && body.contains("\"test\"")
        })
        .await;
    let health: serde_json::Value = serde_json::from_str(&body).expect("healthz is JSON");
    assert_eq!(health["down"], serde_json::json!(["test"]), "{body}");
    assert_eq!(health["status"], "unhealthy", "{body}");

    irc.restart().expect("start the server again");
    daemon.wait_for("/healthz", Duration::from_secs(90), |status, _| status == 200).await;
    let (_, metrics) = daemon.get("/metrics").await.expect("metrics");
    assert!(
        sample(&metrics, "spellbridge_reconnects_total{network=\"test\"}").is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_log_format_writes_one_json_object_per_line() {
    let mut daemon = Ops::start("[log]\nformat = \"json\"\n");
    // No network configured: healthy as soon as it serves.
    daemon.wait_for("/healthz", Duration::from_secs(30), |status, _| status == 200).await;
    assert!(daemon.terminate(), "the daemon stops cleanly on SIGTERM; its log:\n{}", daemon.log());
    let log = daemon.log();
    // The harness heads each start with `=== start N ===`; every other line is the daemon's.
    let lines: Vec<&str> =
        log.lines().filter(|line| !line.trim().is_empty() && !line.starts_with("=== ")).collect();
    assert!(lines.len() >= 3, "expected several log lines:\n{log}");
    for line in &lines {
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}\nwhole log:\n{log}"));
        assert!(value["level"].is_string() && value["message"].is_string(), "{line}");
    }
    assert!(log.contains("store loaded") && log.contains("serving /healthz and /metrics"), "{log}");
}

/// A connection to the endpoint from `source` (any 127.x.y.z: Linux routes all of
/// 127.0.0.0/8 to loopback, so each is another client address).
async fn connect_from(source: &str, port: u16) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind(format!("{source}:0").parse().expect("address")).expect("bind the client address");
    socket.connect(([127, 0, 0, 1], port).into()).await.expect("connect")
}

/// One `GET path` on a kept-alive connection: the status and body, read by its length,
/// leaving the connection open. `None` when the server closed it or sent no whole answer
/// within `limit`.
async fn keep_alive_get(
    stream: &mut tokio::net::TcpStream,
    path: &str,
    limit: Duration,
) -> Option<(u16, String)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let read = async {
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let n = stream.read(&mut buffer).await.ok()?;
            if n == 0 {
                return None;
            }
            answer.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&answer).into_owned();
            let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
            let length: usize = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
            })?;
            if body.len() >= length {
                return Some((head.split(' ').nth(1)?.parse().ok()?, body.to_owned()));
            }
        }
    };
    tokio::time::timeout(limit, read).await.ok()?
}

/// Waits (bounded) for the server to close `stream`; how long that took.
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buffer = [0u8; 256];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keep_alive_connections_from_one_address_do_not_stop_healthz_for_another() {
    // The safe defaults: 8 per address, 64 in all, idle 5 s, head 10 s.
    let daemon = Ops::start("");
    daemon.wait_for("/healthz", Duration::from_secs(30), |status, _| status == 200).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..70 {
        let mut stream = connect_from("127.0.0.1", daemon.http).await;
        match keep_alive_get(&mut stream, "/healthz", Duration::from_secs(2)).await {
            Some((200, _)) => held.push(stream),
            Some((503, body)) => {
                assert!(body.contains("connections_per_ip"), "the refusal says which setting: {body}");
                refused += 1;
            }
            other => panic!("GET /healthz answered {other:?}; log:\n{}", daemon.log()),
        }
    }
    assert_eq!((held.len(), refused), (8, 62), "one address holds at most 8 connections");
    // The 8 sit idle, kept alive; another client is answered at once, long before the
    // idle timeout could have freed anything.
    let started = Instant::now();
    let mut other = connect_from("127.0.0.2", daemon.http).await;
    let answer = keep_alive_get(&mut other, "/healthz", Duration::from_secs(2)).await;
    assert_eq!(answer.map(|(status, _)| status), Some(200), "log:\n{}", daemon.log());
    assert!(started.elapsed() < Duration::from_secs(2), "answered in {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_after_idle_timeout() {
    let daemon = Ops::start("idle_timeout = \"1s\"\nread_timeout = \"30s\"\n");
    daemon.wait_for("/healthz", Duration::from_secs(30), |status, _| status == 200).await;
    // Kept alive after an answer, then silent.
    let mut kept = connect_from("127.0.0.1", daemon.http).await;
    let answer = keep_alive_get(&mut kept, "/metrics", Duration::from_secs(2)).await;
    assert_eq!(answer.map(|(status, _)| status), Some(200));
    let closed = closed_within(&mut kept, Duration::from_secs(5)).await;
    assert!(
        closed.is_some_and(|after| after >= Duration::from_millis(800) && after < Duration::from_secs(3)),
        "a kept-alive connection is closed about 1 s after its last answer, not {closed:?}"
    );
    // Opened and never used.
    let mut silent = connect_from("127.0.0.1", daemon.http).await;
    let closed = closed_within(&mut silent, Duration::from_secs(5)).await;
    assert!(
        closed.is_some_and(|after| after >= Duration::from_millis(800) && after < Duration::from_secs(3)),
        "a connection that sends nothing is closed after about 1 s, not {closed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_address_cap_refuses_the_excess_and_frees_a_place_on_close() {
    let daemon = Ops::start("connections_per_ip = 3\n");
    daemon.wait_for("/healthz", Duration::from_secs(30), |status, _| status == 200).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut stream = connect_from("127.0.0.3", daemon.http).await;
        let answer = keep_alive_get(&mut stream, "/healthz", Duration::from_secs(2)).await;
        assert_eq!(answer.map(|(status, _)| status), Some(200));
        held.push(stream);
    }
    let mut fourth = connect_from("127.0.0.3", daemon.http).await;
    let (status, body) =
        keep_alive_get(&mut fourth, "/healthz", Duration::from_secs(2)).await.expect("an answer");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("at most 3 at once ([http] connections_per_ip)"), "{body}");
    // Held connections still work, and closing one frees its place.
    let again = keep_alive_get(&mut held[0], "/healthz", Duration::from_secs(2)).await;
    assert_eq!(again.map(|(status, _)| status), Some(200));
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut stream = connect_from("127.0.0.3", daemon.http).await;
        match keep_alive_get(&mut stream, "/healthz", Duration::from_secs(2)).await {
            Some((200, _)) => break,
            other => assert!(Instant::now() < deadline, "no place freed: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 15: SIGTERM returns as soon as the outbox is empty. The drain used to wait out
/// its whole 5 s timeout (the loop kept a sender of the couriers' reports itself, so
/// waiting for the last report never ended) even with nothing queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_returns_as_soon_as_the_outbox_is_empty() {
    let irc = InspIrcd::start().unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
    let mut daemon = Ops::start(&format!(
        "[[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\nport = {}\ntls = false\nnick = \"{BOT}\"\n\
         channels = [\"{ROOM}\"]\nrequire_account = false\nreconnect_delay = \"1s\"\n[irc.flood]\nenabled = false\n",
        irc.port()
    ));
    let mut alice = IrcClient::connect(irc.port(), "alice").await.expect("alice connects");
    alice.join(ROOM).await.expect("alice joins");
    wait_for_answer(&mut alice, &daemon).await;
    // Every answer was sent and reported: the outbox is empty.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    assert!(daemon.terminate(), "the daemon stops cleanly on SIGTERM; its log:\n{}", daemon.log());
    let took = asked.elapsed();
    eprintln!("SIGTERM to exit with an empty outbox: {took:?}");
    assert!(took < Duration::from_millis(2500), "SIGTERM took {took:?}; its log:\n{}", daemon.log());
    let connection = rusqlite::Connection::open(daemon.daemon.path("games.db")).expect("sqlite opens");
    let unsent: i64 = connection.query_row("SELECT COUNT(*) FROM outbox", [], |r| r.get(0)).expect("count");
    assert_eq!(unsent, 0, "every answer was sent and marked sent");
    assert!(daemon.log().contains("stopped"), "{}", daemon.log());
}

/// Sends `!games` until the bot answers (it has joined once it does): each try is a query.
async fn wait_for_answer(alice: &mut IrcClient, daemon: &Ops) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the bot never answered; its log:\n{}", daemon.log());
        alice.privmsg(ROOM, "!games").await.expect("send");
        if alice
            .expect_privmsg_matching(|m| m.from == BOT && m.text.contains("Games:"), Duration::from_secs(1))
            .await
            .is_ok()
        {
            break;
        }
    }
}
