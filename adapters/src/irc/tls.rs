//! Whom one IRC network's TLS connection trusts, from its options ([`TlsOptions`]): the
//! system's root certificates, plus a CA file (`tls_ca`), or only that file
//! (`tls_ca_only`); or a pinned certificate (`tls_pin = "sha256/BASE64"`, the SHA-256 of
//! the server's certificate or of its public key), which alone decides: a pinned
//! certificate is accepted even if self-signed, expired or issued for another name, as
//! people who pin expect, and any other certificate is refused. A client certificate
//! (`client_cert`, `client_key`) is presented for SASL EXTERNAL (CertFP).
//!
//! [`client_config`] reads the files each time it is called, so a renewed certificate is
//! picked up on the next connection; every failure says which option to fix.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use base64::Engine as _;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::crypto::aws_lc_rs;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use sha2::{Digest as _, Sha256};

use crate::certificate_check::{CertificateCheck, Verifier};

/// One network's TLS trust options (all off by default: the system's roots, no client
/// certificate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// `tls_ca`: a PEM file of CA certificates trusted besides the system's roots.
    pub ca: Option<PathBuf>,
    /// `tls_ca_only`: trust only `ca`, not the system's roots.
    pub ca_only: bool,
    /// `tls_pin`: accept exactly the certificate (or public key) with this SHA-256.
    pub pin: Option<Pin>,
    /// `client_cert`: a PEM certificate (chain) presented to the server, for SASL EXTERNAL.
    pub client_cert: Option<PathBuf>,
    /// `client_key`: the PEM private key of `client_cert`.
    pub client_key: Option<PathBuf>,
}

/// A pinned SHA-256, written `sha256/BASE64` (the form HPKP and most tools print).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Pin([u8; 32]);

impl Pin {
    /// The pin of a certificate's whole DER encoding.
    pub fn of_certificate(certificate: &CertificateDer<'_>) -> Pin {
        Pin(Sha256::digest(certificate.as_ref()).into())
    }

    /// The pin of a certificate's public key (its DER SubjectPublicKeyInfo), which stays the
    /// same when the certificate is renewed with the same key; `None` if the certificate
    /// cannot be read.
    pub fn of_public_key(certificate: &CertificateDer<'_>) -> Option<Pin> {
        let parsed = webpki::EndEntityCert::try_from(certificate).ok()?;
        Some(Pin(Sha256::digest(parsed.subject_public_key_info().as_ref()).into()))
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256/{}", base64::engine::general_purpose::STANDARD.encode(self.0))
    }
}

impl fmt::Debug for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Pin {
    type Err = TlsError;

    fn from_str(text: &str) -> Result<Pin, TlsError> {
        let bad = |why: &str| TlsError::BadPin { text: text.to_owned(), why: why.to_owned() };
        let Some(encoded) = text.trim().strip_prefix("sha256/") else {
            return Err(bad("it must start with `sha256/`"));
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| bad("what follows `sha256/` is not base64"))?;
        let hash: [u8; 32] =
            bytes.try_into().map_err(|_| bad("a SHA-256 is 32 bytes, 44 base64 characters ending in `=`"))?;
        Ok(Pin(hash))
    }
}

/// Why a network's TLS options cannot be used. Each says which option to fix.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `tls_pin` is not `sha256/BASE64`.
    #[error(
        "tls_pin `{text}` is not a pin: {why}; write tls_pin = \"sha256/<base64 of the SHA-256 of the \
         server's certificate or public key>\" (README, \"A private network\")"
    )]
    BadPin {
        /// What was written.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// `tls_ca_only` without `tls_ca`.
    #[error("tls_ca_only = true trusts only tls_ca, but there is no tls_ca; add tls_ca = \"path/to/ca.pem\"")]
    CaOnlyWithoutCa,
    /// A PEM file could not be read.
    #[error("{option} `{path}` cannot be read; check that the path is right and the file is PEM")]
    Read {
        /// The option naming the file.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// A PEM file holds nothing of the kind needed.
    #[error("{option} `{path}` holds no {what}; it must be PEM (`-----BEGIN {what}-----`)")]
    Empty {
        /// The option naming the file.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// What was looked for.
        what: &'static str,
    },
    /// A CA certificate was refused as a trust anchor.
    #[error("tls_ca `{path}`: a certificate in it cannot be a trust anchor; give the CA's own certificate")]
    BadCa {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// No root certificates at all.
    #[error(
        "no trusted root certificates: the system has none readable and there is no tls_ca; \
         install ca-certificates, or set tls_ca or tls_pin"
    )]
    NoRoots,
    /// One of `client_cert` / `client_key` without the other.
    #[error("client_cert and client_key go together; set both (or neither)")]
    HalfClientCert,
    /// The client certificate and key do not fit together, or the key's kind is unsupported.
    #[error(
        "client_cert `{cert}` with client_key `{key}` cannot be used; check that the key is the certificate's"
    )]
    ClientCert {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// The TLS library refused the configuration.
    #[error("TLS cannot be set up")]
    Setup(#[source] rustls::Error),
    /// The server's host is not a DNS name or IP address.
    #[error(
        "server `{0}` is not a host name or IP address TLS can check; write e.g. server = \"irc.libera.chat\""
    )]
    ServerName(String),
}

/// The server name to check the certificate against (and send in SNI).
pub fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
    ServerName::try_from(host.to_owned()).map_err(|_| TlsError::ServerName(host.to_owned()))
}

/// Builds the rustls client configuration for `options`, reading its files now.
pub fn client_config(options: &TlsOptions) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = Arc::new(aws_lc_rs::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> = match options.pin {
        Some(pin) => Arc::new(Verifier::new(PinCheck(pin), provider.clone())),
        None => {
            let roots = roots(options)?;
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| TlsError::Setup(rustls::Error::General(e.to_string())))?
        }
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match (&options.client_cert, &options.client_key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let chain = read_certificates("client_cert", cert)?;
            let private = PrivateKeyDer::from_pem_file(key).map_err(|source| match source {
                rustls::pki_types::pem::Error::NoItemsFound => {
                    TlsError::Empty { option: "client_key", path: key.clone(), what: "PRIVATE KEY" }
                }
                source => TlsError::Read { option: "client_key", path: key.clone(), source },
            })?;
            builder.with_client_auth_cert(chain, private).map_err(|source| TlsError::ClientCert {
                cert: cert.clone(),
                key: key.clone(),
                source,
            })?
        }
        _ => return Err(TlsError::HalfClientCert),
    };
    Ok(Arc::new(config))
}

/// The trust anchors without a pin: the system's unless `ca_only`, plus `ca`.
fn roots(options: &TlsOptions) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    if options.ca_only && options.ca.is_none() {
        return Err(TlsError::CaOnlyWithoutCa);
    }
    if !options.ca_only {
        // Unreadable system certificates are skipped, as every TLS client does; having none
        // at all is an error below.
        let system = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(system.certs);
    }
    if let Some(path) = &options.ca {
        for certificate in read_certificates("tls_ca", path)? {
            roots.add(certificate).map_err(|source| TlsError::BadCa { path: path.clone(), source })?;
        }
    }
    if roots.is_empty() {
        return Err(TlsError::NoRoots);
    }
    Ok(roots)
}

/// Every certificate in a PEM file; at least one.
fn read_certificates(option: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let read = |source| TlsError::Read { option, path: path.to_owned(), source };
    let certificates =
        CertificateDer::pem_file_iter(path).map_err(read)?.collect::<Result<Vec<_>, _>>().map_err(read)?;
    if certificates.is_empty() {
        return Err(TlsError::Empty { option, path: path.to_owned(), what: "CERTIFICATE" });
    }
    Ok(certificates)
}

/// The server's certificate matched neither way of pinning it.
#[derive(Debug, thiserror::Error)]
#[error(
    "the server's certificate does not match tls_pin {expected}: its certificate is {certificate}{key}; \
     if the server changed its certificate, check the new one out of band before pinning it"
)]
pub struct PinMismatch {
    expected: Pin,
    certificate: Pin,
    key: PublicKeyPin,
}

/// The public key pin as the mismatch message shows it.
#[derive(Debug)]
struct PublicKeyPin(Option<Pin>);

impl fmt::Display for PublicKeyPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(pin) => write!(f, " and its public key {pin}"),
            None => Ok(()),
        }
    }
}

/// Accepts exactly the pinned certificate or public key; the handshake's signatures are
/// still checked ([`Verifier`]), so the server must hold the pinned certificate's private key.
#[derive(Debug)]
struct PinCheck(Pin);

impl CertificateCheck for PinCheck {
    fn check(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let certificate = Pin::of_certificate(end_entity);
        let key = Pin::of_public_key(end_entity);
        if certificate == self.0 || key == Some(self.0) {
            return Ok(ServerCertVerified::assertion());
        }
        let mismatch = PinMismatch { expected: self.0, certificate, key: PublicKeyPin(key) };
        Err(rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
            mismatch,
        )))))
    }
}

#[cfg(test)]
mod tests;
