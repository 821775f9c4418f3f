//! What the IRC transport needs to know about one network (the daemon builds it from its
//! validated config).

use std::sync::Arc;
use std::time::Duration;

use spellbridge_core::{Form, Language, NetworkId};

use super::format::CodeStyle;
use super::sasl::SaslOptions;
use super::sts::StsPolicies;
use super::tls::TlsOptions;

/// One IRC network's connection settings.
#[derive(Clone)]
pub struct IrcOptions {
    /// The network's name in spellbridge.
    pub network: NetworkId,
    /// Server host.
    pub server: String,
    /// Server port.
    pub port: u16,
    /// Connect with TLS (rustls).
    pub tls: bool,
    /// Whom TLS trusts and the client certificate (`tls_ca`, `tls_pin`, `client_cert`, …).
    pub tls_options: TlsOptions,
    /// The bot's nick, then the ones to try if it is taken.
    pub nicks: Vec<String>,
    /// User name.
    pub username: String,
    /// Real name.
    pub realname: String,
    /// Server password (PASS).
    pub password: Option<String>,
    /// How to log in with SASL, if at all.
    pub sasl: Option<SaslOptions>,
    /// Log in with NickServ `IDENTIFY` (the SASL account and password) where SASL is not
    /// offered or fails.
    pub identify: bool,
    /// Never play logged out: with a login configured, a connection that is not logged
    /// in ends and is retried with backoff.
    pub login_required: bool,
    /// Take the configured nick back with NickServ `REGAIN` (besides `MONITOR`).
    pub regain: bool,
    /// Where STS policies are kept between starts; `None`: for this run only.
    pub sts: Option<Arc<dyn StsPolicies>>,
    /// Channels to join (more can be joined later).
    pub channels: Vec<String>,
    /// Only take commands from players logged in to a services account; `None`: when
    /// the network has accounts (account-tag, SASL, account-notify with extended-join,
    /// or WHOX).
    pub require_account: Option<bool>,
    /// Answer CTCP VERSION, PING and CLIENTINFO (through the token bucket, a few per user).
    pub ctcp: bool,
    /// Rejoin a channel after a kick.
    pub rejoin_on_kick: bool,
    /// Outbound flood control: burst, then one line per interval; `None` sends at once.
    pub flood: Option<(u32, Duration)>,
    /// What starts a command (to apply the account rule).
    pub prefix: String,
    /// How code (commands in the bot's messages) is shown: bold by default.
    pub code_style: CodeStyle,
    /// How games' announcements are told here: compact by default (`[[irc]] form`).
    pub form: Form,
    /// Reconnect backoff: first delay and the most it grows to.
    pub backoff: (Duration, Duration),
    /// Send a PING after this much silence, and give up after this much more.
    pub ping: (Duration, Duration),
    /// The language of the transport's own notices ("log in first").
    pub language: Language,
    /// Asked before each queued line is written (the daemon's lease, issue 34).
    pub may_send: crate::network::MaySend,
}

impl std::fmt::Debug for IrcOptions {
    /// Shows everything but the secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IrcOptions")
            .field("network", &self.network)
            .field("server", &self.server)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("tls_options", &self.tls_options)
            .field("nicks", &self.nicks)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("sasl", &self.sasl.as_ref().map(|s| (&s.account, &s.mechanisms, "<redacted>")))
            .field("login_required", &self.login_required)
            .field("channels", &self.channels)
            .field("require_account", &self.require_account)
            .field("ctcp", &self.ctcp)
            .field("flood", &self.flood)
            .field("code_style", &self.code_style)
            .field("form", &self.form)
            .finish_non_exhaustive()
    }
}

impl IrcOptions {
    /// Options for a local test server: plain TCP, no flood control, fast reconnects.
    pub fn local(network: &str, port: u16, nick: &str, channels: &[&str]) -> Self {
        IrcOptions {
            network: NetworkId::new(network),
            server: "127.0.0.1".to_owned(),
            port,
            tls: false,
            tls_options: TlsOptions::default(),
            nicks: vec![nick.to_owned(), format!("{nick}_"), format!("{nick}__")],
            username: nick.to_owned(),
            realname: "spellbridge".to_owned(),
            password: None,
            sasl: None,
            identify: false,
            login_required: false,
            regain: false,
            sts: None,
            channels: channels.iter().map(|c| (*c).to_owned()).collect(),
            require_account: Some(false),
            ctcp: true,
            rejoin_on_kick: true,
            flood: None,
            prefix: "!".to_owned(),
            code_style: CodeStyle::default(),
            form: Form::Compact,
            backoff: (Duration::from_millis(200), Duration::from_secs(5)),
            ping: (Duration::from_secs(60), Duration::from_secs(30)),
            language: Language::En,
            may_send: crate::network::MaySend::always(),
        }
    }
}
