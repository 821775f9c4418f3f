//! TLS to PostgreSQL: the `sslmode` and `sslrootcert` of `[store] url`, read as libpq
//! reads them, over the rustls (and aws-lc-rs crypto) the IRC transport uses.
//!
//! - `disable`: no TLS.
//! - `prefer` (the default, as libpq's): TLS when the server offers it, the certificate
//!   not checked; plain when the server has no TLS.
//! - `require`: TLS or no connection (the password never goes in clear), the certificate
//!   not checked — unless `sslrootcert` is given, which makes it `verify-ca` (as libpq).
//! - `verify-ca`: TLS, the certificate signed by `sslrootcert` (else the system's roots).
//! - `verify-full`: `verify-ca`, and the certificate is for the URL's host.
//!
//! The CA file is read at each connection, so a renewed one is picked up by the next.
//! The store, its side stores (site, STS, appservice transactions, a standby's) and the
//! lease all connect through [`Tls`].

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use spellbridge_adapters::certificate_check::{CertificateCheck, Verifier};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// How much TLS the connection must have: `sslmode=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS if offered, not checked.
    Prefer,
    /// TLS always, not checked.
    Require,
    /// TLS always, signed by a trusted CA.
    VerifyCa,
    /// TLS always, signed by a trusted CA, for the host connected to.
    VerifyFull,
}

impl SslMode {
    /// The words `sslmode=` takes, in order.
    pub const NAMES: &'static str = "disable, prefer, require, verify-ca or verify-full";

    /// Reads `sslmode`'s value.
    pub fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// What tokio-postgres is told: whether TLS may be skipped.
    pub(crate) fn wire(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }
}

/// Makes each connection's TLS, as the URL asks.
#[derive(Clone, Debug)]
pub struct Tls {
    mode: SslMode,
    root: Option<PathBuf>,
}

impl Tls {
    /// TLS as `mode` says, trusting `root` (a PEM file of CA certificates) or, without it,
    /// the system's roots. `require` with a `root` checks the certificate (`verify-ca`).
    pub fn new(mode: SslMode, root: Option<PathBuf>) -> Tls {
        let mode = if mode == SslMode::Require && root.is_some() { SslMode::VerifyCa } else { mode };
        Tls { mode, root }
    }

    /// The mode, after `require` with a CA file became `verify-ca`.
    pub fn mode(&self) -> SslMode {
        self.mode
    }

    /// `sslrootcert`, if given.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The rustls configuration for this mode, reading the CA file now.
    fn client_config(&self) -> Result<ClientConfig, TlsError> {
        let provider = Arc::new(aws_lc_rs::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Setup)?;
        let verifier: Arc<dyn ServerCertVerifier> = match self.mode {
            SslMode::Disable | SslMode::Prefer | SslMode::Require => {
                Arc::new(Verifier::new(Unchecked, provider))
            }
            // The chain by webpki, the signatures with the same provider's algorithms.
            SslMode::VerifyCa => Arc::new(Verifier::new(AnyName(self.webpki(provider.clone())?), provider)),
            SslMode::VerifyFull => self.webpki(provider)?,
        };
        Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
    }

    fn webpki(&self, provider: Arc<CryptoProvider>) -> Result<Arc<WebPkiServerVerifier>, TlsError> {
        WebPkiServerVerifier::builder_with_provider(Arc::new(self.roots()?), provider)
            .build()
            .map_err(|e| TlsError::Setup(rustls::Error::General(e.to_string())))
    }

    /// `sslrootcert`'s certificates, or the system's.
    fn roots(&self) -> Result<RootCertStore, TlsError> {
        let mut roots = RootCertStore::empty();
        match &self.root {
            Some(path) => {
                for certificate in read_certificates(path)? {
                    roots
                        .add(certificate)
                        .map_err(|source| TlsError::BadCa { path: path.clone(), source })?;
                }
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
                if roots.is_empty() {
                    return Err(TlsError::NoRoots);
                }
            }
        }
        Ok(roots)
    }
}

fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let read = |source| TlsError::Read { path: path.to_owned(), source };
    let certificates =
        CertificateDer::pem_file_iter(path).map_err(read)?.collect::<Result<Vec<_>, _>>().map_err(read)?;
    if certificates.is_empty() {
        return Err(TlsError::NoCertificate { path: path.to_owned() });
    }
    Ok(certificates)
}

/// Why TLS to PostgreSQL could not be set up or was refused.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// `sslrootcert` could not be read.
    #[error("sslrootcert={} cannot be read ({source}); give the path of the CA's PEM certificate", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: rustls::pki_types::pem::Error,
    },
    /// `sslrootcert` holds no certificate.
    #[error("sslrootcert={} holds no certificate; it must be PEM (-----BEGIN CERTIFICATE-----)", .path.display())]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// A certificate in `sslrootcert` cannot be a trust anchor.
    #[error("sslrootcert={}: a certificate in it cannot be a trust anchor ({source}); give the CA's own certificate", .path.display())]
    BadCa {
        /// The file.
        path: PathBuf,
        /// Why.
        source: rustls::Error,
    },
    /// No `sslrootcert` and no system roots.
    #[error(
        "the system has no readable root certificates to check PostgreSQL's with; add sslrootcert=PATH to [store] url"
    )]
    NoRoots,
    /// The host is not a name TLS can check.
    #[error(
        "the host {0} is not a name or address TLS can check; write the server's host name in [store] url"
    )]
    Host(String),
    /// rustls refused the configuration.
    #[error("TLS cannot be set up ({0})")]
    Setup(rustls::Error),
    /// The server's certificate was refused.
    #[error(
        "PostgreSQL's certificate was refused ({why}); with sslmode={mode}, it must be signed by {trusted}{name}; \
         give the CA that signed it as sslrootcert=PATH"
    )]
    Refused {
        /// What rustls found.
        why: String,
        /// The mode, as written.
        mode: &'static str,
        /// Whom it trusts.
        trusted: String,
        /// ", for the host …" under `verify-full`.
        name: String,
    },
    /// The handshake failed otherwise.
    #[error("the TLS handshake with PostgreSQL failed ({0})")]
    Handshake(io::Error),
}

impl<S> MakeTlsConnect<S> for Tls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type TlsConnect = Connect;
    type Error = TlsError;

    fn make_tls_connect(&mut self, host: &str) -> Result<Connect, TlsError> {
        // A unix socket has no host name (and PostgreSQL offers no TLS on one): checked
        // only if a handshake is asked for.
        let name = ServerName::try_from(host.to_owned()).map_err(|_| host.to_owned());
        // Under `disable` tokio-postgres asks for no handshake: nothing is read for one.
        let config = match self.mode {
            SslMode::Disable => None,
            _ => Some(Arc::new(self.client_config()?)),
        };
        Ok(Connect { config, name, tls: self.clone() })
    }
}

/// One connection's TLS handshake.
pub struct Connect {
    config: Option<Arc<ClientConfig>>,
    name: Result<ServerName<'static>, String>,
    tls: Tls,
}

impl<S> TlsConnect<S> for Connect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type Error = TlsError;
    type Future = Pin<Box<dyn Future<Output = Result<TlsStream<S>, TlsError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let Some(config) = self.config else {
                return Err(TlsError::Handshake(io::Error::other("sslmode=disable asks for no TLS")));
            };
            let name = self.name.map_err(TlsError::Host)?;
            let connector = tokio_rustls::TlsConnector::from(config);
            match connector.connect(name.clone(), stream).await {
                Ok(stream) => Ok(TlsStream(Box::new(stream))),
                Err(error) => Err(refused(error, &self.tls, &name)),
            }
        })
    }
}

/// A handshake error, said as what to fix when it is the certificate.
fn refused(error: io::Error, tls: &Tls, name: &ServerName<'_>) -> TlsError {
    let certificate = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .filter(|e| matches!(e, rustls::Error::InvalidCertificate(_)));
    let Some(why) = certificate else { return TlsError::Handshake(error) };
    let mode = if tls.mode == SslMode::VerifyFull { "verify-full" } else { "verify-ca" };
    let trusted = match &tls.root {
        Some(path) => format!("the CA in sslrootcert={}", path.display()),
        None => "a CA the system trusts".to_owned(),
    };
    let name = if tls.mode == SslMode::VerifyFull {
        format!(" and be for the host {}", name.to_str())
    } else {
        String::new()
    };
    TlsError::Refused { why: why.to_string(), mode, trusted, name }
}

/// A TLS connection to PostgreSQL.
pub struct TlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlsStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for TlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // No SCRAM-PLUS: its binding hash depends on the certificate's signature
        // algorithm; plain SCRAM over TLS still never sends the password.
        ChannelBinding::none()
    }
}

/// `prefer`, `require`: the handshake's signatures are checked ([`Verifier`]), the
/// certificate is not.
#[derive(Debug)]
struct Unchecked;

impl CertificateCheck for Unchecked {
    fn check(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
}

/// `verify-ca`: the chain is checked, the name is not.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl CertificateCheck for AnyName {
    fn check(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
}
