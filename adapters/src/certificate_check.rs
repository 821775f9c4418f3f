//! A rustls server-certificate verifier whose certificate check is the caller's own and
//! whose handshake-signature checks are rustls's, written once for every verifier that
//! departs from rustls's: the IRC pin (`irc/tls.rs`) and PostgreSQL's `sslmode`s that do
//! not check the certificate or its name (the daemon's `store/postgres/tls.rs`).
//!
//! The signatures are always checked, so the server must hold the private key of the
//! certificate it presents, however little the certificate itself is checked.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// Whether the server's certificate is accepted: [`ServerCertVerifier::verify_server_cert`]
/// without the signature checks.
pub trait CertificateCheck: fmt::Debug + Send + Sync {
    /// Accepts or refuses the certificate the server presented.
    fn check(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error>;
}

/// The verifier: `check` for the certificate, `provider`'s algorithms for the handshake's
/// signatures (as rustls's own `WebPkiServerVerifier` checks them).
#[derive(Debug)]
pub struct Verifier<C> {
    check: C,
    provider: Arc<CryptoProvider>,
}

impl<C: CertificateCheck> Verifier<C> {
    /// A verifier accepting the certificates `check` accepts, with `provider`'s signatures.
    pub fn new(check: C, provider: Arc<CryptoProvider>) -> Verifier<C> {
        Verifier { check, provider }
    }
}

impl<C: CertificateCheck> ServerCertVerifier for Verifier<C> {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check.check(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
