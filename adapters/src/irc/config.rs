//! `[[irc]]`: one IRC network's config section, read and checked into [`IrcSettings`]
//! (defaults filled in, secrets read, TLS files and the ECDSA key loaded so a wrong path
//! is reported by `check-config`), and the IRC [`NetworkKind`] that the daemon's
//! network registry lists: how the section reads, how the transport starts, and
//! how `check-config --connect` tries it once ([`IrcTransport::check`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use tokio::sync::watch;

use super::ecdsa::EcdsaKey;
use super::format::CodeStyle;
use super::options::IrcOptions;
use super::sasl::{Mechanism, SaslOptions};
use super::tls::{self, Pin, TlsOptions};
use super::transport::IrcTransport;
use crate::network::{self, Ids, Network, NetworkKind, Start, Transport, UserLimit};
use crate::secret::{Secret, SecretSource};
use crate::supervise::Connection;
use spellbridge_core::{Form, NetworkId};

/// The IRC kind: `[[irc]]` sections.
#[derive(Clone, Copy, Debug, Default)]
pub struct IrcKind;

impl NetworkKind for IrcKind {
    fn section(&self) -> &'static str {
        "irc"
    }

    fn configure(&self, table: toml::Table, base: &Path) -> Result<Arc<dyn Network>, String> {
        let name = network::name_of(&table, "irc")?;
        let raw: Irc = network::parse_table(table, &format!("[[irc]] `{name}`: "))?;
        let tls_options = tls_options(&raw, base)?;
        Ok(Arc::new(IrcSettings { tls_options, ..settings(raw, base)? }))
    }
}

impl Transport for IrcTransport {
    fn connection(&self) -> watch::Receiver<Connection> {
        self.connection()
    }

    fn reconnects(&self) -> u64 {
        IrcTransport::reconnects(self)
    }
}

/// `[[irc]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Irc {
    /// The network's name in spellbridge.
    name: String,
    /// Server host.
    server: String,
    /// Port (default 6697 with TLS, 6667 without).
    port: Option<u16>,
    /// TLS (default true).
    tls: Option<bool>,
    /// A PEM file of CA certificates trusted besides the system's (relative to the config).
    tls_ca: Option<PathBuf>,
    /// Trust only `tls_ca` (default false).
    tls_ca_only: Option<bool>,
    /// `sha256/BASE64` of the server's certificate or public key: accept exactly it.
    tls_pin: Option<String>,
    /// A PEM client certificate, for SASL EXTERNAL (CertFP).
    client_cert: Option<PathBuf>,
    /// Its PEM private key.
    client_key: Option<PathBuf>,
    /// The bot's nick.
    nick: String,
    /// Nicks to try when it is taken (default nick_ and nick__).
    alt_nicks: Option<Vec<String>>,
    /// User name (default: the nick).
    username: Option<String>,
    /// Real name.
    realname: Option<String>,
    /// Server password.
    password: Option<SecretSource>,
    /// Logging in to services.
    sasl: Option<Sasl>,
    /// Channels to join.
    #[serde(default)]
    channels: Vec<String>,
    /// Only players with a services account may play (default: true where the network
    /// has accounts).
    require_account: Option<bool>,
    /// Answer CTCP VERSION, PING and CLIENTINFO through the bot's flood control, a few
    /// per user (default true); false answers no CTCP request.
    ctcp: Option<bool>,
    /// Rejoin after a kick (default true).
    rejoin_on_kick: Option<bool>,
    /// How commands in the bot's messages are shown: `bold` (default), `monospace`
    /// (`\x11`, which irssi shows as a reverse `Q`) or `plain`.
    code_style: Option<String>,
    /// How games' announcements are told here: `compact` (default: a Duel round in three
    /// lines, for a real network's flood control) or `full` (a line per thing, as on Matrix).
    form: Option<String>,
    /// The first wait before reconnecting; it doubles on each failure, up to 2 minutes
    /// (default "1s").
    reconnect_delay: Option<String>,
    /// `[irc.flood]`.
    flood: Option<Flood>,
    /// `[irc.user_limit]`.
    user_limit: Option<UserLimit>,
}

/// `[irc.sasl]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sasl {
    /// The services account.
    account: String,
    /// Its password (not needed for EXTERNAL alone).
    password: Option<SecretSource>,
    /// A PEM P-256 private key for ECDSA-NIST256P-CHALLENGE (relative to the config).
    ecdsa_key: Option<PathBuf>,
    /// Mechanisms to try, in order (default: the strongest the config allows).
    mechanisms: Option<Vec<String>>,
    /// Never play logged out (default true).
    required: Option<bool>,
    /// NickServ IDENTIFY where SASL is not offered (default false).
    identify: Option<bool>,
    /// Take the configured nick back with NickServ REGAIN (default false).
    regain: Option<bool>,
}

/// `[irc.flood]` as written: outbound lines.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Flood {
    /// Off only for test servers (default true).
    enabled: Option<bool>,
    /// Lines that may go at once (default 4).
    burst: Option<u32>,
    /// Then one line per this long (default "2s").
    interval: Option<String>,
}

/// One IRC network, checked.
#[derive(Clone, Debug)]
pub struct IrcSettings {
    /// Its name in spellbridge (ids, logs, metrics).
    pub name: String,
    /// Server host.
    pub server: String,
    /// Server port.
    pub port: u16,
    /// Connect with TLS.
    pub tls: bool,
    /// Whom TLS trusts, and the client certificate.
    pub tls_options: TlsOptions,
    /// The bot's nick, then the ones to try if it is taken.
    pub nicks: Vec<String>,
    /// The user name.
    pub username: String,
    /// The real name (GECOS).
    pub realname: String,
    /// The server password (PASS), if any.
    pub password: Option<Secret>,
    /// How to log in to services, if at all.
    pub sasl: Option<SaslSettings>,
    /// Channels to join.
    pub channels: Vec<String>,
    /// Only players logged in to a services account may play; `None`: where the network
    /// has accounts.
    pub require_account: Option<bool>,
    /// Answer CTCP VERSION, PING and CLIENTINFO (paced, a few per user).
    pub ctcp: bool,
    /// Rejoin a channel after being kicked.
    pub rejoin_on_kick: bool,
    /// How commands in the bot's messages are shown (`code_style`, default bold).
    pub code_style: CodeStyle,
    /// How games' announcements are told here (`form`, default compact).
    pub form: Form,
    /// Outbound flood control: burst, then one line per interval; `None` is off.
    pub flood: Option<(u32, Duration)>,
    /// Per-player command limit: commands per window; `None` is off.
    pub user_limit: Option<(u32, Duration)>,
    /// The first wait before reconnecting (it doubles on each failure, up to 2 minutes).
    pub reconnect_delay: Duration,
}

/// `[irc.sasl]`, checked: logging in to services.
#[derive(Clone, Debug)]
pub struct SaslSettings {
    /// The services account.
    pub account: String,
    /// Its password (SCRAM-SHA-256, PLAIN, IDENTIFY).
    pub password: Option<Secret>,
    /// The P-256 key file for ECDSA-NIST256P-CHALLENGE (checked when the config is read).
    pub ecdsa_key: Option<PathBuf>,
    /// Mechanisms in the order to try; empty: the strongest the config allows.
    pub mechanisms: Vec<Mechanism>,
    /// Never play logged out.
    pub required: bool,
    /// NickServ IDENTIFY where SASL is not offered or fails.
    pub identify: bool,
    /// NickServ REGAIN to take the configured nick back.
    pub regain: bool,
}

impl IrcSettings {
    /// The transport's options: the settings with the prefix (STS policies: none, this
    /// run only, until the daemon gives its store).
    pub fn options(&self, prefix: &str) -> IrcOptions {
        IrcOptions {
            network: NetworkId::new(self.name.clone()),
            server: self.server.clone(),
            port: self.port,
            tls: self.tls,
            tls_options: self.tls_options.clone(),
            nicks: self.nicks.clone(),
            username: self.username.clone(),
            realname: self.realname.clone(),
            password: self.password.as_ref().map(|s| s.expose().to_owned()),
            sasl: self.sasl.as_ref().map(|s| SaslOptions {
                account: s.account.clone(),
                password: s.password.as_ref().map(|p| p.expose().to_owned()),
                ecdsa_key: s.ecdsa_key.clone(),
                mechanisms: s.mechanisms.clone(),
            }),
            identify: self.sasl.as_ref().is_some_and(|s| s.identify),
            login_required: self.sasl.as_ref().is_some_and(|s| s.required),
            regain: self.sasl.as_ref().is_some_and(|s| s.regain),
            sts: None,
            channels: self.channels.clone(),
            require_account: self.require_account,
            ctcp: self.ctcp,
            rejoin_on_kick: self.rejoin_on_kick,
            flood: self.flood,
            prefix: prefix.to_owned(),
            code_style: self.code_style,
            form: self.form,
            backoff: (self.reconnect_delay, Duration::from_secs(120).max(self.reconnect_delay)),
            ping: (Duration::from_secs(120), Duration::from_secs(60)),
            language: spellbridge_core::Language::En,
            may_send: network::MaySend::always(),
        }
    }
}

#[async_trait]
impl Network for IrcSettings {
    fn kind(&self) -> &'static str {
        "irc"
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn rooms(&self) -> &[String] {
        &self.channels
    }

    fn user_limit(&self) -> Option<(u32, Duration)> {
        self.user_limit
    }

    fn ids(&self) -> Ids {
        Ids::Local
    }

    fn describe(&self) -> String {
        format!(
            "{}:{} ({}), nick {}, channels {}, SASL {}, flood control {}",
            self.server,
            self.port,
            if self.tls { "TLS" } else { "plain" },
            self.nicks.join("/"),
            self.channels.join(" "),
            self.sasl.as_ref().map_or("off".to_owned(), |s| format!("as {}", s.account)),
            self.flood.map_or("off".to_owned(), |(burst, every)| format!(
                "burst {burst}, then 1 line per {every:?}"
            )),
        )
    }

    fn start(&self, start: Start) -> (Arc<dyn Transport>, tokio::task::JoinHandle<()>) {
        let mut options = self.options(&start.prefix);
        options.channels = start.rooms;
        options.sts = start.sts;
        options.language = start.language;
        options.may_send = start.may_send;
        let (transport, supervisor) = IrcTransport::start(options, start.stop);
        (transport, supervisor)
    }

    async fn check(&self, prefix: &str, limit: Duration) -> Result<String, String> {
        match IrcTransport::check(self.options(prefix), limit).await {
            Ok(checked) => Ok(match checked.account {
                Some(account) => format!("logged in as {account}"),
                None => format!("registered as {}, not logged in to services", checked.nick),
            }),
            Err(error) => Err(crate::error_chain(&error)),
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `[[irc]]`'s TLS trust options (`tls_ca`, `tls_ca_only`, `tls_pin`, `client_cert`,
/// `client_key`), checked when the config is read: a pin that is not `sha256/BASE64`, a
/// file that cannot be read or holds no certificate, a key that is not the certificate's
/// are refused here, before any connection, with the option to fix. With `tls = false`,
/// `tls_ca`, `tls_ca_only` and `tls_pin` are for the TLS an STS policy moves to.
fn tls_options(raw: &Irc, base: &Path) -> Result<TlsOptions, String> {
    let at = |what: String| format!("[[irc]] `{}`: {what}", raw.name);
    let anchored = |path: &Option<PathBuf>| {
        path.as_ref().map(|path| if path.is_relative() { base.join(path) } else { path.clone() })
    };
    let options = TlsOptions {
        ca: anchored(&raw.tls_ca),
        ca_only: raw.tls_ca_only.unwrap_or(false),
        pin: raw.tls_pin.as_deref().map(str::parse::<Pin>).transpose().map_err(|e| at(e.to_string()))?,
        client_cert: anchored(&raw.client_cert),
        client_key: anchored(&raw.client_key),
    };
    if options == TlsOptions::default() {
        return Ok(options);
    }
    // With tls = false the trust options apply to the TLS an STS policy moves the
    // connection to (a self-signed network that upgrades can be pinned); a client
    // certificate has no use there.
    if raw.tls == Some(false) && (options.client_cert.is_some() || options.client_key.is_some()) {
        return Err(at("client_cert and client_key apply only to TLS; \
             remove tls = false (TLS is the default) or remove them"
            .to_owned()));
    }
    // Reads the files now, so that a wrong path is reported by `check-config`.
    tls::client_config(&options).map_err(|e| at(crate::error_chain(&e)))?;
    Ok(options)
}

/// A network's `code_style`: `bold` unless it names another style.
fn code_style(raw: Option<&str>, at: &dyn Fn(&str) -> String) -> Result<CodeStyle, String> {
    let Some(name) = raw else { return Ok(CodeStyle::default()) };
    CodeStyle::parse(name).ok_or_else(|| {
        at(&format!(
            "code_style `{name}` is not a style; write code_style = \"bold\" (the default), \"monospace\" \
             (irssi shows it as a reverse Q) or \"plain\""
        ))
    })
}

/// A network's `form`: `compact` unless it asks for the full one.
fn form(raw: Option<&str>, at: &dyn Fn(&str) -> String) -> Result<Form, String> {
    match raw {
        None | Some("compact") => Ok(Form::Compact),
        Some("full") => Ok(Form::Full),
        Some(other) => Err(at(&format!(
            "form `{other}` is not a form; write form = \"compact\" (the default: a Duel round in three \
             lines) or \"full\" (a line per step, as on Matrix)"
        ))),
    }
}

/// `[irc.sasl]`, checked: known mechanisms, a password for those that need one.
fn sasl_settings(raw: Sasl, base: &Path, at: &dyn Fn(&str) -> String) -> Result<SaslSettings, String> {
    let password =
        raw.password.map(|s| s.read().map_err(|e| at(&format!("sasl password: {e}")))).transpose()?;
    let ecdsa_key = raw.ecdsa_key.map(|path| if path.is_relative() { base.join(path) } else { path });
    if let Some(path) = &ecdsa_key {
        // Read now, so that a wrong path or file is reported by `check-config`.
        EcdsaKey::load(path).map_err(|e| at(&format!("sasl.ecdsa_key: {e}")))?;
    }
    let names: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
    let mechanisms = raw
        .mechanisms
        .unwrap_or_default()
        .iter()
        .map(|name| {
            Mechanism::parse(name).ok_or_else(|| {
                at(&format!(
                    "sasl.mechanisms: `{name}` is not one spellbridge speaks; write some of {}",
                    names.join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let needs_password = if mechanisms.is_empty() {
        ecdsa_key.is_none()
    } else {
        mechanisms.iter().any(|m| matches!(m, Mechanism::ScramSha256 | Mechanism::Plain))
    };
    if password.is_none() && needs_password {
        return Err(at(
            "[irc.sasl] has no password; add password = { env = \"…\" }, or mechanisms = [\"EXTERNAL\"] to log in with the client certificate, or ecdsa_key = \"bot.pem\" to log in with ECDSA-NIST256P-CHALLENGE",
        ));
    }
    if ecdsa_key.is_none() && mechanisms.contains(&Mechanism::EcdsaNist256pChallenge) {
        return Err(at(
            "sasl.mechanisms lists ECDSA-NIST256P-CHALLENGE but [irc.sasl] has no key; add ecdsa_key = \"bot.pem\" (a PEM P-256 private key)",
        ));
    }
    let identify = raw.identify.unwrap_or(false);
    if identify && password.is_none() {
        return Err(at("sasl.identify = true needs the sasl password (NickServ IDENTIFY sends it)"));
    }
    Ok(SaslSettings {
        account: raw.account,
        password,
        ecdsa_key,
        mechanisms,
        required: raw.required.unwrap_or(true),
        identify,
        regain: raw.regain.unwrap_or(false),
    })
}

fn settings(raw: Irc, base: &Path) -> Result<IrcSettings, String> {
    let name = raw.name;
    let at = |what: &str| format!("[[irc]] `{name}`: {what}");
    if raw.server.trim().is_empty() {
        return Err(at("`server` is empty; write the server's host name, e.g. server = \"irc.libera.chat\""));
    }
    if raw.nick.trim().is_empty() || raw.nick.contains(' ') {
        return Err(at("`nick` must be one word, e.g. nick = \"spellbridge\""));
    }
    for channel in &raw.channels {
        if !channel.starts_with(['#', '&']) || channel.contains([' ', ',', '\x07']) {
            return Err(at(&format!(
                "`{channel}` is not a channel name; channels start with # and have no spaces or commas"
            )));
        }
    }
    let tls = raw.tls.unwrap_or(true);
    let mut nicks = vec![raw.nick.clone()];
    nicks.extend(raw.alt_nicks.unwrap_or_else(|| vec![format!("{}_", raw.nick), format!("{}__", raw.nick)]));
    let password = raw.password.map(|s| s.read().map_err(|e| at(&format!("password: {e}")))).transpose()?;
    let sasl = raw.sasl.map(|s| sasl_settings(s, base, &at)).transpose()?;
    let flood = raw.flood.unwrap_or_default();
    let flood = if flood.enabled.unwrap_or(true) {
        let burst = flood.burst.unwrap_or(4);
        let interval = match &flood.interval {
            Some(text) => network::duration(text, "flood.interval", &at)?,
            None => Duration::from_secs(2),
        };
        Some((burst.max(1), interval))
    } else {
        None
    };
    let reconnect_delay = match &raw.reconnect_delay {
        Some(text) => network::duration(text, "reconnect_delay", &at)?,
        None => Duration::from_secs(1),
    };
    let user_limit = network::user_limit(raw.user_limit, &at)?;
    let code_style = code_style(raw.code_style.as_deref(), &at)?;
    let form = form(raw.form.as_deref(), &at)?;
    Ok(IrcSettings {
        port: raw.port.unwrap_or(if tls { 6697 } else { 6667 }),
        server: raw.server,
        tls,
        tls_options: TlsOptions::default(),
        username: raw.username.unwrap_or_else(|| raw.nick.clone()),
        realname: raw.realname.unwrap_or_else(|| "spellbridge chat games".to_owned()),
        nicks,
        password,
        sasl,
        channels: raw.channels,
        require_account: raw.require_account,
        ctcp: raw.ctcp.unwrap_or(true),
        rejoin_on_kick: raw.rejoin_on_kick.unwrap_or(true),
        code_style,
        form,
        flood,
        user_limit,
        reconnect_delay,
        name,
    })
}
