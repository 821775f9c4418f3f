//! The services and TLS harness itself, against the real servers: Atheme links to
//! InspIRCd, registers accounts (WHOIS 330 shows them), offers SASL PLAIN and EXTERNAL,
//! comes back after a restart; each TLS listener serves the certificate the test made.
//! And the IRC transport's ECDSA-NIST256P-CHALLENGE login against Atheme's own module.

use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use spellbridge_adapters::irc::tls::{self, Pin, TlsOptions};
use spellbridge_tests::harness::atheme::Atheme;
use spellbridge_tests::harness::certs::{self, TestCa, Validity};
use spellbridge_tests::harness::inspircd::{InspIrcd, Options};
use spellbridge_tests::harness::irc_client::IrcClient;

fn start(options: Options) -> (InspIrcd, Atheme) {
    tokio::task::block_in_place(|| {
        let ircd =
            InspIrcd::start_with(Options { services: true, ..options }).unwrap_or_else(|e| panic!("{e}"));
        let atheme = Atheme::start(&ircd).unwrap_or_else(|e| panic!("{e}\n{}", ircd.output_tail(20)));
        (ircd, atheme)
    })
}

/// Registers over `stream` with `CAP LS 302`, and SASL `mechanism` with `response` when
/// given; every line the server sent until 001 (or the connection's end).
fn register_raw<S: std::io::Read + std::io::Write>(
    stream: &mut S,
    nick: &str,
    sasl: Option<(&str, &str)>,
) -> String {
    let mut seen = String::new();
    let send = |stream: &mut S, line: &str| stream.write_all(format!("{line}\r\n").as_bytes()).expect("send");
    send(stream, "CAP LS 302");
    send(stream, &format!("NICK {nick}"));
    send(stream, &format!("USER {nick} 0 * :harness"));
    let mut buffer = [0u8; 4096];
    let mut asked = false;
    loop {
        let n = match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return seen,
            Ok(n) => n,
        };
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
        if !asked && seen.contains(" LS ") {
            asked = true;
            match sasl {
                Some((mechanism, _)) => {
                    send(stream, "CAP REQ :sasl");
                    send(stream, &format!("AUTHENTICATE {mechanism}"));
                }
                None => send(stream, "CAP END"),
            }
        }
        if let Some((_, response)) = sasl
            && (seen.contains("AUTHENTICATE +") || seen.contains("AUTHENTICATE :+"))
            && !seen.contains("sent-response")
        {
            send(stream, &format!("AUTHENTICATE {response}"));
            seen.push_str("\n(sent-response)\n");
        }
        if (seen.contains(" 903 ") || seen.contains(" 904 ")) && !seen.contains("(cap-end)") {
            send(stream, "CAP END");
            seen.push_str("\n(cap-end)\n");
        }
        if seen.contains(" 001 ") {
            send(stream, "QUIT :done");
            return seen;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atheme_registers_accounts_and_logs_in_with_sasl_plain() {
    let (ircd, atheme) = start(Options::default());
    atheme.register("alice", "wonderland").await.unwrap_or_else(|e| panic!("{e}"));

    let plain = base64::engine::general_purpose::STANDARD.encode("alice\0alice\0wonderland");
    let text = tokio::task::block_in_place(|| {
        let mut stream = TcpStream::connect(("127.0.0.1", ircd.port())).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        register_raw(&mut stream, "alicebot", Some(("PLAIN", &plain)))
    });
    assert!(text.contains("sasl=PLAIN,EXTERNAL"), "SASL offered once services link: {text}");
    assert!(text.contains(" 903 "), "SASL PLAIN succeeds: {text}");

    let wrong = base64::engine::general_purpose::STANDARD.encode("alice\0alice\0looking-glass");
    let text = tokio::task::block_in_place(|| {
        let mut stream = TcpStream::connect(("127.0.0.1", ircd.port())).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        register_raw(&mut stream, "wrongbot", Some(("PLAIN", &wrong)))
    });
    assert!(text.contains(" 904 "), "a wrong password is refused: {text}");

    let mut watcher = IrcClient::connect(ircd.port(), "watcher").await.unwrap_or_else(|e| panic!("{e}"));
    let mut alice = IrcClient::connect(ircd.port(), "alice2").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(watcher.whois_account("alice2").await.unwrap_or_else(|e| panic!("{e}")), None);
    alice.privmsg("NickServ", "IDENTIFY alice wonderland").await.expect("identify");
    let account =
        watcher.wait_for_account("alice2", Duration::from_secs(5)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(account.as_deref(), Some("alice"), "WHOIS 330 names the account");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_logs_in_with_sasl_external_over_tls() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let server = ca.sign(&["irc.test"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    let (ircd, atheme) = start(Options { tls: vec![server], ..Options::default() });
    let client = certs::self_signed(&["spellbot"], Validity::Good).unwrap_or_else(|e| panic!("{e}"));
    atheme
        .register_with_cert("certbot", "unused-password", &client.fingerprint())
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let dir = tempfile::tempdir().expect("dir");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, &ca.pem.cert).expect("write");
    let (cert, key) = client.write(dir.path(), "client").unwrap_or_else(|e| panic!("{e}"));
    let options = TlsOptions {
        ca: Some(ca_path),
        ca_only: true,
        client_cert: Some(cert),
        client_key: Some(key),
        ..Default::default()
    };
    let config = tls::client_config(&options).unwrap_or_else(|e| panic!("{e}"));
    let port = ircd.tls_port(0).expect("a TLS port");
    let text = tokio::task::block_in_place(|| {
        let tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        tcp.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let connection =
            rustls::ClientConnection::new(config, tls::server_name("irc.test").expect("name")).expect("tls");
        let mut stream = rustls::StreamOwned::new(connection, tcp);
        register_raw(&mut stream, "extbot", Some(("EXTERNAL", "+")))
    });
    assert!(text.contains(" 900 ") && text.contains(" certbot "), "logged in as certbot: {text}");
    assert!(text.contains(" 903 "), "SASL EXTERNAL succeeds: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tls_listener_serves_its_certificate() {
    let ca = TestCa::new("spellbridge test CA").unwrap_or_else(|e| panic!("{e}"));
    let listeners = vec![
        ca.sign(&["irc.test"], Validity::Good).unwrap_or_else(|e| panic!("{e}")),
        certs::self_signed(&["irc.test"], Validity::Good).unwrap_or_else(|e| panic!("{e}")),
        ca.sign(&["irc.test"], Validity::Expired).unwrap_or_else(|e| panic!("{e}")),
        ca.sign(&["elsewhere.example"], Validity::Good).unwrap_or_else(|e| panic!("{e}")),
    ];
    let ircd = tokio::task::block_in_place(|| {
        InspIrcd::start_with(Options { tls: listeners.clone(), ..Options::default() })
            .unwrap_or_else(|e| panic!("{e}"))
    });
    for (index, pem) in listeners.iter().enumerate() {
        let der = rustls::pki_types::CertificateDer::from(pem.der.clone());
        let pin = Pin::of_certificate(&der);
        let config =
            tls::client_config(&TlsOptions { pin: Some(pin), ..Default::default() }).expect("config");
        let port = ircd.tls_port(index).expect("port");
        let text = tokio::task::block_in_place(|| {
            let tcp = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            tcp.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
            let connection = rustls::ClientConnection::new(
                Arc::clone(&config),
                tls::server_name("irc.test").expect("name"),
            )
            .expect("tls");
            let mut stream = rustls::StreamOwned::new(connection, tcp);
            register_raw(&mut stream, &format!("pin{index}"), None)
        });
        assert!(text.contains(" 001 "), "listener {index} serves the pinned certificate: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_come_back_after_a_restart_with_their_accounts() {
    let (ircd, mut atheme) = start(Options::default());
    atheme.register("bob", "builder").await.unwrap_or_else(|e| panic!("{e}"));
    tokio::task::block_in_place(|| atheme.restart()).unwrap_or_else(|e| panic!("{e}"));
    let mut bob = IrcClient::connect(ircd.port(), "bob").await.unwrap_or_else(|e| panic!("{e}"));
    let mut watcher = IrcClient::connect(ircd.port(), "watcher").await.unwrap_or_else(|e| panic!("{e}"));
    bob.privmsg("NickServ", "IDENTIFY bob builder").await.expect("identify");
    let account =
        watcher.wait_for_account("bob", Duration::from_secs(5)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(account.as_deref(), Some("bob"), "the account survived the restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transport_logs_in_with_ecdsa_nist256p_challenge_to_a_key_set_with_nickserv() {
    use spellbridge_adapters::irc::ecdsa::EcdsaKey;
    use spellbridge_adapters::irc::options::IrcOptions;
    use spellbridge_adapters::irc::sasl::{Mechanism, SaslOptions};
    use spellbridge_adapters::irc::transport::IrcTransport;

    let (ircd, atheme) = start(Options::default());
    let dir = tempfile::tempdir().expect("dir");
    let key = dir.path().join("keybot.pem");
    let made = std::process::Command::new("openssl")
        .args(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out"])
        .arg(&key)
        .status()
        .expect("openssl runs");
    assert!(made.success(), "openssl ecparam");
    let public = EcdsaKey::load(&key).unwrap_or_else(|e| panic!("{e}")).public_key();
    atheme.register_with_pubkey("keybot", "unused-password", &public).await.unwrap_or_else(|e| panic!("{e}"));

    let mut options = IrcOptions::local("test", ircd.port(), "keybot", &[]);
    options.sasl = Some(SaslOptions {
        account: "keybot".to_owned(),
        password: None,
        ecdsa_key: Some(key),
        mechanisms: vec![Mechanism::EcdsaNist256pChallenge],
    });
    options.login_required = true;
    let stop = tokio_util::sync::CancellationToken::new();
    let (transport, _task) = IrcTransport::start(options, stop.clone());
    assert!(transport.wait_up(Duration::from_secs(20)).await, "logged in and up:\n{}", atheme.log_tail(20));
    let mut watcher = IrcClient::connect(ircd.port(), "watcher").await.unwrap_or_else(|e| panic!("{e}"));
    let nick = transport.nick();
    assert_eq!(
        watcher.whois_account(&nick).await.unwrap_or_else(|e| panic!("{e}")).as_deref(),
        Some("keybot"),
        "WHOIS 330 names the account the key belongs to"
    );
    stop.cancel();
}
