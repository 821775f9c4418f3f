//! The IRC transport's registration against a scripted fake server, for what a real
//! server will not do on demand (issue 14): a `CAP LS` split over lines, `sasl=EXTERNAL`
//! only, a forged SCRAM server-final, a `NAK`, `cap-notify` `DEL sasl`, STS policies, a
//! nick in use then freed, a failed login (disconnect, retry), services back later
//! (`CAP NEW sasl`: a login without a reconnect), and ECDSA-NIST256P-CHALLENGE.
//!
//! Each case is a script of [`Step`]s, what the server says and what the bot must answer,
//! played by one runner ([`Run::play`]); the cases that compute an answer (SCRAM, ECDSA)
//! or watch another port (STS) add a few lines of their own around the script.

use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use spellbridge_adapters::irc::options::IrcOptions;
use spellbridge_adapters::irc::sasl::SaslOptions;
use spellbridge_adapters::irc::sts::{InMemory, StsPolicies, StsPolicy};
use spellbridge_adapters::irc::transport::{Connection, IrcTransport};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::net::TcpListener;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_util::sync::CancellationToken;

use self::Step::*;

const WAIT: Duration = Duration::from_secs(10);
const BOT: &str = "spellbot";

// ---------------------------------------------------------------------------------------
// The fake server and one connection to it.

/// A listening fake server.
struct Fake(TcpListener);

impl Fake {
    async fn new() -> Fake {
        Fake(TcpListener::bind(("127.0.0.1", 0)).await.expect("bind"))
    }

    fn port(&self) -> u16 {
        self.0.local_addr().expect("address").port()
    }

    /// The bot's next connection.
    async fn accept(&self) -> Peer {
        let (stream, _) =
            tokio::time::timeout(WAIT, self.0.accept()).await.expect("the bot connects").expect("accept");
        let (read, write) = stream.into_split();
        Peer { lines: BufReader::new(read).lines(), write, heard: Vec::new() }
    }
}

/// One connection from the bot.
struct Peer {
    lines: Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
    /// Every line the bot sent on it.
    heard: Vec<String>,
}

impl Peer {
    /// Reads until the bot sends a line starting with `start`; returns it.
    async fn expect(&mut self, start: &str) -> String {
        loop {
            match tokio::time::timeout(WAIT, self.lines.next_line()).await {
                Ok(Ok(Some(line))) => {
                    self.heard.push(line.clone());
                    if line.starts_with(start) {
                        return line;
                    }
                }
                _ => panic!("the bot never sent {start:?}; it sent:\n  {}", self.heard.join("\n  ")),
            }
        }
    }

    /// The lines the bot sends within `time` (until it closes).
    async fn within(&mut self, time: Duration) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(Ok(Some(line))) = tokio::time::timeout(time, self.lines.next_line()).await {
            self.heard.push(line.clone());
            lines.push(line);
        }
        lines
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(format!("{line}\r\n").as_bytes()).await.expect("write");
    }

    /// The start every registration has: CAP LS 302, NICK, USER.
    async fn hello(&mut self) {
        self.expect("CAP LS 302").await;
        self.expect("USER ").await;
    }

    /// 001 and the end of the MOTD, to the bot's configured nick.
    async fn welcome(&mut self) {
        self.send(&format!(":fake 001 {BOT} :Welcome {BOT}!{BOT}@127.0.0.1")).await;
        self.send(&format!(":fake 376 {BOT} :End of MOTD")).await;
    }

    /// The bot's answer to `AUTHENTICATE` data, decoded.
    async fn payload(&mut self) -> String {
        let line = self.expect("AUTHENTICATE ").await;
        let data = line.trim_start_matches("AUTHENTICATE ");
        String::from_utf8(BASE64.decode(data).unwrap_or_else(|e| panic!("{line:?}: {e}"))).expect("utf-8")
    }
}

// ---------------------------------------------------------------------------------------
// The bot's options.

fn plain(port: u16) -> IrcOptions {
    IrcOptions::local("fake", port, BOT, &["#magic"])
}

/// SASL with a password, required.
fn password_required(port: u16) -> IrcOptions {
    let mut options = plain(port);
    options.sasl = Some(SaslOptions {
        account: "bot".to_owned(),
        password: Some("hunter2".to_owned()),
        ecdsa_key: None,
        mechanisms: Vec::new(),
    });
    options.login_required = true;
    options
}

/// SASL with a password, not required: without a login the bot plays on.
fn password_optional(port: u16) -> IrcOptions {
    IrcOptions { login_required: false, ..password_required(port) }
}

/// A password and a client certificate, login required.
fn password_and_certificate(port: u16) -> IrcOptions {
    let mut options = password_required(port);
    // The fake speaks no TLS: only the certificate's presence matters to the choice.
    options.tls_options.client_cert = Some("client.pem".into());
    options
}

// ---------------------------------------------------------------------------------------
// The script and its runner.

/// One step of a case: what the fake server says, or what the bot must have done.
#[derive(Debug)]
enum Step {
    /// Accepts the bot's next connection (the first is accepted by the first step that
    /// needs one).
    Connect,
    /// The bot sends `CAP LS 302` then `USER` (and `NICK`): the start of a registration.
    Hello,
    /// The server offers these capabilities in one `CAP * LS` line.
    Offer(&'static str),
    /// The server says this line.
    Say(&'static str),
    /// The bot sends a line starting with this (what it sends before is kept).
    Hear(&'static str),
    /// The bot's next line starting with the first is exactly the second.
    Next(&'static str, &'static str),
    /// The bot requests this capability (`CAP REQ`) and the server acknowledges it.
    Grant(&'static str),
    /// The bot answers `AUTHENTICATE` data with this payload (decoded).
    Payload(&'static str),
    /// SASL PLAIN with the configured password: the mechanism, then `bot\0bot\0hunter2`.
    Plain,
    /// The server says 903 (SASL authentication successful).
    SaslSuccess,
    /// The server says 001 and the end of the MOTD to the bot's configured nick.
    Welcome,
    /// The bot ends the capability negotiation (`CAP END`), the server welcomes it
    /// ([`Welcome`]), and its connection is up.
    Registered,
    /// The bot sends nothing at all for this many milliseconds.
    Silent(u64),
    /// Reads whatever the bot sends for this many milliseconds.
    Drain(u64),
    /// No line the bot sent on this connection so far starts with this.
    Never(&'static str),
    /// No line the bot sent on this connection so far contains this.
    NeverContains(&'static str),
    /// Exactly this many lines the bot sent on this connection so far are this line.
    Count(&'static str, usize),
    /// The transport's connection state becomes this (within [`WAIT`]).
    Becomes(Connection),
    /// The transport's connection state is this now.
    Is(Connection),
    /// The bot's nick is this now.
    NickIs(&'static str),
    /// The bot's nick becomes this (within [`WAIT`]).
    NickBecomes(&'static str),
    /// The transport has reconnected a number of times in this range.
    Reconnects(RangeInclusive<u64>),
}

/// A bot started against a fake server, and its current connection there. Dropping it
/// stops the bot.
struct Run {
    fake: Fake,
    transport: Arc<IrcTransport>,
    stop: CancellationToken,
    peer: Option<Peer>,
}

impl Drop for Run {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Run {
    /// Starts a fake server and a bot with `options` for its port.
    async fn start(options: impl FnOnce(u16) -> IrcOptions) -> Run {
        let fake = Fake::new().await;
        let stop = CancellationToken::new();
        let (transport, _task) = IrcTransport::start(options(fake.port()), stop.clone());
        Run { fake, transport, stop, peer: None }
    }

    /// The current connection (accepting the first one).
    async fn peer(&mut self) -> &mut Peer {
        if self.peer.is_none() {
            self.peer = Some(self.fake.accept().await);
        }
        self.peer.as_mut().expect("accepted")
    }

    /// Plays `script` in order.
    async fn play(&mut self, script: &[Step]) {
        for step in script {
            self.step(step).await;
        }
    }

    async fn step(&mut self, step: &Step) {
        match step {
            Connect => self.peer = Some(self.fake.accept().await),
            Hello => self.peer().await.hello().await,
            Offer(caps) => self.peer().await.send(&format!(":fake CAP * LS :{caps}")).await,
            Say(line) => self.peer().await.send(line).await,
            Hear(start) => {
                self.peer().await.expect(start).await;
            }
            Next(start, line) => assert_eq!(self.peer().await.expect(start).await, *line, "{step:?}"),
            Grant(cap) => {
                let peer = self.peer().await;
                peer.expect(&format!("CAP REQ {cap}")).await;
                peer.send(&format!(":fake CAP * ACK :{cap}")).await;
            }
            Payload(payload) => assert_eq!(self.peer().await.payload().await, *payload, "{step:?}"),
            Plain => {
                let peer = self.peer().await;
                assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE PLAIN");
                peer.send("AUTHENTICATE +").await;
                assert_eq!(peer.payload().await, "bot\0bot\0hunter2");
            }
            SaslSuccess => self.peer().await.send(":fake 903 spellbot :SASL authentication successful").await,
            Welcome => self.peer().await.welcome().await,
            Registered => {
                let peer = self.peer().await;
                peer.expect("CAP END").await;
                peer.welcome().await;
                connection_becomes(&self.transport, Connection::Up).await;
            }
            Silent(ms) => {
                let sent = self.peer().await.within(Duration::from_millis(*ms)).await;
                assert!(sent.is_empty(), "{step:?}: the bot sent {sent:?}");
            }
            Drain(ms) => {
                self.peer().await.within(Duration::from_millis(*ms)).await;
            }
            Never(start) => {
                let heard = &self.peer().await.heard;
                assert!(!heard.iter().any(|l| l.starts_with(start)), "{step:?}: {heard:?}");
            }
            NeverContains(part) => {
                let heard = &self.peer().await.heard;
                assert!(!heard.iter().any(|l| l.contains(part)), "{step:?}: {heard:?}");
            }
            Count(line, count) => {
                let heard = &self.peer().await.heard;
                assert_eq!(heard.iter().filter(|l| l == line).count(), *count, "{step:?}: {heard:?}");
            }
            Becomes(state) => connection_becomes(&self.transport, *state).await,
            Is(state) => assert_eq!(*self.transport.connection().borrow(), *state, "{step:?}"),
            NickIs(nick) => assert_eq!(self.transport.nick(), *nick, "{step:?}"),
            NickBecomes(nick) => {
                let transport = &self.transport;
                tokio::time::timeout(WAIT, async {
                    while transport.nick() != *nick {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                })
                .await
                .unwrap_or_else(|_| panic!("{step:?}: the nick is still {}", transport.nick()));
            }
            Reconnects(range) => {
                let reconnects = self.transport.reconnects();
                assert!(range.contains(&reconnects), "{step:?}: {reconnects} reconnects");
            }
        }
    }
}

async fn connection_becomes(transport: &IrcTransport, state: Connection) {
    let mut connection = transport.connection();
    let reached = tokio::time::timeout(WAIT, connection.wait_for(|l| *l == state)).await;
    assert!(
        reached.is_ok(),
        "the connection never became {state:?}; it is {:?}",
        *transport.connection().borrow()
    );
}

/// The scripted cases: `name(options) [steps]`, one test each; a case with several
/// `(options) [steps]` starts a fresh server and bot for each.
macro_rules! scripted {
    ($($(#[$doc:meta])* $name:ident $(($options:expr) [$($step:expr),* $(,)?])+)*) => {$(
        $(#[$doc])*
        #[tokio::test]
        async fn $name() {
            $(Run::start($options).await.play(&[$($step),*]).await;)+
        }
    )*};
}

// ---------------------------------------------------------------------------------------
// The cases.

scripted! {
    a_split_cap_ls_is_read_whole_and_only_offered_caps_are_requested (password_required) [
        Hello,
        Say(":fake CAP * LS * :multi-prefix sasl=PLAIN,EXTERNAL"),
        // Nothing is requested before the LS ends.
        Silent(300),
        Offer("account-tag echo-message"),
        Next("CAP REQ", "CAP REQ account-tag"),
        Next("CAP REQ", "CAP REQ multi-prefix"),
        Next("CAP REQ", "CAP REQ sasl"),
        Say(":fake CAP * ACK :account-tag"),
        Say(":fake CAP * ACK :multi-prefix"),
        Say(":fake CAP * ACK :sasl"),
        // SCRAM is not listed: PLAIN, the strongest left that the config allows.
        Plain,
        Say(":fake 900 spellbot spellbot!u@h bot :You are now logged in as bot"),
        SaslSuccess,
        Hear("CAP END"),
        Welcome,
        Hear("JOIN #magic"),
        Becomes(Connection::Up),
        Drain(200),
        Count("CAP END", 1),
        NeverContains("echo-message"),
    ]

    /// A password but no certificate: nothing to try, so no login, and no playing. With a
    /// client certificate: EXTERNAL, with an empty authorization identity (the
    /// certificate names the account).
    sasl_external_only_is_used_with_a_client_certificate_and_never_answered_with_plain
    (password_required) [
        Hello,
        Offer("sasl=EXTERNAL"),
        Grant("sasl"),
        Hear("QUIT"),
        Never("AUTHENTICATE"),
        Becomes(Connection::LoggedOut),
    ]
    (password_and_certificate) [
        Hello,
        Offer("sasl=EXTERNAL"),
        Grant("sasl"),
        Next("AUTHENTICATE", "AUTHENTICATE EXTERNAL"),
        Say("AUTHENTICATE +"),
        Next("AUTHENTICATE ", "AUTHENTICATE +"),
        SaslSuccess,
        Registered,
    ]

    a_refused_capability_is_done_without_and_an_unrequired_login_plays_on (password_optional) [
        Hello,
        Offer("sasl multi-prefix"),
        Hear("CAP REQ multi-prefix"),
        Hear("CAP REQ sasl"),
        Say(":fake CAP * NAK :sasl"),
        Say(":fake CAP * ACK :multi-prefix"),
        Registered,
        Never("AUTHENTICATE"),
    ]

    /// Then it comes back, within its backoff, and logs in this time.
    sasl_withdrawn_by_cap_notify_during_login_means_no_play_and_a_retry (password_required) [
        Hello,
        Offer("cap-notify sasl=PLAIN"),
        Hear("CAP REQ cap-notify"),
        Hear("CAP REQ sasl"),
        Say(":fake CAP * ACK :cap-notify"),
        Say(":fake CAP * ACK :sasl"),
        Hear("AUTHENTICATE PLAIN"),
        Say(":fake CAP * DEL :sasl"),
        Hear("QUIT"),
        Becomes(Connection::LoggedOut),
        Connect,
        Hello,
        Offer("sasl=PLAIN"),
        Grant("sasl"),
        Plain,
        SaslSuccess,
        Registered,
    ]

    a_taken_nick_is_taken_back_when_monitor_says_it_is_free (plain) [
        Hear("NICK spellbot"),
        Say(":fake 433 * spellbot :Nickname is already in use"),
        Hear("NICK spellbot_"),
        Say(":fake CAP * LS :"),
        Hear("CAP END"),
        Say(":fake 001 spellbot_ :Welcome spellbot_!spellbot@127.0.0.1"),
        Say(":fake 005 spellbot_ MONITOR=100 WHOX :are supported by this server"),
        Say(":fake 376 spellbot_ :End of MOTD"),
        Hear("MONITOR + spellbot"),
        Becomes(Connection::Up),
        NickIs("spellbot_"),
        Say(":fake 731 spellbot_ :spellbot"),
        Hear("NICK spellbot"),
        Say(":spellbot_!spellbot@127.0.0.1 NICK :spellbot"),
        NickBecomes(BOT),
    ]

    services_back_later_log_the_bot_in_on_cap_new_without_a_reconnect (password_optional) [
        Hello,
        // Services are down: no sasl offered; the bot plays logged out.
        Offer("cap-notify"),
        Grant("cap-notify"),
        Registered,
        // They come back: the server announces sasl and the bot logs in on this connection.
        Say(":fake CAP spellbot NEW :sasl=PLAIN"),
        Hear("CAP REQ sasl"),
        Say(":fake CAP spellbot ACK :sasl"),
        Plain,
        Say(":fake 900 spellbot spellbot!u@h bot :You are now logged in as bot"),
        SaslSuccess,
        // Services leave again once it is logged in: its login stands, nothing ends.
        Say(":fake CAP spellbot DEL :sasl"),
        // Lines are answered in order: the PONG comes after whatever the above caused.
        Say("PING :after"),
        Hear("PONG"),
        Count("CAP END", 1),
        Never("QUIT"),
        Reconnects(0..=0),
        Is(Connection::Up),
    ]
}

/// A server's `ERROR` ends the link even while the server keeps the socket open: the bot
/// reconnects at once (its backoff), not after its ping timeout (90 s here).
#[tokio::test]
async fn an_error_from_the_server_drops_the_link_and_reconnects_at_once() {
    let mut run = Run::start(plain).await;
    run.play(&[Hello, Offer(""), Registered]).await;
    // The first connection stays open on the server's side while the bot reconnects.
    let mut first = run.peer.take().expect("the first connection");
    first.send("ERROR :Closing link: (spellbot@127.0.0.1) [Killed (oper (bye))]").await;
    let again = tokio::time::timeout(Duration::from_secs(5), run.fake.0.accept()).await;
    assert!(
        again.is_ok(),
        "no new connection within 5 s of ERROR: {:?}",
        *run.transport.connection().borrow()
    );
    let (stream, _) = again.expect("within 5 s").expect("accept");
    let (read, write) = stream.into_split();
    run.peer = Some(Peer { lines: BufReader::new(read).lines(), write, heard: Vec::new() });
    run.play(&[Hello, Offer(""), Registered, Reconnects(1..=1)]).await;
    drop(first);
}

/// One login that the server refuses: the bot quits without `CAP END` and reads logged out.
const REFUSED_LOGIN: &[Step] = &[
    Connect,
    Hello,
    Offer("sasl=PLAIN"),
    Grant("sasl"),
    Plain,
    Say(":fake 904 spellbot :SASL authentication failed"),
    Hear("QUIT"),
    Never("CAP END"),
    Becomes(Connection::LoggedOut),
];

#[tokio::test]
async fn a_failed_login_disconnects_and_retries() {
    let mut run = Run::start(password_required).await;
    for _attempt in 0..2 {
        run.play(REFUSED_LOGIN).await;
    }
    run.play(&[Reconnects(1..=u64::MAX)]).await;
}

/// The start of a SASL login: the server offers `offer` and grants `sasl`, the bot's
/// first `AUTHENTICATE` is exactly `mechanism`, and the server asks for the payload.
fn sasl_offered(offer: &'static str, mechanism: &'static str) -> [Step; 5] {
    [Hello, Offer(offer), Grant("sasl"), Next("AUTHENTICATE", mechanism), Say("AUTHENTICATE +")]
}

#[tokio::test]
async fn a_forged_scram_server_final_aborts_the_login() {
    let mut run = Run::start(password_required).await;
    run.play(&sasl_offered("sasl=SCRAM-SHA-256,PLAIN", "AUTHENTICATE SCRAM-SHA-256")).await;
    let peer = run.peer().await;
    let first = peer.payload().await;
    let nonce = first.strip_prefix("n,,n=bot,r=").unwrap_or_else(|| panic!("client-first: {first:?}"));
    let server_first = format!("r={nonce}fake,s={},i=4096", BASE64.encode(b"salt"));
    peer.send(&format!("AUTHENTICATE {}", BASE64.encode(&server_first))).await;
    let last = peer.payload().await;
    assert!(last.starts_with(&format!("c=biws,r={nonce}fake,p=")), "client-final: {last:?}");
    // A server that does not hold the account's key cannot sign: it makes one up.
    let forged = format!("v={}", BASE64.encode([7u8; 32]));
    peer.send(&format!("AUTHENTICATE {}", BASE64.encode(&forged))).await;
    run.play(&[Hear("AUTHENTICATE *"), Hear("QUIT"), Never("CAP END"), Becomes(Connection::LoggedOut)]).await;
}

/// A P-256 key made by openssl, as the README says, and its public key as NickServ
/// `SET PUBKEY` takes it (base64 of the compressed point), read back by openssl.
fn openssl_ecdsa_key(dir: &std::path::Path) -> (std::path::PathBuf, Vec<u8>) {
    let key = dir.join("bot.pem");
    let made = std::process::Command::new("openssl")
        .args(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out"])
        .arg(&key)
        .status()
        .expect("openssl runs");
    assert!(made.success(), "openssl ecparam");
    let public = std::process::Command::new("openssl")
        .args(["ec", "-pubout", "-conv_form", "compressed", "-outform", "DER", "-in"])
        .arg(&key)
        .output()
        .expect("openssl runs");
    assert!(public.status.success(), "openssl ec -pubout");
    // The SubjectPublicKeyInfo ends with the 33-byte point.
    let point = public.stdout[public.stdout.len() - 33..].to_vec();
    (key, point)
}

#[tokio::test]
async fn ecdsa_nist256p_challenge_signs_the_challenge_with_the_key_file() {
    use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
    let dir = tempfile::tempdir().expect("dir");
    let (key, point) = openssl_ecdsa_key(dir.path());
    let key_file = key.clone();
    let mut run = Run::start(move |port| {
        let mut options = plain(port);
        options.sasl = Some(SaslOptions {
            account: "bot".to_owned(),
            password: None,
            ecdsa_key: Some(key_file),
            mechanisms: Vec::new(),
        });
        options.login_required = true;
        options
    })
    .await;
    run.play(&sasl_offered("sasl=PLAIN,ECDSA-NIST256P-CHALLENGE", "AUTHENTICATE ECDSA-NIST256P-CHALLENGE"))
        .await;
    run.play(&[Payload("bot")]).await; // the account first
    let peer = run.peer().await;
    let challenge = [0x5a_u8; 32];
    peer.send(&format!("AUTHENTICATE {}", BASE64.encode(challenge))).await;
    let line = peer.expect("AUTHENTICATE ").await;
    let der = BASE64.decode(line.trim_start_matches("AUTHENTICATE ")).expect("base64");
    // Checked as Atheme checks it: the challenge is the digest (ECDSA_verify).
    let public = p256::ecdsa::VerifyingKey::from_sec1_bytes(&point).expect("openssl's point");
    let signature = p256::ecdsa::Signature::from_der(&der).expect("a DER signature");
    assert!(public.verify_prehash(&challenge, &signature).is_ok(), "the signature verifies");
    assert!(public.verify_prehash(&[0u8; 32], &signature).is_err(), "and only for this challenge");
    let shown = spellbridge_adapters::irc::ecdsa::EcdsaKey::load(&key).expect("key").public_key();
    assert_eq!(BASE64.decode(shown).expect("base64"), point, "the key for SET PUBKEY is openssl's");
    run.play(&[SaslSuccess, Registered]).await;
}

// ---------------------------------------------------------------------------------------
// STS: the bot moves to another port, where a second listener watches for TLS.

/// A listener standing for the TLS port, and its port.
async fn tls_listener() -> (TcpListener, u16) {
    let secure = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let port = secure.local_addr().expect("address").port();
    (secure, port)
}

/// Reads the first byte a connection sends: 0x16 opens a TLS handshake.
async fn first_byte(listener: &TcpListener) -> u8 {
    let (mut stream, _) =
        tokio::time::timeout(WAIT, listener.accept()).await.expect("a connection").expect("accept");
    let mut byte = [0u8; 1];
    tokio::time::timeout(WAIT, stream.read_exact(&mut byte)).await.expect("a byte").expect("read");
    byte[0]
}

/// True when the bot connects to `fake` in plaintext within half a second.
async fn connects_in_plaintext(fake: &Fake) -> bool {
    tokio::time::timeout(Duration::from_millis(500), fake.0.accept()).await.is_ok()
}

#[tokio::test]
async fn an_sts_policy_on_plaintext_moves_the_bot_to_tls_on_the_named_port() {
    let (secure, tls_port) = tls_listener().await;
    let mut run = Run::start(plain).await;
    run.play(&[Hello]).await;
    let peer = run.peer().await;
    peer.send(&format!(":fake CAP * LS :sts=port={tls_port},duration=300 multi-prefix")).await;
    assert!(
        peer.within(Duration::from_millis(500)).await.iter().all(|l| !l.starts_with("CAP REQ")),
        "{:?}",
        peer.heard
    );
    assert_eq!(first_byte(&secure).await, 0x16, "a TLS ClientHello on the STS port");
    // The TLS connection fails (this listener speaks no TLS): it is retried with TLS,
    // never in plaintext.
    assert_eq!(first_byte(&secure).await, 0x16);
    assert!(!connects_in_plaintext(&run.fake).await, "no plaintext retry");
}

#[tokio::test]
async fn a_stored_sts_policy_is_honoured_at_start_and_never_downgraded() {
    let (secure, tls_port) = tls_listener().await;
    let store = Arc::new(InMemory::default());
    let expires = SystemTime::now() + Duration::from_secs(3600);
    store.set("127.0.0.1", Some(StsPolicy { port: tls_port, expires }));
    let with_store = |store: Arc<InMemory>| move |port| IrcOptions { sts: Some(store), ..plain(port) };
    let run = Run::start(with_store(store.clone())).await;
    for _ in 0..2 {
        assert_eq!(first_byte(&secure).await, 0x16, "TLS on the policy's port");
    }
    assert!(!connects_in_plaintext(&run.fake).await, "no plaintext");
    drop(run);
    // An expired policy is not honoured.
    store.set(
        "127.0.0.1",
        Some(StsPolicy { port: tls_port, expires: SystemTime::now() - Duration::from_secs(1) }),
    );
    Run::start(with_store(store)).await.play(&[Hello]).await;
}
