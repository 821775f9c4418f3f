//! `spellbridge check-config --connect`: tries each configured network once, as `run`
//! would connect to it, and says per network what happened: `ok (logged in as X)`, or
//! the whole chain of causes of the failure (certificate expired, unknown issuer, name
//! mismatch, connection refused, timeout…, [`error_chain`]).
//!
//! IRC: connect, TLS, register and log in exactly as configured, then QUIT
//! ([`IrcTransport::check`]; an STS upgrade is followed, and not stored). Matrix: log in
//! (or restore with the access token) into a throw-away store and ask the homeserver
//! `whoami`; a password login's new device is logged out again, a configured access
//! token is left as it is.

use std::time::Duration;

use spellbridge_adapters::error_chain;
use spellbridge_adapters::irc::transport::IrcTransport;
use spellbridge_adapters::matrix::connect::connect;
use spellbridge_adapters::matrix::options::Login;
use spellbridge_adapters::matrix::store::StoreDir;

use crate::config::Settings;
use crate::serve::{irc_options, matrix_options};

/// How long one network may take to connect, register and log in.
pub const LIMIT: Duration = Duration::from_secs(30);

/// One network's outcome: its line (`irc libera: ok (logged in as bot)`) and whether
/// it worked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What to print.
    pub line: String,
    /// The network could be used.
    pub ok: bool,
}

/// Tries every configured network, one after the other.
pub async fn connect_all(settings: &Settings) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    for network in &settings.irc {
        let options = irc_options(network, &settings.prefix);
        let outcome = match IrcTransport::check(options, LIMIT).await {
            Ok(checked) => Outcome {
                line: match checked.account {
                    Some(account) => format!("ok (logged in as {account})"),
                    None => format!("ok (registered as {}, not logged in to services)", checked.nick),
                },
                ok: true,
            },
            Err(error) => Outcome { line: format!("FAILED: {}", error_chain(&error)), ok: false },
        };
        outcomes.push(Outcome { line: format!("irc {}: {}", network.name, outcome.line), ..outcome });
    }
    for account in &settings.matrix {
        let outcome = match matrix(account).await {
            Ok(user) => Outcome { line: format!("ok (logged in as {user})"), ok: true },
            Err(error) => Outcome { line: format!("FAILED: {error}"), ok: false },
        };
        outcomes.push(Outcome { line: format!("matrix {}: {}", account.name, outcome.line), ..outcome });
    }
    outcomes
}

/// Logs in to one Matrix account in a temporary store; the user id the homeserver names.
async fn matrix(settings: &crate::config::MatrixSettings) -> Result<String, String> {
    let dir =
        std::env::temp_dir().join(format!("spellbridge-check-{}-{}", std::process::id(), settings.name));
    let mut options = matrix_options(settings, "!");
    options.store_dir = dir.clone();
    let store = StoreDir::new(&dir);
    let result = tokio::time::timeout(LIMIT, async {
        let (client, _) = connect(&options, &store).await.map_err(|e| error_chain(&e))?;
        let whoami = client.whoami().await.map_err(|e| error_chain(&e));
        if matches!(options.login, Login::Password(_)) {
            // The login made a device for this check only.
            let _ = client.matrix_auth().logout().await;
        }
        whoami.map(|w| w.user_id.to_string())
    })
    .await
    .unwrap_or_else(|_| Err(format!("no login within {LIMIT:?}")));
    let _ = std::fs::remove_dir_all(&dir);
    result
}
