//! Connecting as an operator checks it (issue 14): `spellbridge check-config --connect`
//! against the real InspIRCd with Atheme (logged in), a closed port (refused), a TLS
//! listener whose certificate is for another name, and a real Synapse (logged in, and a
//! wrong password); and an IRC STS policy learnt over TLS, kept in the database and
//! honoured by the next `spellbridge run`, never downgraded; and a plaintext network whose
//! STS policy moves the bot to a self-signed TLS, joined with `tls_pin` (or `tls_ca`).
//!
//! These need InspIRCd, Atheme and Synapse (`tests/scripts/install-*.sh`); without them
//! they fail with the harness's message, they never skip.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest as _, Sha256};
use spellbridge_tests::harness::atheme::Atheme;
use spellbridge_tests::harness::certs::{self, Pem, TestCa, Validity};
use spellbridge_tests::harness::daemon::{CONFIG, Daemon};
use spellbridge_tests::harness::inspircd::{InspIrcd, Options};
use spellbridge_tests::harness::synapse::Synapse;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};
use tokio::net::TcpListener;

const BIN: &str = env!("CARGO_BIN_EXE_spellbridge");
const WAIT: Duration = Duration::from_secs(20);

/// One `[[irc]]` network called `test` on 127.0.0.1; `extra` is added to its table.
fn config(port: u16, extra: &str) -> String {
    format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n[[irc]]\nname = \"test\"\nserver = \"127.0.0.1\"\n\
         port = {port}\nnick = \"spellbridge\"\nchannels = [\"#magic\"]\nrequire_account = false\n\
         reconnect_delay = \"1s\"\n{extra}\n"
    )
}

/// `spellbridge check-config --connect` on `config`: exit success, and stdout.
fn check_connect(config: &str, files: &[(&str, &str)]) -> (bool, String) {
    let daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    for (name, contents) in files {
        daemon.write(name, contents).unwrap_or_else(|e| panic!("{e}"));
    }
    daemon.set_config(config).unwrap_or_else(|e| panic!("{e}"));
    let output =
        daemon.command(&["check-config", "--config", CONFIG, "--connect"]).unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.success(), format!("{stdout}{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_config_connect_logs_in_to_the_real_server() {
    let (ircd, atheme) = tokio::task::block_in_place(|| {
        let ircd = InspIrcd::start_with(Options { services: true, ..Options::default() })
            .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"));
        let atheme = Atheme::start(&ircd).unwrap_or_else(|e| panic!("Atheme is needed for this test: {e}"));
        (ircd, atheme)
    });
    atheme.register("checkbot", "check-password").await.unwrap_or_else(|e| panic!("{e}"));
    let sasl = "[irc.sasl]\naccount = \"checkbot\"\npassword = { file = \"sasl-password\" }\n";
    let text = config(ircd.port(), &format!("tls = false\n{sasl}"));
    let (ok, out) =
        tokio::task::block_in_place(|| check_connect(&text, &[("sasl-password", "check-password\n")]));
    assert!(ok, "exit success: {out}");
    assert!(out.contains("irc test: 127.0.0.1:"), "the plain check-config lines come first: {out}");
    assert!(out.contains("irc test: ok (logged in as checkbot)"), "{out}");
    drop(atheme);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_config_connect_names_a_refused_connection() {
    let port = {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        listener.local_addr().expect("address").port()
    };
    let (ok, out) = tokio::task::block_in_place(|| check_connect(&config(port, "tls = false"), &[]));
    assert!(!ok, "exit failure: {out}");
    assert!(out.contains(&format!("irc test: FAILED: cannot connect to 127.0.0.1:{port}")), "{out}");
    assert!(out.contains("Connection refused"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_config_connect_names_a_certificate_for_another_name() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let wrong = ca.sign(&["elsewhere.example"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let ircd = tokio::task::block_in_place(|| {
        InspIrcd::start_with(Options { tls: vec![wrong], ..Options::default() })
            .unwrap_or_else(|e| panic!("InspIRCd is needed for this test: {e}"))
    });
    let port = ircd.tls_port(0).expect("a TLS port");
    let text = config(port, "tls_ca = \"ca.pem\"\ntls_ca_only = true");
    let (ok, out) = tokio::task::block_in_place(|| check_connect(&text, &[("ca.pem", &ca.pem.cert)]));
    assert!(!ok, "exit failure: {out}");
    assert!(out.contains(&format!("irc test: FAILED: TLS handshake with 127.0.0.1:{port} failed")), "{out}");
    assert!(out.contains("certificate not valid for name \"127.0.0.1\""), "rustls's words: {out}");
    assert!(out.contains("the server's certificate is for another name"), "and what they mean: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_config_connect_logs_in_to_matrix_and_names_a_wrong_password() {
    let synapse = tokio::task::block_in_place(Synapse::start)
        .unwrap_or_else(|e| panic!("Synapse is needed for this test: {e}"));
    tokio::task::block_in_place(|| synapse.register("checkbot", "check-password", false))
        .unwrap_or_else(|e| panic!("{e}"));
    let user = synapse.user_id("checkbot");
    let config = format!(
        "prefix = \"!\"\n[store]\npath = \"games.db\"\n[[matrix]]\nname = \"matrix\"\n\
         homeserver = \"{}\"\nuser_id = \"{user}\"\npassword = {{ file = \"password\" }}\n",
        synapse.base_url()
    );
    let (ok, out) =
        tokio::task::block_in_place(|| check_connect(&config, &[("password", "check-password\n")]));
    assert!(ok, "exit success: {out}");
    assert!(out.contains(&format!("matrix matrix: ok (logged in as {user})")), "{out}");
    let (ok, out) = tokio::task::block_in_place(|| check_connect(&config, &[("password", "wrong\n")]));
    assert!(!ok, "exit failure: {out}");
    assert!(out.contains("matrix matrix: FAILED: "), "{out}");
}

/// Reads lines until one starts with `start`.
async fn expect_line<S: AsyncRead + Unpin>(lines: &mut tokio::io::Lines<BufReader<S>>, start: &str) {
    loop {
        match tokio::time::timeout(WAIT, lines.next_line()).await {
            Ok(Ok(Some(line))) if line.starts_with(start) => return,
            Ok(Ok(Some(_))) => {}
            other => panic!("the bot never sent {start:?} ({other:?})"),
        }
    }
}

async fn say<S: AsyncWrite + Unpin>(stream: &mut S, line: &str) {
    stream.write_all(format!("{line}\r\n").as_bytes()).await.expect("write");
}

/// The first byte of the next connection: 0x16 opens a TLS handshake.
async fn first_byte(listener: &TcpListener) -> u8 {
    let (mut stream, _) =
        tokio::time::timeout(WAIT, listener.accept()).await.expect("a connection").expect("accept");
    let mut byte = [0u8; 1];
    tokio::time::timeout(WAIT, stream.read_exact(&mut byte)).await.expect("a byte").expect("read");
    byte[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sts_policy_learnt_over_tls_is_kept_across_restarts_and_never_downgraded() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let server = ca.sign(&["127.0.0.1"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let plain = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let secure = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let tls_port = secure.local_addr().expect("address").port();
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    // The upgrade trusts the system's roots: here, the test CA.
    let ca_file = daemon.write("ca.pem", &ca.pem.cert).unwrap_or_else(|e| panic!("{e}"));
    daemon.env("SSL_CERT_FILE", ca_file);
    let port = plain.local_addr().expect("address").port();
    daemon.set_config(&config(port, "tls = false")).unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| daemon.spawn()).unwrap_or_else(|e| panic!("{e}"));

    // Plaintext: the server's policy names its TLS port.
    let (stream, _) =
        tokio::time::timeout(WAIT, plain.accept()).await.expect("the bot connects").expect("accept");
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    expect_line(&mut lines, "CAP LS 302").await;
    say(&mut write, &format!(":fake CAP * LS :sts=port={tls_port},duration=3600")).await;

    // TLS: the policy's duration, which the bot keeps.
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config(&server));
    let (tcp, _) =
        tokio::time::timeout(WAIT, secure.accept()).await.expect("the bot upgrades").expect("accept");
    let tls = tokio::time::timeout(WAIT, acceptor.accept(tcp))
        .await
        .expect("a handshake")
        .unwrap_or_else(|e| panic!("TLS handshake: {e}\n{}", daemon.log_tail(30)));
    let (read, mut write) = tokio::io::split(tls);
    let mut lines = BufReader::new(read).lines();
    expect_line(&mut lines, "CAP LS 302").await;
    say(&mut write, ":fake CAP * LS :sts=duration=3600").await;
    // The policy is stored before the answer to the LS goes out.
    expect_line(&mut lines, "CAP END").await;
    say(&mut write, ":fake 001 spellbridge :Welcome spellbridge!spellbridge@127.0.0.1").await;
    say(&mut write, ":fake 376 spellbridge :End of MOTD").await;
    expect_line(&mut lines, "JOIN #magic").await;
    tokio::task::block_in_place(|| daemon.terminate(Duration::from_secs(15)))
        .unwrap_or_else(|e| panic!("{e}"));
    drop((lines, write));

    // The next start goes to TLS on the policy's port first; a TLS connection that fails
    // is retried with TLS, never in plaintext.
    daemon.env("SSL_CERT_FILE", daemon.path("none.pem"));
    tokio::task::block_in_place(|| daemon.spawn()).unwrap_or_else(|e| panic!("{e}"));
    for attempt in 0..2 {
        assert_eq!(first_byte(&secure).await, 0x16, "attempt {attempt}: a TLS ClientHello on the STS port");
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(500), plain.accept()).await.is_err(),
        "no plaintext connection:\n{}",
        daemon.log_tail(30)
    );
    tokio::task::block_in_place(|| daemon.terminate(Duration::from_secs(15)))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// A plaintext network whose STS policy moves the bot to TLS, served with `pem`: the bot
/// connects in plaintext, follows the policy to the TLS port, trusts the certificate by
/// `trust` (written with `tls = false`, it is for that TLS), and registers and joins
/// there. `files` are written beside the config.
async fn follows_sts_to_tls_trusted_by(pem: &Pem, trust: &str, files: &[(&str, &str)]) {
    let plain = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let secure = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let tls_port = secure.local_addr().expect("address").port();
    let mut daemon = Daemon::new(BIN).unwrap_or_else(|e| panic!("{e}"));
    for (name, contents) in files {
        daemon.write(name, contents).unwrap_or_else(|e| panic!("{e}"));
    }
    // The system's roots trust neither certificate: only the configured trust can.
    daemon.env("SSL_CERT_FILE", daemon.path("none.pem"));
    let port = plain.local_addr().expect("address").port();
    daemon.set_config(&config(port, &format!("tls = false\n{trust}"))).unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| daemon.spawn()).unwrap_or_else(|e| panic!("{e}"));

    let (stream, _) = tokio::time::timeout(WAIT, plain.accept())
        .await
        .unwrap_or_else(|_| panic!("the bot never connects:\n{}", daemon.log_tail(30)))
        .expect("accept");
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    expect_line(&mut lines, "CAP LS 302").await;
    say(&mut write, &format!(":fake CAP * LS :sts=port={tls_port}")).await;

    let acceptor = tokio_rustls::TlsAcceptor::from(server_config(pem));
    let (tcp, _) =
        tokio::time::timeout(WAIT, secure.accept()).await.expect("the bot upgrades").expect("accept");
    let tls = tokio::time::timeout(WAIT, acceptor.accept(tcp))
        .await
        .expect("a handshake")
        .unwrap_or_else(|e| panic!("TLS handshake ({trust}): {e}\n{}", daemon.log_tail(30)));
    let (read, mut write) = tokio::io::split(tls);
    let mut lines = BufReader::new(read).lines();
    expect_line(&mut lines, "CAP LS 302").await;
    say(&mut write, ":fake CAP * LS :").await;
    expect_line(&mut lines, "CAP END").await;
    say(&mut write, ":fake 001 spellbridge :Welcome spellbridge!spellbridge@127.0.0.1").await;
    say(&mut write, ":fake 376 spellbridge :End of MOTD").await;
    expect_line(&mut lines, "JOIN #magic").await;
    tokio::task::block_in_place(|| daemon.terminate(Duration::from_secs(15)))
        .unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plaintext_network_moved_to_tls_by_sts_is_joined_with_its_pin_or_ca() {
    let self_signed = certs::self_signed(&["127.0.0.1"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let pin = format!("sha256/{}", BASE64.encode(Sha256::digest(&self_signed.der)));
    follows_sts_to_tls_trusted_by(&self_signed, &format!("tls_pin = \"{pin}\""), &[]).await;
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let signed = ca.sign(&["127.0.0.1"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    follows_sts_to_tls_trusted_by(&signed, "tls_ca = \"ca.pem\"", &[("ca.pem", &ca.pem.cert)]).await;
}

/// A rustls server config serving `pem`.
fn server_config(pem: &Pem) -> Arc<rustls::ServerConfig> {
    let cert = rustls::pki_types::CertificateDer::from(pem.der.clone());
    let key = rustls::pki_types::pem::PemObject::from_pem_slice(pem.key.as_bytes()).expect("key");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("certificate");
    Arc::new(config)
}
