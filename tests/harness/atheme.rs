//! Atheme IRC services (Debian package `atheme-services`, installed by
//! `tests/scripts/install-atheme.sh`) linked to a test [`InspIrcd`] started with
//! [`Options::services`](super::inspircd::Options::services): NickServ accounts, and SASL
//! PLAIN, EXTERNAL (CertFP) and ECDSA-NIST256P-CHALLENGE through SaslServ. Debian 12's
//! Atheme 7.2 has no SCRAM module. Facts this relies on (Atheme 7.2.12):
//!
//! - `atheme-services -n -c CONF -D DIR -l LOG -p PID` runs in the foreground; it runs as
//!   root; it refuses to start with `raw` in `general` ("TAINTED"), and `pbkdf2v2` rounds
//!   below 10000 are raised with a warning.
//! - It links to InspIRCd's `type="servers"` port with `modules/protocol/inspircd`; its
//!   log says `finished synching with uplink` once linked; `recontime = 1` makes it link
//!   again a second after InspIRCd restarts.
//! - `NickServ REGISTER <password> <email>` with `auth = none` creates the account and logs
//!   the registering client in; `CERT ADD <fingerprint>` adds a CertFP (InspIRCd's
//!   `hash="sha256"` fingerprint, lower-case hex) for SASL EXTERNAL; `SET PUBKEY <base64>`
//!   (answered "Your public key is now set to …") the key for ECDSA-NIST256P-CHALLENGE.
//! - `REGAIN <nick>` (a logged-in client taking its account's nick from another
//!   connection) is in `modules/nickserv/enforce`, not `ghost`.
//!
//! The API is blocking (std only) like [`InspIrcd`]'s, except the account helpers, which
//! are async clients.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::HarnessError;
use super::inspircd::{InspIrcd, LINK_PASSWORD, SERVER_NAME, SERVICES_NAME};
use super::irc_client::{IrcClient, MessageKind};

/// Where the Debian package installs the services.
pub const BINARY: &str = "/usr/bin/atheme-services";

/// What the log says once the services have linked.
const LINKED: &str = "finished synching with uplink";

/// Running (or stopped, between `stop` and `restart`) services linked to one InspIRCd.
/// Dropping it stops them; the temp dir with the database goes with it.
pub struct Atheme {
    dir: tempfile::TempDir,
    child: Option<Child>,
    /// The InspIRCd's client port, for the account helpers.
    irc_port: u16,
    link_timeout: Duration,
}

impl Atheme {
    /// Starts services linked to `ircd` (started with `Options::services`) and waits until
    /// they have linked.
    pub fn start(ircd: &InspIrcd) -> Result<Atheme, HarnessError> {
        if !Path::new(BINARY).exists() {
            return Err(HarnessError::ServicesNotInstalled { binary: BINARY.to_owned() });
        }
        let Some(link_port) = ircd.services_port() else {
            return Err(HarnessError::Io {
                what: "starting Atheme".to_owned(),
                source: std::io::Error::other("the InspIRCd was started without Options::services"),
            });
        };
        let dir = tempfile::Builder::new()
            .prefix("spellbridge-atheme-")
            .tempdir()
            .map_err(HarnessError::io("creating the Atheme temp dir"))?;
        let mut services =
            Atheme { dir, child: None, irc_port: ircd.port(), link_timeout: Duration::from_secs(20) };
        let config = services.config_path();
        fs::write(&config, config_text(ircd.network(), link_port))
            .map_err(HarnessError::io(format!("writing {}", config.display())))?;
        services.launch()?;
        Ok(services)
    }

    /// The process id while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the services (SIGTERM, then SIGKILL): InspIRCd sees them split.
    pub fn stop(&mut self) -> Result<(), HarnessError> {
        match self.child.take() {
            Some(child) => super::terminate(child, Duration::from_secs(5), "Atheme"),
            None => Ok(()),
        }
    }

    /// Starts them again with the same database and waits until linked.
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        self.stop()?;
        self.launch()
    }

    /// Waits until the services have linked again (after InspIRCd restarted, say).
    pub fn wait_linked(&self, since: u64) -> Result<(), HarnessError> {
        let deadline = Instant::now() + self.link_timeout;
        while Instant::now() < deadline {
            if read_from(&self.log_path(), since).contains(LINKED) {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Err(HarnessError::ServicesNotLinked { waited: self.link_timeout, log_tail: self.log_tail(30) })
    }

    /// The log's length now, to wait for what comes after it ([`Atheme::wait_linked`]).
    pub fn log_len(&self) -> u64 {
        fs::metadata(self.log_path()).map(|m| m.len()).unwrap_or(0)
    }

    /// The last `lines` lines of the services' output.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = read_from(&self.log_path(), 0);
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Registers the NickServ account `account` with `password`, from a client using that
    /// nick (which then quits).
    pub async fn register(&self, account: &str, password: &str) -> Result<(), HarnessError> {
        let mut client = IrcClient::connect(self.irc_port, account).await?;
        nickserv(&mut client, &format!("REGISTER {password} {account}@{SERVER_NAME}"), "is now registered")
            .await?;
        client.quit().await
    }

    /// Registers `account` and adds `fingerprint` (a client certificate's SHA-256, hex) to
    /// its CertFP list, for SASL EXTERNAL.
    pub async fn register_with_cert(
        &self,
        account: &str,
        password: &str,
        fingerprint: &str,
    ) -> Result<(), HarnessError> {
        let mut client = IrcClient::connect(self.irc_port, account).await?;
        nickserv(&mut client, &format!("REGISTER {password} {account}@{SERVER_NAME}"), "is now registered")
            .await?;
        nickserv(&mut client, &format!("CERT ADD {fingerprint}"), "to your fingerprint list").await?;
        client.quit().await
    }

    /// Registers `account` and sets its ECDSA-NIST256P-CHALLENGE public key (`SET PUBKEY`,
    /// base64 of the compressed P-256 point).
    pub async fn register_with_pubkey(
        &self,
        account: &str,
        password: &str,
        public_key: &str,
    ) -> Result<(), HarnessError> {
        let mut client = IrcClient::connect(self.irc_port, account).await?;
        nickserv(&mut client, &format!("REGISTER {password} {account}@{SERVER_NAME}"), "is now registered")
            .await?;
        nickserv(&mut client, &format!("SET PUBKEY {public_key}"), "public key is now set").await?;
        client.quit().await
    }

    fn config_path(&self) -> PathBuf {
        self.dir.path().join("atheme.conf")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("atheme.out")
    }

    fn launch(&mut self) -> Result<(), HarnessError> {
        let since = self.log_len();
        let output = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(HarnessError::io("opening the Atheme output file"))?;
        let stderr = output.try_clone().map_err(HarnessError::io("sharing the Atheme output file"))?;
        let dir = self.dir.path();
        let child = Command::new(BINARY)
            .arg("-n")
            .arg("-c")
            .arg(self.config_path())
            .arg("-D")
            .arg(dir)
            .arg("-l")
            .arg(dir.join("atheme.log"))
            .arg("-p")
            .arg(dir.join("atheme.pid"))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(stderr)
            .spawn()
            .map_err(HarnessError::io(format!("starting {BINARY}")))?;
        self.child = Some(child);
        let linked = self.wait_linked(since);
        if linked.is_err() {
            let _ = self.stop();
        }
        linked
    }
}

impl Drop for Atheme {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Sends `command` to NickServ and waits for a notice containing `success`.
async fn nickserv(client: &mut IrcClient, command: &str, success: &str) -> Result<(), HarnessError> {
    client.privmsg("NickServ", command).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Some(message) = client.next_message(left).await else { break };
        if message.kind == MessageKind::Notice && message.from == "NickServ" {
            if message.text.contains(success) {
                return Ok(());
            }
            seen.push(message.text);
        }
    }
    let verb = command.split(' ').next().unwrap_or(command);
    Err(HarnessError::Client {
        nick: client.nick().to_owned(),
        reason: format!("NickServ {verb}: no \"{success}\"; NickServ said: {seen:?}"),
    })
}

/// What the file holds from `offset` on.
fn read_from(path: &Path, offset: u64) -> String {
    let bytes = fs::read(path).unwrap_or_default();
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

/// The services' config: NickServ with CERT, SaslServ with PLAIN, EXTERNAL and
/// ECDSA-NIST256P-CHALLENGE, no rate limits.
fn config_text(network: &str, link_port: u16) -> String {
    format!(
        r#"/* Written by spellbridge's test harness (tests/harness/atheme.rs). */
loadmodule "modules/protocol/inspircd";
loadmodule "modules/backend/opensex";
loadmodule "modules/crypto/pbkdf2v2";
loadmodule "modules/nickserv/main";
loadmodule "modules/nickserv/identify";
loadmodule "modules/nickserv/register";
loadmodule "modules/nickserv/set_core";
loadmodule "modules/nickserv/cert";
loadmodule "modules/nickserv/info";
loadmodule "modules/nickserv/ghost";
loadmodule "modules/nickserv/enforce";
loadmodule "modules/nickserv/logout";
loadmodule "modules/saslserv/main";
loadmodule "modules/saslserv/plain";
loadmodule "modules/saslserv/external";
loadmodule "modules/saslserv/ecdsa-nist256p-challenge";
pbkdf2v2 {{ rounds = 10000; }};
serverinfo {{
	name = "{SERVICES_NAME}";
	desc = "spellbridge test services";
	numeric = "00A";
	recontime = 1;
	netname = "{network}";
	hidehostsuffix = "users.test";
	adminname = "spellbridge tests";
	adminemail = "tests@{SERVER_NAME}";
	registeremail = "noreply@{SERVER_NAME}";
	mta = "/bin/true";
	loglevel = {{ error; info; admin; network; }};
	maxlogins = 100;
	maxusers = 100;
	mdlimit = 30;
	emaillimit = 10;
	emailtime = 300;
	auth = none;
	casemapping = rfc1459;
}};
uplink "{SERVER_NAME}" {{
	host = "127.0.0.1";
	password = "{LINK_PASSWORD}";
	port = {link_port};
}};
nickserv {{
	nick = "NickServ";
	user = "NickServ";
	host = "{SERVICES_NAME}";
	real = "Nickname Services";
	maxnicks = 5;
	expire = 30;
}};
saslserv {{
	nick = "SaslServ";
	user = "SaslServ";
	host = "{SERVICES_NAME}";
	real = "SASL Authentication Agent";
}};
general {{
	permissive_mode;
	flood_msgs = 1000;
	flood_time = 1;
	ratelimit_uses = 1000;
	ratelimit_period = 1;
	kline_time = 7;
	commit_interval = 1;
	default_clone_allowed = 1000;
	default_clone_warn = 1000;
	uplink_sendq_limit = 1048576;
	language = "en";
}};
"#
    )
}
