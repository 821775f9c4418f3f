//! The bot's first login in appservice mode (issue 17, item 1): the bot is a user of the
//! appservice's namespace (not its sender, which Synapse does not let `/sync`) and has no
//! password, so it logs in with
//! `m.login.application_service`, proving itself with the registration's `as_token`.
//! The answer is an ordinary session with its own device and access token, which
//! [`connect`](super::super::connect) saves and restores like any other: matrix-sdk keeps
//! the bot's device and encryption keys for its direct chats as in bot mode.
//!
//! matrix-sdk has no call for it (its `login_custom` sends no token), so the request is
//! sent through a throw-away client whose "session" is the `as_token`, with the token
//! forced onto the request (the endpoint's token is optional). A sender user the
//! homeserver has no account for yet is registered first, the appservice way.

use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::RequestConfig;
use matrix_sdk::ruma::api::client::account::register::{self, LoginType};
use matrix_sdk::ruma::api::client::session::login::v3::{ApplicationService, LoginInfo, Request};
use matrix_sdk::ruma::api::client::uiaa::{MatrixUserIdentifier, UserIdentifier};
use matrix_sdk::ruma::api::error::ErrorKind;
use matrix_sdk::ruma::{IdParseError, OwnedUserId, UserId, device_id};
use matrix_sdk::store::RoomLoadSettings;
use matrix_sdk::{Client, SessionMeta, SessionTokens};

use super::super::connect::{ConnectError, REQUEST_TIMEOUT};

/// Logs `user` in with `m.login.application_service` and the appservice's `as_token`;
/// the new device is named `device_name`. The sender user is registered first if the
/// homeserver does not have it yet (as bridges do).
pub async fn login(
    homeserver: &str,
    user: &UserId,
    sender: &UserId,
    as_token: &str,
    device_name: &str,
) -> Result<MatrixSession, ConnectError> {
    let probe = appservice_client(homeserver, sender, as_token).await?;
    let identifier = UserIdentifier::Matrix(MatrixUserIdentifier::new(user.to_string()));
    let mut request = Request::new(LoginInfo::ApplicationService(ApplicationService::new(identifier)));
    request.initial_device_display_name = Some(device_name.to_owned());
    // The homeserver may have no account for the sender yet (Synapse makes none): make
    // sure it has one, the appservice way (an existing one is fine).
    register(&probe, user.localpart()).await?;
    let response = probe.send(request).with_request_config(forced()).await?;
    Ok(MatrixSession::from(&response))
}

/// Registers `localpart` on the homeserver as a user of the appservice
/// (`m.login.application_service`, no device); a user that exists already is fine.
pub async fn register(client: &Client, localpart: &str) -> Result<(), ConnectError> {
    register_user(client, localpart).await.map_err(Into::into)
}

/// [`register`], with the homeserver's own error (for the transport's retries).
pub async fn register_user(client: &Client, localpart: &str) -> Result<(), matrix_sdk::HttpError> {
    let mut request = register::v3::Request::new();
    request.username = Some(localpart.to_owned());
    request.login_type = Some(LoginType::ApplicationService);
    request.inhibit_login = true;
    match client.send(request).with_request_config(forced()).await {
        Ok(_) => Ok(()),
        Err(error) if error.client_api_error_kind() == Some(&ErrorKind::UserInUse) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The appservice's sender user, on the bot's server: the user the `as_token` speaks for.
pub fn sender(bot: &UserId, sender_localpart: &str) -> Result<OwnedUserId, IdParseError> {
    UserId::parse(format!("@{sender_localpart}:{}", bot.server_name()))
}

/// A client whose requests carry the appservice's `as_token`, with the session of
/// `sender`, the appservice's sender user: the user the token is. (Under another user's
/// name, matrix-sdk's start-up reads that user's account data and logs the homeserver's
/// 403 as an ERROR.)
pub async fn appservice_client(
    homeserver: &str,
    sender: &UserId,
    as_token: &str,
) -> Result<Client, ConnectError> {
    let client = Client::builder()
        .homeserver_url(homeserver)
        .request_config(RequestConfig::new().disable_retry().timeout(REQUEST_TIMEOUT))
        .build()
        .await?;
    let appservice = MatrixSession {
        meta: SessionMeta { user_id: sender.to_owned(), device_id: device_id!("APPSERVICE").to_owned() },
        tokens: SessionTokens { access_token: as_token.to_owned(), refresh_token: None },
    };
    client.matrix_auth().restore_session(appservice, RoomLoadSettings::default()).await?;
    Ok(client)
}

/// The token sent with every request, even where the endpoint makes it optional.
fn forced() -> RequestConfig {
    RequestConfig::new().disable_retry().timeout(REQUEST_TIMEOUT).force_auth()
}
