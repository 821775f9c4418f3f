//! Getting a logged-in matrix-sdk [`Client`]: restore the session saved in the store
//! directory, or, the first time, log in (password, access token, or in appservice mode
//! `m.login.application_service` with the registration's `as_token`) and save it.
//!
//! Restoring keeps the device id, so the bot stays one device with one E2EE identity
//! across restarts; a fresh login makes a new device, so the previous stores are removed
//! first (a crypto store belongs to exactly one device), as they are when the configured
//! access token is not the one saved (a new token is a new device). Nothing here retries: the
//! supervisor classifies a [`ConnectError`] and decides.

use std::time::Duration;

use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::encryption::EncryptionSettings;
use matrix_sdk::ruma::{OwnedUserId, UserId, device_id};
use matrix_sdk::store::RoomLoadSettings;
use matrix_sdk::{Client, ClientBuildError, SessionMeta, SessionTokens};

use super::options::{Login, MatrixOptions};
use super::retry::{self, RequestFailure};
use super::store::{SavedSession, StoreDir, StoreError};

/// Why the client could not be made ready.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The configured user id is not a Matrix user id.
    #[error("`{0}` is not a Matrix user id (@name:server)")]
    BadUserId(String),
    /// The store directory holds another account's session.
    #[error("{store} holds the session of {saved}, not of {configured}: give each account its own store_dir")]
    WrongAccount {
        /// The store directory.
        store: String,
        /// The user the saved session is for.
        saved: OwnedUserId,
        /// The configured user.
        configured: String,
    },
    /// matrix-sdk could not build the client (bad URL, store cannot be opened).
    #[error("cannot set up the Matrix client: {0}")]
    Build(#[from] ClientBuildError),
    /// The homeserver refused or could not be reached.
    #[error("{0}")]
    Matrix(#[from] matrix_sdk::Error),
    /// `/whoami` failed.
    #[error("{0}")]
    Http(#[from] matrix_sdk::HttpError),
    /// The access token is not bound to a device (an appservice token).
    #[error("the access token has no device; use a token from /login, or a password")]
    NoDevice,
    /// The session or store files could not be read or written.
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl ConnectError {
    /// Whether this is the homeserver being unreachable (retry with the normal backoff)
    /// rather than something an operator must fix (retry slowly, log an error).
    pub fn failure(&self) -> RequestFailure {
        match self {
            ConnectError::Matrix(e) => retry::classify(e),
            ConnectError::Http(e) => retry::classify_http(e),
            ConnectError::Build(ClientBuildError::Http(e)) => retry::classify_http(e),
            _ => RequestFailure::Refused,
        }
    }
}

/// How a client was made ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The saved session was restored (same device as before).
    Restored,
    /// A new login made a new device.
    LoggedIn,
}

/// The timeout for ordinary requests; a `/sync` adds its long-poll time to it.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds a client on the store's SQLite stores, with matrix-sdk's own retries off (the
/// supervisor retries). matrix-sdk 0.18's E2EE defaults are the ones a bot needs and are
/// relied on here: room keys are shared with every device of every member
/// (`CollectStrategy::AllDevices`: the bot verifies nobody), messages from unverified
/// devices are decrypted (`TrustRequirement::Untrusted`), device and one-time keys are
/// uploaded by every `sync_once`, and a send into an encrypted room first loads the
/// member list, queries their devices and shares the room key.
/// The store's files are made owner-only before and after (`StoreDir::secure`).
///
/// Its HTTP client is matrix-sdk's own reqwest client, which sets `TCP_NODELAY` on every
/// connection (reqwest's default, which matrix-sdk keeps; pinned by a test below), so a
/// small request is not held back by Nagle's algorithm waiting for a delayed ACK.
async fn build(options: &MatrixOptions, store: &StoreDir) -> Result<Client, ConnectError> {
    store.secure()?;
    let client = Client::builder()
        .homeserver_url(&options.homeserver)
        .sqlite_store(store.sdk(), options.store_passphrase.as_deref())
        .request_config(RequestConfig::new().disable_retry().timeout(REQUEST_TIMEOUT))
        .with_encryption_settings(EncryptionSettings::default())
        .build()
        .await?;
    store.tighten_created();
    Ok(client)
}

/// Restores the saved session, or logs in and saves a new one.
pub async fn connect(options: &MatrixOptions, store: &StoreDir) -> Result<(Client, Origin), ConnectError> {
    let configured =
        UserId::parse(&options.user_id).map_err(|_| ConnectError::BadUserId(options.user_id.clone()))?;
    let saved = store.load_session()?.filter(|saved| match &options.login {
        // A token login saves the configured token: a different one configured now
        // is a new device to start over with.
        Login::AccessToken(token) if *token != saved.session.tokens.access_token => {
            tracing::info!(network = %options.network, "the configured access token changed; starting over with it");
            false
        }
        _ => true,
    });
    if let Some(saved) = saved {
        if saved.session.meta.user_id != configured {
            return Err(ConnectError::WrongAccount {
                store: options.store_dir.display().to_string(),
                saved: saved.session.meta.user_id,
                configured: options.user_id.clone(),
            });
        }
        let client = build(options, store).await?;
        client.matrix_auth().restore_session(saved.session, RoomLoadSettings::default()).await?;
        return Ok((client, Origin::Restored));
    }
    store.reset()?;
    let session = match &options.login {
        Login::Password(password) => {
            let client = build(options, store).await?;
            let response = client
                .matrix_auth()
                .login_username(configured.as_str(), password)
                .initial_device_display_name(&options.device_name)
                .send()
                .await?;
            save(options, store, MatrixSession::from(&response))?;
            return Ok((client, Origin::LoggedIn));
        }
        Login::AccessToken(token) => session_for_token(options, &configured, token).await?,
        Login::Appservice(token) => {
            let localpart =
                options.appservice.as_ref().map(|a| a.sender_localpart.as_str()).unwrap_or_default();
            let sender = super::appservice::login::sender(&configured, localpart)
                .map_err(|_| ConnectError::BadUserId(format!("@{localpart}:{}", configured.server_name())))?;
            super::appservice::login::login(
                &options.homeserver,
                &configured,
                &sender,
                token,
                &options.device_name,
            )
            .await?
        }
    };
    let client = build(options, store).await?;
    client.matrix_auth().restore_session(session.clone(), RoomLoadSettings::default()).await?;
    save(options, store, session)?;
    Ok((client, Origin::LoggedIn))
}

fn save(options: &MatrixOptions, store: &StoreDir, session: MatrixSession) -> Result<(), StoreError> {
    store.save_session(&SavedSession { homeserver: options.homeserver.clone(), session })
}

/// Asks `/whoami` which user and device an access token belongs to, through a throwaway
/// client with in-memory stores (a client needs a device id before it can send anything).
async fn session_for_token(
    options: &MatrixOptions,
    configured: &UserId,
    token: &str,
) -> Result<MatrixSession, ConnectError> {
    let tokens = SessionTokens { access_token: token.to_owned(), refresh_token: None };
    let probe = Client::builder()
        .homeserver_url(&options.homeserver)
        .request_config(RequestConfig::new().disable_retry().timeout(REQUEST_TIMEOUT))
        .build()
        .await?;
    let placeholder = MatrixSession {
        meta: SessionMeta { user_id: configured.to_owned(), device_id: device_id!("WHOAMI").to_owned() },
        tokens: tokens.clone(),
    };
    probe.matrix_auth().restore_session(placeholder, RoomLoadSettings::default()).await?;
    let whoami = probe.whoami().await?;
    let device_id = whoami.device_id.ok_or(ConnectError::NoDevice)?;
    if whoami.user_id != configured {
        return Err(ConnectError::WrongAccount {
            store: "the access token".to_owned(),
            saved: whoami.user_id,
            configured: options.user_id.clone(),
        });
    }
    Ok(MatrixSession { meta: SessionMeta { user_id: whoami.user_id, device_id }, tokens })
}

#[cfg(test)]
mod tests {
    /// matrix-sdk builds its reqwest client without touching `tcp_nodelay`, so Nagle's
    /// algorithm is off only while reqwest's default says so: a reqwest that changed it
    /// fails here (its Debug form names `tcp_nodelay` only when it is on).
    #[test]
    fn the_matrix_http_client_sets_tcp_nodelay() {
        let builder = reqwest::Client::builder();
        assert!(format!("{builder:?}").contains("tcp_nodelay: true"), "{builder:?}");
        let vendored = include_str!("../../../vendor/matrix-sdk/src/http_client/native.rs");
        assert!(!vendored.contains("tcp_nodelay"), "matrix-sdk now sets tcp_nodelay itself: check it");
    }
}
