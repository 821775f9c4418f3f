//! The TLS options against real handshakes, in memory: certificates made here with rcgen
//! (CA-signed, self-signed, expired, for another name), a rustls server, and the client
//! configuration [`client_config`] builds.

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, date_time_ymd};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConnection, ServerConfig, ServerConnection};

use super::*;
use crate::error_chain;

/// A certificate with its key.
struct Made {
    cert: CertificateDer<'static>,
    pem: String,
    key: KeyPair,
}

/// A CA that signs certificates.
struct Ca {
    cert: CertificateDer<'static>,
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("CA certificate");
    Ca { cert: cert.der().clone(), pem: cert.pem(), issuer: Issuer::new(params, key) }
}

fn leaf(names: &[&str], expired: bool, ca: Option<&Ca>) -> Made {
    let key = KeyPair::generate().expect("key");
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).expect("params");
    if expired {
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2021, 1, 1);
    }
    let cert = match ca {
        Some(ca) => params.signed_by(&key, &ca.issuer).expect("signed"),
        None => params.self_signed(&key).expect("self-signed"),
    };
    Made { cert: cert.der().clone(), pem: cert.pem(), key }
}

fn private(made: &Made) -> PrivateKeyDer<'static> {
    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key.serialize_der()))
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(aws_lc_rs::default_provider())
}

fn server(made: &Made, client_ca: Option<&Ca>) -> Arc<ServerConfig> {
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions");
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            roots.add(ca.cert.clone()).expect("root");
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .expect("client verifier");
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(builder.with_single_cert(vec![made.cert.clone()], private(made)).expect("server config"))
}

/// Runs a handshake between the two in memory; the client's error if it fails, and the
/// certificates the server saw from the client.
fn handshake(
    client: Arc<ClientConfig>,
    host: &str,
    server: Arc<ServerConfig>,
) -> Result<Option<Vec<CertificateDer<'static>>>, rustls::Error> {
    let mut client = ClientConnection::new(client, server_name(host).expect("name"))?;
    let mut server = ServerConnection::new(server).expect("server connection");
    for _ in 0..20 {
        let mut bytes = Vec::new();
        while client.wants_write() {
            client.write_tls(&mut bytes).expect("client write");
        }
        if !bytes.is_empty() {
            server.read_tls(&mut bytes.as_slice()).expect("server read");
            // The server's own complaint (e.g. an alert) reaches the client as an alert.
            let _ = server.process_new_packets();
        }
        let mut bytes = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut bytes).expect("server write");
        }
        if !bytes.is_empty() {
            client.read_tls(&mut bytes.as_slice()).expect("client read");
            client.process_new_packets()?;
        }
        if !client.is_handshaking() && !server.is_handshaking() {
            return Ok(server
                .peer_certificates()
                .map(|c| c.iter().map(|c| c.clone().into_owned()).collect()));
        }
    }
    panic!("the handshake did not finish");
}

fn options() -> TlsOptions {
    TlsOptions::default()
}

#[test]
fn a_ca_file_is_trusted_and_without_it_the_issuer_is_unknown() {
    let ca = ca("test CA");
    let cert = leaf(&["irc.test"], false, Some(&ca));
    let dir = tempfile::tempdir().expect("dir");
    let ca_path = write(&dir, "ca.pem", &ca.pem);

    let with_ca = client_config(&TlsOptions { ca: Some(ca_path.clone()), ..options() }).expect("config");
    handshake(with_ca, "irc.test", server(&cert, None)).expect("trusted through tls_ca");
    let only_ca =
        client_config(&TlsOptions { ca: Some(ca_path), ca_only: true, ..options() }).expect("config");
    handshake(only_ca, "irc.test", server(&cert, None)).expect("trusted through tls_ca alone");

    // The old behaviour: the system's roots only.
    let system = client_config(&options()).expect("config");
    let error = handshake(system, "irc.test", server(&cert, None)).expect_err("unknown CA");
    assert_eq!(error, rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer));
    assert!(error_chain(&error).contains("tls_ca"), "{}", error_chain(&error));
}

#[test]
fn ca_only_trusts_no_system_root() {
    // A certificate signed by another CA than the one given is refused even if the system
    // trusted it: here, one CA file, and a server signed by a second CA.
    let (mine, theirs) = (ca("mine"), ca("theirs"));
    let cert = leaf(&["irc.test"], false, Some(&theirs));
    let dir = tempfile::tempdir().expect("dir");
    let path = write(&dir, "ca.pem", &mine.pem);
    let config = client_config(&TlsOptions { ca: Some(path), ca_only: true, ..options() }).expect("config");
    let error = handshake(config, "irc.test", server(&cert, None)).expect_err("other CA");
    assert_eq!(error, rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer));
}

#[test]
fn an_expired_or_wrong_name_certificate_is_refused_with_its_reason() {
    let ca = ca("test CA");
    let dir = tempfile::tempdir().expect("dir");
    let config =
        client_config(&TlsOptions { ca: Some(write(&dir, "ca.pem", &ca.pem)), ..options() }).expect("config");

    let expired = leaf(&["irc.test"], true, Some(&ca));
    let error = handshake(config.clone(), "irc.test", server(&expired, None)).expect_err("expired");
    assert!(
        matches!(error, rustls::Error::InvalidCertificate(CertificateError::ExpiredContext { .. })),
        "{error:?}"
    );
    assert!(error_chain(&error).contains("has expired"), "{}", error_chain(&error));

    let elsewhere = leaf(&["irc.example.org"], false, Some(&ca));
    let error = handshake(config, "irc.test", server(&elsewhere, None)).expect_err("wrong name");
    assert!(
        matches!(error, rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })),
        "{error:?}"
    );
    assert!(error_chain(&error).contains("is for another name"), "{}", error_chain(&error));
}

#[test]
fn a_pinned_certificate_is_accepted_self_signed_expired_and_for_another_name() {
    let cert = leaf(&["irc.example.org"], true, None);
    for pin in [Pin::of_certificate(&cert.cert), Pin::of_public_key(&cert.cert).expect("key pin")] {
        let config = client_config(&TlsOptions { pin: Some(pin), ..options() }).expect("config");
        handshake(config, "irc.test", server(&cert, None)).expect("pinned");
    }
}

#[test]
fn a_pin_refuses_every_other_certificate_and_names_the_one_offered() {
    let ca = ca("test CA");
    let pinned = leaf(&["irc.test"], false, None);
    let other = leaf(&["irc.test"], false, Some(&ca));
    let dir = tempfile::tempdir().expect("dir");
    // Even a CA-signed certificate the CA file would trust: the pin alone decides.
    let options = TlsOptions {
        pin: Some(Pin::of_certificate(&pinned.cert)),
        ca: Some(write(&dir, "ca.pem", &ca.pem)),
        ..options()
    };
    let error = handshake(client_config(&options).expect("config"), "irc.test", server(&other, None))
        .expect_err("not the pinned certificate");
    let text = error_chain(&error);
    assert!(text.contains("does not match tls_pin"), "{text}");
    assert!(text.contains(&Pin::of_certificate(&other.cert).to_string()), "{text}");
    assert!(text.contains(&Pin::of_public_key(&other.cert).expect("pin").to_string()), "{text}");
    assert_eq!(text.matches("does not match").count(), 1, "written once: {text}");
}

#[test]
fn a_client_certificate_is_presented() {
    let ca = ca("test CA");
    let server_cert = leaf(&["irc.test"], false, Some(&ca));
    let client = leaf(&["spellbridge"], false, Some(&ca));
    let dir = tempfile::tempdir().expect("dir");
    let options = TlsOptions {
        ca: Some(write(&dir, "ca.pem", &ca.pem)),
        client_cert: Some(write(&dir, "client.pem", &client.pem)),
        client_key: Some(write(&dir, "client.key", &client.key.serialize_pem())),
        ..options()
    };
    let seen =
        handshake(client_config(&options).expect("config"), "irc.test", server(&server_cert, Some(&ca)))
            .expect("handshake");
    assert_eq!(seen, Some(vec![client.cert.clone()]));
}

#[test]
fn bad_options_say_what_to_fix() {
    let dir = tempfile::tempdir().expect("dir");
    let missing = dir.path().join("nope.pem");
    let text = |options: TlsOptions| client_config(&options).map(|_| ()).expect_err("refused").to_string();

    assert!(text(TlsOptions { ca_only: true, ..options() }).contains("add tls_ca"));
    let unread = text(TlsOptions { ca: Some(missing.clone()), ..options() });
    assert!(
        unread.contains("tls_ca") && unread.contains("nope.pem") && unread.contains("cannot be read"),
        "{unread}"
    );
    let empty = write(&dir, "empty.pem", "not a certificate\n");
    assert!(text(TlsOptions { ca: Some(empty.clone()), ..options() }).contains("holds no CERTIFICATE"));
    assert!(text(TlsOptions { client_cert: Some(empty.clone()), ..options() }).contains("go together"));

    let client = leaf(&["spellbridge"], false, None);
    let other = leaf(&["spellbridge"], false, None);
    let wrong_key = TlsOptions {
        client_cert: Some(write(&dir, "c.pem", &client.pem)),
        client_key: Some(write(&dir, "k.pem", &other.key.serialize_pem())),
        ..options()
    };
    assert!(text(wrong_key).contains("check that the key is the certificate's"));
    let no_key = TlsOptions {
        client_cert: Some(write(&dir, "c2.pem", &client.pem)),
        client_key: Some(empty),
        ..options()
    };
    assert!(text(no_key).contains("client_key"));
}

#[test]
fn pins_are_read_in_the_sha256_base64_form_only() {
    let cert = leaf(&["irc.test"], false, None);
    let pin = Pin::of_certificate(&cert.cert);
    assert_eq!(pin.to_string().parse::<Pin>().expect("round trip"), pin);
    for (bad, why) in [
        ("AAAA", "must start with `sha256/`"),
        ("sha256/!!!", "not base64"),
        ("sha256/AAAA", "32 bytes"),
        ("sha1/AAAA", "must start with `sha256/`"),
    ] {
        let error = bad.parse::<Pin>().expect_err(bad).to_string();
        assert!(error.contains(why) && error.contains("write tls_pin"), "{bad}: {error}");
    }
}
