//! The IRC transport's registration against a scripted fake server, for what a real
//! server will not do on demand (issue 14): a `CAP LS` split over lines, `sasl=EXTERNAL`
//! only, a forged SCRAM server-final, a `NAK`, `cap-notify` `DEL sasl`, STS policies, a
//! nick in use then freed, a failed login (disconnect, retry), services back later
//! (`CAP NEW sasl`: a login without a reconnect), and ECDSA-NIST256P-CHALLENGE. Each case is a few
//! lines of what the server says and what the bot must answer.

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

const WAIT: Duration = Duration::from_secs(10);
const BOT: &str = "spellbot";

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

    /// 001 and the end of the MOTD as `nick`.
    async fn welcome(&mut self, nick: &str) {
        self.send(&format!(":fake 001 {nick} :Welcome {nick}!{nick}@127.0.0.1")).await;
        self.send(&format!(":fake 376 {nick} :End of MOTD")).await;
    }

    /// The bot's answer to `AUTHENTICATE` data, decoded.
    async fn payload(&mut self) -> String {
        let line = self.expect("AUTHENTICATE ").await;
        let data = line.trim_start_matches("AUTHENTICATE ");
        String::from_utf8(BASE64.decode(data).unwrap_or_else(|e| panic!("{line:?}: {e}"))).expect("utf-8")
    }
}

fn options(port: u16) -> IrcOptions {
    IrcOptions::local("fake", port, BOT, &["#magic"])
}

/// SASL with a password, required.
fn with_password(mut options: IrcOptions) -> IrcOptions {
    options.sasl = Some(SaslOptions {
        account: "bot".to_owned(),
        password: Some("hunter2".to_owned()),
        ecdsa_key: None,
        mechanisms: Vec::new(),
    });
    options.login_required = true;
    options
}

fn start(options: IrcOptions) -> (Arc<IrcTransport>, CancellationToken) {
    let stop = CancellationToken::new();
    let (transport, _task) = IrcTransport::start(options, stop.clone());
    (transport, stop)
}

async fn connection_becomes(transport: &IrcTransport, state: Connection) {
    let mut connection = transport.connection();
    let reached = tokio::time::timeout(WAIT, connection.wait_for(|l| *l == state)).await;
    assert!(reached.is_ok(), "the link never became {state:?}; it is {:?}", *transport.connection().borrow());
}

#[tokio::test]
async fn a_split_cap_ls_is_read_whole_and_only_offered_caps_are_requested() {
    let fake = Fake::new().await;
    let (transport, stop) = start(with_password(options(fake.port())));
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS * :multi-prefix sasl=PLAIN,EXTERNAL").await;
    assert!(
        peer.within(Duration::from_millis(300)).await.is_empty(),
        "nothing is requested before the LS ends"
    );
    peer.send(":fake CAP * LS :account-tag echo-message").await;
    let mut requested = Vec::new();
    for _ in 0..3 {
        requested.push(peer.expect("CAP REQ").await);
    }
    assert_eq!(requested, ["CAP REQ account-tag", "CAP REQ multi-prefix", "CAP REQ sasl"]);
    for cap in ["account-tag", "multi-prefix", "sasl"] {
        peer.send(&format!(":fake CAP * ACK :{cap}")).await;
    }
    // SCRAM is not listed: PLAIN, the strongest left that the config allows.
    assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE PLAIN");
    peer.send("AUTHENTICATE +").await;
    assert_eq!(peer.payload().await, "bot\0bot\0hunter2");
    peer.send(":fake 900 spellbot spellbot!u@h bot :You are now logged in as bot").await;
    peer.send(":fake 903 spellbot :SASL authentication successful").await;
    peer.expect("CAP END").await;
    peer.welcome(BOT).await;
    peer.expect("JOIN #magic").await;
    connection_becomes(&transport, Connection::Up).await;
    peer.within(Duration::from_millis(200)).await;
    assert_eq!(peer.heard.iter().filter(|l| *l == "CAP END").count(), 1, "{:?}", peer.heard);
    assert!(!peer.heard.iter().any(|l| l.contains("echo-message")), "{:?}", peer.heard);
    stop.cancel();
}

#[tokio::test]
async fn sasl_external_only_is_used_with_a_client_certificate_and_never_answered_with_plain() {
    // A password but no certificate: nothing to try, so no login, and no playing.
    let fake = Fake::new().await;
    let (transport, stop) = start(with_password(options(fake.port())));
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl=EXTERNAL").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :sasl").await;
    peer.expect("QUIT").await;
    assert!(!peer.heard.iter().any(|l| l.starts_with("AUTHENTICATE")), "{:?}", peer.heard);
    connection_becomes(&transport, Connection::LoggedOut).await;
    stop.cancel();

    // With a client certificate: EXTERNAL, with an empty authorization identity (the
    // certificate names the account).
    let fake = Fake::new().await;
    let mut options = with_password(options(fake.port()));
    // The fake speaks no TLS: only the certificate's presence matters to the choice.
    options.tls_options.client_cert = Some("client.pem".into());
    let (transport, stop) = start(options);
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl=EXTERNAL").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :sasl").await;
    assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE EXTERNAL");
    peer.send("AUTHENTICATE +").await;
    assert_eq!(peer.expect("AUTHENTICATE ").await, "AUTHENTICATE +");
    peer.send(":fake 903 spellbot :SASL authentication successful").await;
    peer.expect("CAP END").await;
    peer.welcome(BOT).await;
    connection_becomes(&transport, Connection::Up).await;
    stop.cancel();
}

#[tokio::test]
async fn a_forged_scram_server_final_aborts_the_login() {
    let fake = Fake::new().await;
    let (transport, stop) = start(with_password(options(fake.port())));
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl=SCRAM-SHA-256,PLAIN").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :sasl").await;
    assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE SCRAM-SHA-256");
    peer.send("AUTHENTICATE +").await;
    let first = peer.payload().await;
    let nonce = first.strip_prefix("n,,n=bot,r=").unwrap_or_else(|| panic!("client-first: {first:?}"));
    let server_first = format!("r={nonce}fake,s={},i=4096", BASE64.encode(b"salt"));
    peer.send(&format!("AUTHENTICATE {}", BASE64.encode(&server_first))).await;
    let last = peer.payload().await;
    assert!(last.starts_with(&format!("c=biws,r={nonce}fake,p=")), "client-final: {last:?}");
    // A server that does not hold the account's key cannot sign: it makes one up.
    let forged = format!("v={}", BASE64.encode([7u8; 32]));
    peer.send(&format!("AUTHENTICATE {}", BASE64.encode(&forged))).await;
    peer.expect("AUTHENTICATE *").await;
    peer.expect("QUIT").await;
    assert!(!peer.heard.iter().any(|l| l == "CAP END"), "{:?}", peer.heard);
    connection_becomes(&transport, Connection::LoggedOut).await;
    stop.cancel();
}

#[tokio::test]
async fn a_refused_capability_is_done_without_and_an_unrequired_login_plays_on() {
    let fake = Fake::new().await;
    let mut options = with_password(options(fake.port()));
    options.login_required = false;
    let (transport, stop) = start(options);
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl multi-prefix").await;
    peer.expect("CAP REQ multi-prefix").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * NAK :sasl").await;
    peer.send(":fake CAP * ACK :multi-prefix").await;
    peer.expect("CAP END").await;
    assert!(!peer.heard.iter().any(|l| l.starts_with("AUTHENTICATE")), "{:?}", peer.heard);
    peer.welcome(BOT).await;
    connection_becomes(&transport, Connection::Up).await;
    stop.cancel();
}

#[tokio::test]
async fn sasl_withdrawn_by_cap_notify_during_login_means_no_play_and_a_retry() {
    let fake = Fake::new().await;
    let (transport, stop) = start(with_password(options(fake.port())));
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :cap-notify sasl=PLAIN").await;
    peer.expect("CAP REQ cap-notify").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :cap-notify").await;
    peer.send(":fake CAP * ACK :sasl").await;
    peer.expect("AUTHENTICATE PLAIN").await;
    peer.send(":fake CAP * DEL :sasl").await;
    peer.expect("QUIT").await;
    connection_becomes(&transport, Connection::LoggedOut).await;
    // It comes back, within its backoff, and logs in this time.
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl=PLAIN").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :sasl").await;
    peer.expect("AUTHENTICATE PLAIN").await;
    peer.send("AUTHENTICATE +").await;
    peer.payload().await;
    peer.send(":fake 903 spellbot :SASL authentication successful").await;
    peer.expect("CAP END").await;
    peer.welcome(BOT).await;
    connection_becomes(&transport, Connection::Up).await;
    stop.cancel();
}

#[tokio::test]
async fn a_failed_login_disconnects_and_retries() {
    let fake = Fake::new().await;
    let (transport, stop) = start(with_password(options(fake.port())));
    for attempt in 0..2 {
        let mut peer = fake.accept().await;
        peer.hello().await;
        peer.send(":fake CAP * LS :sasl=PLAIN").await;
        peer.expect("CAP REQ sasl").await;
        peer.send(":fake CAP * ACK :sasl").await;
        peer.expect("AUTHENTICATE PLAIN").await;
        peer.send("AUTHENTICATE +").await;
        peer.payload().await;
        peer.send(":fake 904 spellbot :SASL authentication failed").await;
        peer.expect("QUIT").await;
        assert!(!peer.heard.iter().any(|l| l == "CAP END"), "attempt {attempt}: {:?}", peer.heard);
        connection_becomes(&transport, Connection::LoggedOut).await;
    }
    assert!(transport.reconnects() >= 1);
    stop.cancel();
}

/// Reads the first byte a connection sends: 0x16 opens a TLS handshake.
async fn first_byte(listener: &TcpListener) -> u8 {
    let (mut stream, _) =
        tokio::time::timeout(WAIT, listener.accept()).await.expect("a connection").expect("accept");
    let mut byte = [0u8; 1];
    tokio::time::timeout(WAIT, stream.read_exact(&mut byte)).await.expect("a byte").expect("read");
    byte[0]
}

#[tokio::test]
async fn an_sts_policy_on_plaintext_moves_the_bot_to_tls_on_the_named_port() {
    let fake = Fake::new().await;
    let secure = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let tls_port = secure.local_addr().expect("address").port();
    let (_transport, stop) = start(options(fake.port()));
    let mut peer = fake.accept().await;
    peer.hello().await;
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
    assert!(
        tokio::time::timeout(Duration::from_millis(500), fake.0.accept()).await.is_err(),
        "no plaintext retry"
    );
    stop.cancel();
}

#[tokio::test]
async fn a_stored_sts_policy_is_honoured_at_start_and_never_downgraded() {
    let plain = Fake::new().await;
    let secure = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let tls_port = secure.local_addr().expect("address").port();
    let store = Arc::new(InMemory::default());
    let expires = SystemTime::now() + Duration::from_secs(3600);
    store.set("127.0.0.1", Some(StsPolicy { port: tls_port, expires }));
    let mut options = options(plain.port());
    options.sts = Some(store.clone());
    let (_transport, stop) = start(options);
    for _ in 0..2 {
        assert_eq!(first_byte(&secure).await, 0x16, "TLS on the policy's port");
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(500), plain.0.accept()).await.is_err(),
        "no plaintext"
    );
    stop.cancel();
    // An expired policy is not honoured.
    store.set(
        "127.0.0.1",
        Some(StsPolicy { port: tls_port, expires: SystemTime::now() - Duration::from_secs(1) }),
    );
    let mut options = self::options(plain.port());
    options.sts = Some(store);
    let (_transport, stop) = start(options);
    plain.accept().await.hello().await;
    stop.cancel();
}

#[tokio::test]
async fn a_taken_nick_is_taken_back_when_monitor_says_it_is_free() {
    let fake = Fake::new().await;
    let (transport, stop) = start(options(fake.port()));
    let mut peer = fake.accept().await;
    peer.expect("NICK spellbot").await;
    peer.send(":fake 433 * spellbot :Nickname is already in use").await;
    peer.expect("NICK spellbot_").await;
    peer.send(":fake CAP * LS :").await;
    peer.expect("CAP END").await;
    peer.send(":fake 001 spellbot_ :Welcome spellbot_!spellbot@127.0.0.1").await;
    peer.send(":fake 005 spellbot_ MONITOR=100 WHOX :are supported by this server").await;
    peer.send(":fake 376 spellbot_ :End of MOTD").await;
    peer.expect("MONITOR + spellbot").await;
    connection_becomes(&transport, Connection::Up).await;
    assert_eq!(transport.nick(), "spellbot_");
    peer.send(":fake 731 spellbot_ :spellbot").await;
    peer.expect("NICK spellbot").await;
    peer.send(":spellbot_!spellbot@127.0.0.1 NICK :spellbot").await;
    tokio::time::timeout(WAIT, async {
        while transport.nick() != BOT {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the bot has its nick back");
    stop.cancel();
}

#[tokio::test]
async fn services_back_later_log_the_bot_in_on_cap_new_without_a_reconnect() {
    let fake = Fake::new().await;
    let mut options = with_password(options(fake.port()));
    options.login_required = false;
    let (transport, stop) = start(options);
    let mut peer = fake.accept().await;
    peer.hello().await;
    // Services are down: no sasl offered; the bot plays logged out.
    peer.send(":fake CAP * LS :cap-notify").await;
    peer.expect("CAP REQ cap-notify").await;
    peer.send(":fake CAP * ACK :cap-notify").await;
    peer.expect("CAP END").await;
    peer.welcome(BOT).await;
    connection_becomes(&transport, Connection::Up).await;
    // They come back: the server announces sasl and the bot logs in on this connection.
    peer.send(":fake CAP spellbot NEW :sasl=PLAIN").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP spellbot ACK :sasl").await;
    assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE PLAIN");
    peer.send("AUTHENTICATE +").await;
    assert_eq!(peer.payload().await, "bot\0bot\0hunter2");
    peer.send(":fake 900 spellbot spellbot!u@h bot :You are now logged in as bot").await;
    peer.send(":fake 903 spellbot :SASL authentication successful").await;
    // Services leave again once it is logged in: its login stands, nothing ends.
    peer.send(":fake CAP spellbot DEL :sasl").await;
    // Lines are answered in order: the PONG comes after whatever the above caused.
    peer.send("PING :after").await;
    peer.expect("PONG").await;
    assert_eq!(peer.heard.iter().filter(|l| *l == "CAP END").count(), 1, "{:?}", peer.heard);
    assert!(!peer.heard.iter().any(|l| l.starts_with("QUIT")), "{:?}", peer.heard);
    assert_eq!(transport.reconnects(), 0);
    assert_eq!(*transport.connection().borrow(), Connection::Up);
    stop.cancel();
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
    let fake = Fake::new().await;
    let mut options = options(fake.port());
    options.sasl = Some(SaslOptions {
        account: "bot".to_owned(),
        password: None,
        ecdsa_key: Some(key.clone()),
        mechanisms: Vec::new(),
    });
    options.login_required = true;
    let (transport, stop) = start(options);
    let mut peer = fake.accept().await;
    peer.hello().await;
    peer.send(":fake CAP * LS :sasl=PLAIN,ECDSA-NIST256P-CHALLENGE").await;
    peer.expect("CAP REQ sasl").await;
    peer.send(":fake CAP * ACK :sasl").await;
    assert_eq!(peer.expect("AUTHENTICATE").await, "AUTHENTICATE ECDSA-NIST256P-CHALLENGE");
    peer.send("AUTHENTICATE +").await;
    assert_eq!(peer.payload().await, "bot", "the account first");
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
    peer.send(":fake 903 spellbot :SASL authentication successful").await;
    peer.expect("CAP END").await;
    peer.welcome(BOT).await;
    connection_becomes(&transport, Connection::Up).await;
    stop.cancel();
}
