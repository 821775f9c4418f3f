//! Opening the connection to an IRC server: TCP with Nagle's algorithm off (the bot
//! writes short lines that must leave at once: with it on, every exchange waited for the
//! server's delayed ACK, 35 ms at p99, issue 16), TLS through rustls over it when the
//! network asks for TLS, and the line codec on top ([`super::codec`]), which reads and
//! writes whole messages.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

use super::codec::LineCodec;
use super::tls::{self, TlsError};

/// The byte stream under the codec: plain TCP or TLS over it.
pub trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// An open connection, read and written as IRC messages.
pub type Wire = Framed<Box<dyn Stream>, LineCodec>;

/// How long the TCP connect and the TLS handshake may take together.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a connection could not be opened (its source says what the system said).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The TCP connection failed (refused, unreachable, no such host).
    #[error("cannot connect to {server}:{port}")]
    Tcp {
        /// Host.
        server: String,
        /// Port.
        port: u16,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The TLS handshake failed (unknown issuer, expired, wrong name, not TLS).
    #[error("TLS handshake with {server}:{port} failed")]
    Tls {
        /// Host.
        server: String,
        /// Port.
        port: u16,
        /// What rustls said.
        #[source]
        source: io::Error,
    },
    /// The TLS settings cannot be built (a file, the pin, the server name).
    #[error(transparent)]
    Settings(#[from] TlsError),
    /// No answer in time.
    #[error("no connection to {server}:{port} within {CONNECT_TIMEOUT:?}")]
    Timeout {
        /// Host.
        server: String,
        /// Port.
        port: u16,
    },
}

/// Opens a TCP connection to `server:port` with `TCP_NODELAY` set.
pub async fn tcp(server: &str, port: u16) -> Result<TcpStream, ConnectError> {
    let failed = |source| ConnectError::Tcp { server: server.to_owned(), port, source };
    let stream = TcpStream::connect((server, port)).await.map_err(failed)?;
    stream.set_nodelay(true).map_err(failed)?;
    Ok(stream)
}

/// Connects to `server:port`, over TLS with `tls` (built by [`tls::client_config`]) when
/// given.
pub async fn open(
    server: &str,
    port: u16,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Wire, ConnectError> {
    let timeout = || ConnectError::Timeout { server: server.to_owned(), port };
    tokio::time::timeout(CONNECT_TIMEOUT, async {
        let stream = tcp(server, port).await?;
        let stream: Box<dyn Stream> = match tls {
            None => Box::new(stream),
            Some(config) => {
                let name = tls::server_name(server)?;
                let tls = tokio_rustls::TlsConnector::from(config)
                    .connect(name, stream)
                    .await
                    .map_err(|source| ConnectError::Tls { server: server.to_owned(), port, source })?;
                Box::new(tls)
            }
        };
        Ok(Framed::new(stream, LineCodec::default()))
    })
    .await
    .map_err(|_| timeout())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_socket_has_nagle_off() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let stream = tcp("127.0.0.1", port).await.expect("connect");
        assert!(stream.nodelay().expect("nodelay"), "TCP_NODELAY is set");
    }

    #[tokio::test]
    async fn a_refused_connection_says_so_in_its_chain() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let error = open("127.0.0.1", port, None).await.err().expect("refused");
        let text = crate::error_chain(&error);
        assert!(text.starts_with(&format!("cannot connect to 127.0.0.1:{port}: ")), "{text}");
        assert!(text.to_lowercase().contains("refused"), "{text}");
    }
}
