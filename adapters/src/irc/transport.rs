//! The IRC [`GameTransport`]: one supervised connection to one network.
//!
//! [`IrcTransport::start`] spawns a supervisor that connects ([`connect`]: TCP with
//! Nagle off, TLS through rustls when asked or when an STS policy holds), registers
//! ([`register`]: the capabilities the server lists, SASL, alternate nicks, taking the
//! configured nick back), joins the channels, and then runs a session until the
//! connection ends; it then reconnects with exponential backoff and jitter, rejoining
//! every channel it should be in ([`GameTransport::leave`] takes one out of that set and
//! PARTs it). A server's `ERROR` ends the connection at once (the socket may stay open
//! after it), so the reconnect does not wait for a close or a ping timeout. Every
//! connection error is logged with its whole cause ([`error_chain`]). With a
//! login required and not achieved, the connection reads [`Connection::LoggedOut`] (the daemon's
//! `/healthz` says "not logged in") until a later connection logs in. The session
//! answers the server's PINGs and sends its own after [`IrcOptions::ping`] of silence.
//!
//! Inbound PRIVMSGs become [`Inbound`] messages: `text` with the formatting stripped,
//! `rich` with it read into rich text; the player is the services account when known
//! (the `account` tag, or [`accounts`] from extended-join, account-notify and WHOX) and
//! then `verified`, else the bare nick (not verified: a nick can be taken by anyone; a
//! `guest` where players are their accounts, `require_account`, so relayed lines mark it);
//! `operator` says whether the sender is half-op or
//! higher in the channel at that moment (from the members list the session keeps). A
//! CTCP ACTION (`/me`) becomes [`Said::Emote`]; other CTCP requests are never delivered:
//! VERSION, PING and CLIENTINFO are answered ([`ctcp`]) unless the network's `ctcp` is
//! off, at most [`ctcp::PER_USER`] per user per [`ctcp::WINDOW`]. NOTICEs are never
//! delivered: by convention nobody answers them, and a bridge does not relay them.
//!
//! Everything the bot writes to a channel or user goes through the token bucket:
//! outbound messages, rendered to mIRC codes and split to the 512-byte limit (an acted
//! message, [`Voice::Act`], is wrapped line by line in `\x01ACTION …\x01`), and the
//! bot's own notices (CTCP answers, refusals). At most [`NOTICE_BACKLOG`] notices wait
//! in the bucket's queue; more are dropped, so a flood of requests can neither make the
//! server disconnect the bot nor hold game output back.
//!
//! Capabilities requested when offered: [`cap::WANTED`], and `sasl` with a login.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use futures_util::{SinkExt as _, StreamExt as _};
use irc::client::prelude::{Command, Message, Response};
use spellbridge_core::{
    Destination, Form, GameTransport, Inbound, Login, Member, MemberChange, NetworkId, PlayerId, RoomId,
    Said, TransportError, Voice, Whisper,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::accounts::{self, Accounts};
use super::connect::{self, ConnectError};
use super::flood::Flood;
use super::members::Members;
use super::options::IrcOptions;
use super::register::{Action, Registration};
use super::renames::Renames;
use super::roster::Roster;
use super::sts::StsPolicy;
use super::{ctcp, format, split, tls};
use crate::error_chain;
use crate::supervise::{Watched, backoff, restarting};

pub use crate::supervise::Connection;

/// A message waiting to be written, with who to tell once it is.
struct Job {
    target: String,
    lines: Vec<String>,
    done: oneshot::Sender<()>,
}

/// State shared between the transport handle and its connection tasks.
struct Shared {
    options: IrcOptions,
    /// Channels to be in: the configured ones plus those joined since, less those left.
    /// Each registration joins these (and only these).
    channels: Mutex<BTreeSet<String>>,
    /// The nick each player last used, to address private messages to accounts.
    nicks: Mutex<HashMap<PlayerId, String>>,
    /// The bot's current nick and user@host length, for line splitting.
    me: Mutex<(String, usize)>,
    connection: watch::Sender<Connection>,
    reconnects: std::sync::atomic::AtomicU64,
    /// `join()` calls waiting for the server's answer, by lower-cased channel name.
    joining: Mutex<HashMap<String, Vec<JoinWaiter>>>,
    /// Who is in the bot's channels and with which prefix, kept by the current session
    /// (emptied when a new one starts).
    members: Mutex<Members>,
    /// The services account the bot was logged in to when it became ready.
    account: Mutex<Option<String>>,
    /// Who is logged in to which services account, kept by the current session.
    accounts: Mutex<Accounts>,
    /// Players are their services accounts here (`require_account`, as the session
    /// last judged it): a member without one cannot be named as a player.
    accounts_required: std::sync::atomic::AtomicBool,
    /// WHOX can ask the server for a member's account.
    whox: std::sync::atomic::AtomicBool,
    /// Channel members' changes for the daemon ([`GameTransport::member_change`]), sent
    /// only once it has asked for them.
    member_changes: mpsc::UnboundedSender<MemberChange>,
    reporting_members: std::sync::atomic::AtomicBool,
}

/// A `join()` call waiting for the server: `Ok` once joined, `Err(reason)` if refused.
type JoinWaiter = oneshot::Sender<Result<(), String>>;

impl Shared {
    /// True when the bot should be in `channel` (IRC channel names ignore case).
    fn wants(&self, channel: &str) -> bool {
        lock(&self.channels).iter().any(|c| c.eq_ignore_ascii_case(channel))
    }

    /// Answers everyone waiting to join `channel`.
    fn joined(&self, channel: &str, outcome: &Result<(), String>) {
        let waiters = lock(&self.joining).remove(&channel.to_lowercase()).unwrap_or_default();
        for waiter in waiters {
            let _ = waiter.send(outcome.clone());
        }
    }
}

/// How long `join()` waits for the server to answer.
const JOIN_WAIT: Duration = Duration::from_secs(10);

/// The most notices (CTCP answers, refusals) waiting for the token bucket at once; more
/// are dropped.
pub const NOTICE_BACKLOG: usize = 4;

/// A handle on one IRC network.
pub struct IrcTransport {
    shared: Arc<Shared>,
    inbound: tokio::sync::Mutex<mpsc::Receiver<Inbound>>,
    jobs: mpsc::UnboundedSender<Job>,
    joins: mpsc::UnboundedSender<Membership>,
    member_changes: tokio::sync::Mutex<mpsc::UnboundedReceiver<MemberChange>>,
}

/// A change of channel the connection task makes.
enum Membership {
    Join(String),
    Part(String),
    /// Ask the server which account this nick is logged in to (WHOX).
    Who(String),
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl IrcTransport {
    /// Starts the connection supervisor; it runs until `shutdown` is cancelled.
    pub fn start(
        options: IrcOptions,
        shutdown: CancellationToken,
    ) -> (Arc<IrcTransport>, tokio::task::JoinHandle<()>) {
        let (transport, supervisor) = IrcTransport::parts(options, shutdown.clone());
        let shared = transport.shared.clone();
        // One supervisor, run again if it ends early or panics (it keeps the queues).
        let supervisor = Arc::new(tokio::sync::Mutex::new(supervisor));
        let handle = tokio::spawn(async move {
            let watched = Watched {
                network: &shared.options.network,
                connection: &shared.connection,
                reconnects: &shared.reconnects,
                backoff: shared.options.backoff,
            };
            restarting(watched, shutdown, move || {
                let supervisor = supervisor.clone();
                async move { supervisor.lock().await.run().await }
            })
            .await;
        });
        (transport, handle)
    }

    /// Connects once (following an STS upgrade), registers, logs in as configured, and
    /// says QUIT as soon as the bot could play (`spellbridge check-config --connect`).
    /// Waits at most `limit`; the error's source chain says why it failed.
    pub async fn check(options: IrcOptions, limit: Duration) -> Result<Checked, CheckError> {
        let stop = CancellationToken::new();
        let (transport, mut supervisor) = IrcTransport::parts(options, stop.clone());
        let mut attempt = tokio::spawn(async move {
            loop {
                match supervisor.session().await {
                    (_, Err(Ended::Upgrade(port))) if supervisor.upgraded.is_none() => {
                        supervisor.upgraded = Some(port);
                    }
                    (_, outcome) => return outcome,
                }
            }
        });
        let mut connection = transport.connection();
        let up = tokio::time::timeout(limit, async {
            tokio::select! {
                ended = &mut attempt => Err(ended.unwrap_or(Err(Ended::Closed))),
                _ = connection.wait_for(|l| *l == Connection::Up) => Ok(()),
            }
        })
        .await;
        stop.cancel();
        match up {
            Ok(Ok(())) => {
                // The session says QUIT on its way out, briefly.
                let _ = tokio::time::timeout(Duration::from_secs(2), attempt).await;
                let shared = &transport.shared;
                Ok(Checked { nick: transport.nick(), account: lock(&shared.account).clone() })
            }
            Ok(Err(Err(ended))) => Err(CheckError(ended)),
            Ok(Err(Ok(()))) => Err(CheckError(Ended::Closed)),
            Err(_) => {
                attempt.abort();
                Err(CheckError(Ended::NotReady(limit)))
            }
        }
    }

    /// The transport and its supervisor, not yet running.
    fn parts(options: IrcOptions, shutdown: CancellationToken) -> (Arc<IrcTransport>, Supervisor) {
        let (inbound_tx, inbound_rx) = mpsc::channel(1024);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (joins_tx, joins_rx) = mpsc::unbounded_channel();
        let (changes_tx, changes_rx) = mpsc::unbounded_channel();
        let (connection, _) = watch::channel(Connection::Down);
        let nick = options.nicks.first().cloned().unwrap_or_default();
        if options.require_account == Some(false) {
            tracing::warn!(network = %options.network, "require_account = false: players without a services account are known by nick, which anyone can take when it is free; they never get game-master standing");
        }
        let shared = Arc::new(Shared {
            channels: Mutex::new(options.channels.iter().cloned().collect()),
            nicks: Mutex::new(HashMap::new()),
            me: Mutex::new((nick, 0)),
            connection,
            reconnects: std::sync::atomic::AtomicU64::new(0),
            joining: Mutex::new(HashMap::new()),
            members: Mutex::new(Members::default()),
            account: Mutex::new(None),
            accounts: Mutex::new(Accounts::default()),
            accounts_required: std::sync::atomic::AtomicBool::new(false),
            whox: std::sync::atomic::AtomicBool::new(false),
            member_changes: changes_tx,
            reporting_members: std::sync::atomic::AtomicBool::new(false),
            options,
        });
        let supervisor = Supervisor {
            shared: shared.clone(),
            inbound: inbound_tx,
            jobs: jobs_rx,
            joins: joins_rx,
            shutdown,
            upgraded: None,
            roster: Roster::default(),
        };
        let transport = Arc::new(IrcTransport {
            shared,
            inbound: tokio::sync::Mutex::new(inbound_rx),
            jobs: jobs_tx,
            joins: joins_tx,
            member_changes: tokio::sync::Mutex::new(changes_rx),
        });
        (transport, supervisor)
    }

    /// Watches the connection state (tests wait for [`Connection::Up`]).
    pub fn connection(&self) -> watch::Receiver<Connection> {
        self.shared.connection.subscribe()
    }

    /// How many times the connection was re-established.
    pub fn reconnects(&self) -> u64 {
        self.shared.reconnects.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The bot's nick on this network now.
    pub fn nick(&self) -> String {
        lock(&self.shared.me).0.clone()
    }

    /// Waits until the connection is registered, at most `limit`.
    pub async fn wait_up(&self, limit: Duration) -> bool {
        let mut connection = self.connection();
        tokio::time::timeout(limit, connection.wait_for(|l| *l == Connection::Up))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

#[async_trait]
impl GameTransport for IrcTransport {
    fn network(&self) -> &NetworkId {
        &self.shared.options.network
    }

    async fn recv(&self) -> Option<Inbound> {
        self.inbound.lock().await.recv().await
    }

    /// Compact: a real network's flood control lets the bot send about one line per 2 s,
    /// so every line a game saves is time the room does not wait.
    fn form(&self) -> Form {
        self.shared.options.form
    }

    /// `/msg <nick> …`.
    fn whisper(&self) -> Whisper {
        Whisper::Msg
    }

    fn is_member(&self, room: &RoomId, name: &str) -> bool {
        lock(&self.shared.members).contains(room.as_str(), name)
    }

    /// The channel member with nick `name`: their account where it is known; where
    /// players are their accounts and it is not known yet, WHOX asks for it.
    fn members_named(&self, room: &RoomId, name: &str) -> Vec<Member> {
        let Some(nick) = lock(&self.shared.members).nick_in(room.as_str(), name).map(str::to_owned) else {
            return Vec::new();
        };
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        let required = self.shared.accounts_required.load(relaxed);
        let known = lock(&self.shared.accounts).known(&nick).map(|a| a.map(str::to_owned));
        let (identity, login) = match known {
            Some(Some(account)) => (account, Login::Known),
            _ if !required => (nick.clone(), Login::Known),
            Some(None) => (nick.clone(), Login::LoggedOut),
            None if self.shared.whox.load(relaxed) => {
                let _ = self.joins.send(Membership::Who(nick.clone()));
                (nick.clone(), Login::Asking)
            }
            None => (nick.clone(), Login::LoggedOut),
        };
        let identity = PlayerId::new(identity);
        if login == Login::Known {
            // Private messages to them (a Duel's) go to this nick until they speak.
            lock(&self.shared.nicks).entry(identity.clone()).or_insert_with(|| nick.clone());
        }
        vec![Member { identity, shown: nick, login }]
    }

    /// Joins, parts, kicks, quits and nick changes in the bot's channels, and the
    /// members found on joining one (`roster`), from the first call on.
    async fn member_change(&self) -> Option<MemberChange> {
        self.shared.reporting_members.store(true, std::sync::atomic::Ordering::Relaxed);
        self.member_changes.lock().await.recv().await
    }

    async fn join(&self, room: &RoomId) -> Result<(), TransportError> {
        let channel = room.as_str().to_owned();
        if !channel.starts_with(['#', '&']) {
            return Err(TransportError::Refused {
                network: self.shared.options.network.clone(),
                reason: format!("`{channel}` is not a channel name"),
            });
        }
        lock(&self.shared.channels).insert(channel.clone());
        if *self.shared.connection.borrow() != Connection::Up {
            // Joined on the next registration, from the set.
            return Ok(());
        }
        let (answer, answered) = oneshot::channel();
        lock(&self.shared.joining).entry(channel.to_lowercase()).or_default().push(answer);
        let _ = self.joins.send(Membership::Join(channel.clone()));
        let refused =
            |reason: String| TransportError::Refused { network: self.shared.options.network.clone(), reason };
        match tokio::time::timeout(JOIN_WAIT, answered).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(reason))) => Err(refused(reason)),
            // The connection dropped meanwhile: the next registration joins from the set.
            Ok(Err(_)) => Ok(()),
            Err(_) => {
                Err(refused(format!("no answer from the server to JOIN {channel} within {JOIN_WAIT:?}")))
            }
        }
    }

    /// PARTs the channel when connected; either way it is no longer joined on the next
    /// registration. A PART the server refuses (not on the channel) is harmless.
    async fn leave(&self, room: &RoomId) -> Result<(), TransportError> {
        let channel = room.as_str().to_owned();
        lock(&self.shared.channels).retain(|c| !c.eq_ignore_ascii_case(&channel));
        if *self.shared.connection.borrow() == Connection::Up {
            let _ = self.joins.send(Membership::Part(channel));
        }
        Ok(())
    }

    async fn send(
        &self,
        to: &Destination,
        message: &spellbridge_core::Message,
    ) -> Result<(), TransportError> {
        let text = &message.text;
        let network = &self.shared.options.network;
        let down = |reason: &str| TransportError::Disconnected {
            network: network.clone(),
            reason: reason.to_owned(),
        };
        if *self.shared.connection.borrow() != Connection::Up {
            return Err(down("not connected; the message stays queued until the connection is back"));
        }
        let target = match to {
            Destination::Room(room) => room.as_str().to_owned(),
            Destination::Private(player) => {
                lock(&self.shared.nicks).get(player).cloned().unwrap_or_else(|| player.as_str().to_owned())
            }
        };
        let (nick, user_host) = lock(&self.shared.me).clone();
        // `:nick!user@host ` as the server relays our line to others.
        let prefix = 1 + nick.len() + 1 + user_host + 1;
        let splitter = match message.voice {
            Voice::Say => split::Splitter::new(prefix),
            Voice::Act => split::Splitter::new(prefix).with_ctcp("ACTION"),
        };
        // `/msg spellbot …` names the bot by its nick now.
        let text = text.clone().naming_bot(&nick);
        let lines = splitter
            .split(&target, &format::render(&text, self.shared.options.code_style))
            .map_err(|e| TransportError::Refused { network: network.clone(), reason: e.to_string() })?;
        if lines.is_empty() {
            return Ok(());
        }
        let (done, written) = oneshot::channel();
        self.jobs.send(Job { target, lines, done }).map_err(|_| down("the connection task has stopped"))?;
        written.await.map_err(|_| down("the connection dropped before the message was written"))
    }
}

/// The task that keeps one connection alive.
struct Supervisor {
    shared: Arc<Shared>,
    inbound: mpsc::Sender<Inbound>,
    jobs: mpsc::UnboundedReceiver<Job>,
    joins: mpsc::UnboundedReceiver<Membership>,
    shutdown: CancellationToken,
    /// A plaintext connection's STS policy named this TLS port (for this run).
    upgraded: Option<u16>,
    /// The channels' members as the last connection knew them, for the next one to
    /// report those who left meanwhile.
    roster: Roster,
}

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
enum Ended {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the connection failed")]
    Wire(#[from] irc::proto::error::ProtocolError),
    #[error("the server closed the connection")]
    Closed,
    /// The server said `ERROR` (a kill, a K-line, a shutdown): the link is over, whether
    /// or not the socket is closed yet.
    #[error("the server closed the link: {0}")]
    ServerError(String),
    #[error("no answer from the server within {0:?} of a PING")]
    PingTimeout(Duration),
    #[error("{0}")]
    Refused(String),
    #[error("not logged in: {0}")]
    NotLoggedIn(String),
    #[error("the server's STS policy asks for TLS on port {0}")]
    Upgrade(u16),
    #[error("spellbridge is shutting down")]
    Shutdown,
    #[error("not registered and logged in within {0:?}")]
    NotReady(Duration),
}

/// What [`IrcTransport::check`] found: the bot registered and could play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The nick the server gave the bot.
    pub nick: String,
    /// The services account it is logged in to, if any.
    pub account: Option<String>,
}

/// Why [`IrcTransport::check`] failed; its source chain has the system's words
/// ([`error_chain`]).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct CheckError(Ended);

impl Supervisor {
    async fn run(&mut self) {
        let network = self.shared.options.network.clone();
        let mut attempt: u32 = 0;
        loop {
            let (registered, outcome) = self.session().await;
            let logged_out = matches!(outcome, Err(Ended::NotLoggedIn(_)));
            let _ = self.shared.connection.send_replace(if logged_out {
                Connection::LoggedOut
            } else {
                Connection::Down
            });
            if self.shutdown.is_cancelled() {
                break;
            }
            match outcome {
                Err(Ended::Upgrade(port)) => {
                    tracing::info!(network = %network, port, "the server asks for TLS (STS): reconnecting with TLS");
                    self.upgraded = Some(port);
                    self.shared.reconnects.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    continue;
                }
                Ok(()) | Err(Ended::Shutdown) => {}
                Err(error) => {
                    tracing::warn!(network = %network, error = %error_chain(&error), "IRC connection lost")
                }
            }
            if registered && !logged_out {
                attempt = 0;
            }
            attempt = attempt.saturating_add(1);
            let delay = backoff(self.shared.options.backoff, attempt, &network);
            tracing::info!(network = %network, attempt, delay_ms = delay.as_millis() as u64, "reconnecting to IRC");
            tokio::select! {
                () = self.shutdown.cancelled() => break,
                () = tokio::time::sleep(delay) => {}
            }
            self.shared.reconnects.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let _ = self.shared.connection.send_replace(Connection::Closed);
    }

    /// Where to connect: the configured port, or TLS on the port an STS policy names.
    fn endpoint(&self) -> (bool, u16) {
        let options = &self.shared.options;
        if options.tls {
            return (true, options.port);
        }
        if let Some(port) = self.upgraded {
            return (true, port);
        }
        let stored = options.sts.as_ref().and_then(|store| store.get(&options.server));
        match stored {
            Some(policy) if policy.expires > SystemTime::now() => (true, policy.port),
            _ => (false, options.port),
        }
    }

    /// One connection, from connect to its end: whether it registered, and how it ended.
    async fn session(&mut self) -> (bool, Result<(), Ended>) {
        let options = &self.shared.options;
        let (tls, port) = self.endpoint();
        // Built per attempt: a fixed file (CA, key) is read again.
        let config = match tls.then(|| tls::client_config(&options.tls_options)).transpose() {
            Ok(config) => config,
            Err(error) => return (false, Err(ConnectError::from(error).into())),
        };
        let wire = match connect::open(&options.server, port, config).await {
            Ok(wire) => wire,
            Err(error) => return (false, Err(error.into())),
        };
        let (sink, stream) = wire.split();
        let (out, writing) = Out::start(sink);
        let registration = Registration::new(options, tls);
        *lock(&self.shared.members) = Members::default();
        lock(&self.shared.accounts).clear();
        for line in registration.start() {
            out.send(line);
        }
        let mut session = Session {
            shared: self.shared.clone(),
            sender: out,
            registration,
            tls,
            port,
            motd: false,
            ready: false,
            queue: VecDeque::new(),
            notices_waiting: 0,
            ctcp_answered: ctcp::Answered::default(),
            slot: None,
            bucket: options.flood.map_or_else(Flood::off, |(burst, interval)| Flood::new(burst, interval)),
            renames: Renames::default(),
            roster: Roster::resuming(std::mem::take(&mut self.roster)),
            heard: Instant::now(),
            pinged: None,
            login_deadline: None,
            warned_accounts: false,
        };
        let outcome = self.drive(&mut session, stream, writing).await;
        self.roster = std::mem::take(&mut session.roster);
        (session.registration.registered(), outcome)
    }

    async fn drive(
        &mut self,
        session: &mut Session,
        mut stream: futures_util::stream::SplitStream<connect::Wire>,
        mut writing: tokio::task::JoinHandle<Result<(), irc::proto::error::ProtocolError>>,
    ) -> Result<(), Ended> {
        // The check's timer moves only earlier before it runs, and after: it may run early
        // (then it does nothing), never late, and each message read costs no timer.
        let check = tokio::time::sleep_until(session.next_check());
        tokio::pin!(check);
        loop {
            let next_send = session.next_send_at();
            let wake = session.next_check();
            if wake < check.deadline() {
                check.as_mut().reset(wake);
            }
            tokio::select! {
                () = self.shutdown.cancelled() => {
                    session.sender.send(Command::QUIT(Some("spellbridge is shutting down".to_owned())));
                    // Let the QUIT go out, briefly.
                    let _ = tokio::time::timeout(Duration::from_secs(1), stream.next()).await;
                    return Err(Ended::Shutdown);
                }
                message = stream.next() => match message {
                    Some(Ok(message)) => session.handle(&message, &self.inbound).await?,
                    Some(Err(error)) => return Err(error.into()),
                    None => return Err(Ended::Closed),
                },
                written = &mut writing => {
                    return match written {
                        Ok(Err(error)) => Err(error.into()),
                        _ => Err(Ended::Closed),
                    };
                }
                Some(job) = self.jobs.recv(), if session.ready => {
                    // Lines the bucket allows go now; the timer is only for a real wait
                    // (it would round up to the next millisecond).
                    session.queue_job(job);
                    session.send_due();
                }
                // A change queued before a reconnect may be stale: the set has the last word.
                Some(change) = self.joins.recv(), if session.registration.registered() => match change {
                    Membership::Join(channel) if self.shared.wants(&channel) => {
                        session.sender.send(Command::JOIN(channel, None, None));
                    }
                    Membership::Part(channel) if !self.shared.wants(&channel) => {
                        session.sender.send(Command::PART(channel, None));
                    }
                    Membership::Who(nick) => {
                        let fields = format!("%tna,{}", accounts::WHOX_TOKEN);
                        session.sender.send(Command::Raw("WHO".to_owned(), vec![nick, fields]));
                    }
                    Membership::Join(_) | Membership::Part(_) => {}
                },
                () = sleep_until(next_send), if next_send.is_some() => session.send_due(),
                () = &mut check => {
                    session.check()?;
                    check.as_mut().reset(session.next_check());
                }
            }
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// The writing half of a connection: lines queue here and a task writes them in order
/// (whatever is waiting goes in one flush).
struct Out(mpsc::UnboundedSender<Message>);

impl Out {
    fn start(
        mut sink: futures_util::stream::SplitSink<connect::Wire, Message>,
    ) -> (Out, tokio::task::JoinHandle<Result<(), irc::proto::error::ProtocolError>>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        let task = tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                sink.feed(message).await?;
                while let Ok(more) = rx.try_recv() {
                    sink.feed(more).await?;
                }
                sink.flush().await?;
            }
            sink.close().await
        });
        (Out(tx), task)
    }

    /// Queues `command` for writing (a connection already gone drops it: the session
    /// ends on its own).
    fn send(&self, command: Command) {
        let _ = self.0.send(Message::from(command));
    }
}

/// A line waiting for the token bucket.
struct Line {
    target: String,
    text: String,
    /// A NOTICE (the bot's own answer), else a PRIVMSG.
    notice: bool,
    /// Told once the line is written (the last line of a job).
    done: Option<oneshot::Sender<()>>,
}

/// The version CTCP VERSION answers.
const VERSION: &str = concat!("spellbridge ", env!("CARGO_PKG_VERSION"));

/// How long NickServ has to answer IDENTIFY when the login is required.
const IDENTIFY_WAIT: Duration = Duration::from_secs(30);

/// One registered-or-registering connection.
struct Session {
    shared: Arc<Shared>,
    sender: Out,
    registration: Registration,
    tls: bool,
    port: u16,
    /// The MOTD is over: registration is complete.
    motd: bool,
    /// The channels' JOINs are written: lines to channels may follow (the server takes a
    /// connection's lines in order, so none arrives before its JOIN).
    ready: bool,
    /// Lines waiting for the token bucket, in order.
    queue: VecDeque<Line>,
    /// How many of them are notices.
    notices_waiting: usize,
    /// CTCP answers per nick.
    ctcp_answered: ctcp::Answered,
    bucket: Flood,
    /// The line at the head of the queue has its slot reserved until this time.
    slot: Option<Instant>,
    /// Nick changes since each user last spoke (the daemon's command limit follows them).
    renames: Renames,
    /// The channels' members as they write their nicks, for the member changes reported.
    roster: Roster,
    /// When the server last said anything.
    heard: Instant,
    /// When the bot's unanswered PING went out.
    pinged: Option<Instant>,
    /// NickServ must have logged the bot in by then.
    login_deadline: Option<Instant>,
    /// The warning that accounts are unknown here was logged.
    warned_accounts: bool,
}

impl Session {
    fn queue_job(&mut self, job: Job) {
        let last = job.lines.len().saturating_sub(1);
        let mut done = Some(job.done);
        for (i, line) in job.lines.into_iter().enumerate() {
            let finish = if i == last { done.take() } else { None };
            self.queue.push_back(Line {
                target: job.target.clone(),
                text: line,
                notice: false,
                done: finish,
            });
        }
    }

    /// Queues a notice to `nick` behind the lines already waiting, unless
    /// [`NOTICE_BACKLOG`] notices already wait (then it is dropped: it answers nobody's game).
    fn notice(&mut self, nick: &str, text: String) {
        if self.notices_waiting >= NOTICE_BACKLOG {
            tracing::debug!(network = %self.shared.options.network, "a notice was dropped: too many are waiting");
            return;
        }
        self.notices_waiting += 1;
        self.queue.push_back(Line { target: nick.to_owned(), text, notice: true, done: None });
        self.send_due();
    }

    /// When the line at the head of the queue may go, reserving its slot in the bucket.
    fn next_send_at(&mut self) -> Option<Instant> {
        if self.queue.is_empty() {
            return None;
        }
        let slot = *self.slot.get_or_insert_with(|| {
            let now = Instant::now();
            now + self.bucket.reserve(now.into_std())
        });
        Some(slot)
    }

    /// Writes every queued line whose slot has come.
    fn send_due(&mut self) {
        loop {
            match self.next_send_at() {
                Some(slot) if slot <= Instant::now() => self.slot = None,
                _ => return,
            }
            if !self.shared.options.may_send.now() {
                // The daemon may no longer act: what waits here is never written (a
                // standby that took over sends it from the outbox).
                if !self.queue.is_empty() {
                    tracing::warn!(network = %self.shared.options.network, lines = self.queue.len(), "the daemon may no longer send: dropping the lines waiting for flood control");
                }
                self.queue.clear();
                self.notices_waiting = 0;
                return;
            }
            let Some(line) = self.queue.pop_front() else { return };
            if line.notice {
                self.notices_waiting = self.notices_waiting.saturating_sub(1);
                self.sender.send(Command::NOTICE(line.target, line.text));
            } else {
                self.sender.send(Command::PRIVMSG(line.target, line.text));
            }
            if let Some(done) = line.done {
                let _ = done.send(());
            }
        }
    }

    /// When [`Session::check`] must run: a PING due, its answer overdue, or NickServ's.
    fn next_check(&self) -> Instant {
        let (quiet, patience) = self.shared.options.ping;
        let ping = match self.pinged {
            Some(sent) => sent + patience,
            None => self.heard + quiet,
        };
        self.login_deadline.map_or(ping, |deadline| deadline.min(ping))
    }

    /// Sends a PING after a silence, ends a connection whose PING went unanswered or
    /// whose required NickServ login did not come.
    fn check(&mut self) -> Result<(), Ended> {
        let now = Instant::now();
        if self.login_deadline.is_some_and(|deadline| deadline <= now) && !self.registration.may_play() {
            return self.fail(format!("NickServ did not confirm IDENTIFY within {IDENTIFY_WAIT:?}"));
        }
        let (quiet, patience) = self.shared.options.ping;
        match self.pinged {
            Some(sent) if sent + patience <= now => return Err(Ended::PingTimeout(patience)),
            Some(_) => {}
            None if self.heard + quiet <= now => {
                self.pinged = Some(now);
                self.sender.send(Command::PING("spellbridge".to_owned(), None));
            }
            None => {}
        }
        Ok(())
    }

    /// Says why in a QUIT and ends the connection as not logged in.
    fn fail(&mut self, why: String) -> Result<(), Ended> {
        self.sender.send(Command::QUIT(Some("not logged in; will retry".to_owned())));
        Err(Ended::NotLoggedIn(why))
    }

    /// The account rule: the configured one, else on where accounts can be known.
    fn require_account(&mut self) -> bool {
        let options = &self.shared.options;
        match options.require_account {
            Some(rule) => rule,
            None => {
                let known = self.registration.accounts_known();
                if !known && !self.warned_accounts {
                    self.warned_accounts = true;
                    tracing::warn!(network = %options.network, "this network shows no services accounts (no account-tag, SASL, account-notify or WHOX): players are known by nick only, and none has game-master standing; set require_account explicitly to silence this");
                }
                known
            }
        }
    }

    /// Joins the configured channels and starts playing.
    fn go_ready(&mut self) {
        let channels: Vec<String> = lock(&self.shared.channels).iter().cloned().collect();
        for channel in channels {
            self.sender.send(Command::JOIN(channel, None, None));
        }
        // Up only now: a message queued while the connection was down must not
        // reach the server before the JOIN of its channel.
        self.ready = true;
        self.login_deadline = None;
        *lock(&self.shared.account) = self.registration.account().map(str::to_owned);
        let required = self.require_account();
        self.shared.accounts_required.store(required, std::sync::atomic::Ordering::Relaxed);
        self.shared.whox.store(self.registration.whox(), std::sync::atomic::Ordering::Relaxed);
        let _ = self.shared.connection.send_replace(Connection::Up);
    }

    async fn handle(&mut self, message: &Message, inbound: &mpsc::Sender<Inbound>) -> Result<(), Ended> {
        self.heard = Instant::now();
        self.pinged = None;
        let before = self.registration.nick().to_owned();
        self.observe_members(message, &before);
        for action in self.registration.read(message) {
            self.carry_out(action)?;
        }
        let nick = self.registration.nick().to_owned();
        if nick != before {
            let user_host = lock(&self.shared.me).1;
            *lock(&self.shared.me) = (nick.clone(), user_host);
        }
        match &message.command {
            Command::PING(token, _) => self.sender.send(Command::PONG(token.clone(), None)),
            // The link is over: reconnect now rather than wait for the socket to close.
            Command::ERROR(text) => return Err(Ended::ServerError(text.clone())),
            Command::Response(Response::RPL_WELCOME, args) => self.welcomed(&nick, args),
            Command::Response(Response::RPL_ENDOFMOTD | Response::ERR_NOMOTD, _) if !self.motd => {
                self.motd = true;
                if self.registration.identifying() {
                    self.login_deadline = Some(Instant::now() + IDENTIFY_WAIT);
                }
            }
            Command::Response(
                code @ (Response::ERR_BANNEDFROMCHAN
                | Response::ERR_INVITEONLYCHAN
                | Response::ERR_CHANNELISFULL
                | Response::ERR_BADCHANNELKEY),
                args,
            ) => self.cannot_join(code, args),
            Command::JOIN(channel, _, _) if message.source_nickname() == Some(nick.as_str()) => {
                self.shared.joined(channel, &Ok(()));
                // Without account tags, ask who is logged in to what (WHOX).
                if self.registration.whox() && !self.registration.caps().enabled("account-tag") {
                    let fields = format!("%tna,{}", accounts::WHOX_TOKEN);
                    self.sender.send(Command::Raw("WHO".to_owned(), vec![channel.clone(), fields]));
                }
            }
            Command::KICK(channel, kicked, reason) if *kicked == nick => {
                self.kicked(message, channel, reason)
            }
            Command::NICK(new) => {
                if let Some(old) = message.source_nickname() {
                    self.renames.renamed(old, new);
                }
            }
            Command::QUIT(_) => {
                if let Some(nick) = message.source_nickname() {
                    self.renames.quit(nick);
                }
            }
            Command::PRIVMSG(target, body) => self.privmsg(&nick, message, target, body, inbound).await,
            _ => {}
        }
        if self.motd && !self.ready && self.registration.may_play() {
            self.go_ready();
        }
        Ok(())
    }

    /// Keeps the channels' members and their accounts up to date, and reports who came
    /// and went when asked to.
    fn observe_members(&mut self, message: &Message, before: &str) {
        {
            let mut members = lock(&self.shared.members);
            members.observe(message, before);
            lock(&self.shared.accounts).observe(message, &members);
        }
        let changes = self.roster.observe(message, before);
        if self.shared.reporting_members.load(std::sync::atomic::Ordering::Relaxed) {
            let network = &self.shared.options.network;
            for (channel, nick, presence) in changes {
                let room = RoomId::new(channel);
                let change = MemberChange { network: network.clone(), room, nick, presence };
                let _ = self.shared.member_changes.send(change);
            }
        }
    }

    /// Carries out what registration asks; an error ends the connection.
    fn carry_out(&mut self, action: Action) -> Result<(), Ended> {
        match action {
            Action::Send(command) => self.sender.send(command),
            Action::Fail(why) => return self.fail(why),
            Action::Refused(why) => return Err(Ended::Refused(why)),
            Action::Upgrade(port) => return Err(Ended::Upgrade(port)),
            Action::Policy(duration) => {
                if let Some(store) = &self.shared.options.sts {
                    let host = &self.shared.options.server;
                    let policy = (!duration.is_zero())
                        .then(|| StsPolicy { port: self.port, expires: SystemTime::now() + duration });
                    tracing::info!(network = %self.shared.options.network, host, ?policy, "STS policy stored");
                    store.set(host, policy);
                }
            }
        }
        Ok(())
    }

    /// RPL_WELCOME: registered as `nick`; learns how long the bot's `user@host` is.
    fn welcomed(&mut self, nick: &str, args: &[String]) {
        // RPL_WELCOME usually ends with nick!user@host; else assume the longest host.
        let user_host = args
            .last()
            .and_then(|text| text.rsplit(' ').next())
            .and_then(|mask| mask.split_once('!'))
            .map_or(self.shared.options.username.len() + 1 + 63, |(_, user_host)| user_host.len());
        *lock(&self.shared.me) = (nick.to_owned(), user_host);
        tracing::info!(network = %self.shared.options.network, nick = %nick, tls = self.tls, "registered on IRC");
    }

    /// A channel refused the bot (banned, invite-only, full, wrong key): its join fails.
    fn cannot_join(&mut self, code: &Response, args: &[String]) {
        tracing::warn!(network = %self.shared.options.network, reply = ?code, detail = ?args, "cannot join a channel");
        // args: [our nick, channel, reason]
        if let Some(channel) = args.get(1) {
            let reason = args.get(2).cloned().unwrap_or_else(|| format!("{code:?}"));
            self.shared.joined(channel, &Err(format!("cannot join {channel}: {reason}")));
        }
    }

    /// The bot was kicked from `channel`: it rejoins after a moment if configured to,
    /// else it leaves the channel out from now on.
    fn kicked(&mut self, message: &Message, channel: &str, reason: &Option<String>) {
        tracing::warn!(network = %self.shared.options.network, channel = %channel, by = ?message.source_nickname(), reason = ?reason, "kicked from a channel");
        if self.shared.options.rejoin_on_kick {
            let sender = self.sender.0.clone();
            let shared = self.shared.clone();
            let channel = channel.to_owned();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(2)).await;
                // If the connection is gone by then, the next one joins from the set;
                // if the channel was left meanwhile, it stays left.
                if shared.wants(&channel) {
                    let _ = sender.send(Message::from(Command::JOIN(channel, None, None)));
                }
            });
        } else {
            lock(&self.shared.channels).remove(channel);
        }
    }

    /// Answers a CTCP request from `nick` (not an ACTION), if CTCP is on, the request is
    /// one the bot answers, and `nick` has not had [`ctcp::PER_USER`] answers lately.
    fn answer_ctcp(&mut self, nick: &str, command: &str, text: &str) {
        if !self.shared.options.ctcp {
            return;
        }
        let Some(answer) = ctcp::answer(command, text, VERSION) else { return };
        if self.ctcp_answered.allow(nick, Instant::now().into_std()) {
            self.notice(nick, answer);
        }
    }

    async fn privmsg(
        &mut self,
        own: &str,
        message: &Message,
        target: &str,
        body: &str,
        inbound: &mpsc::Sender<Inbound>,
    ) {
        let Some(nick) = message.source_nickname() else { return };
        if nick == own {
            return; // our own echo
        }
        let (said, body) = match ctcp::parse(body) {
            None => (Said::Message, body),
            Some((command, text)) if command.eq_ignore_ascii_case("ACTION") => (Said::Emote, text),
            // A request (VERSION, PING, …): answered through the bucket, a few per user.
            Some((command, text)) => return self.answer_ctcp(nick, command, text),
        };
        let text = format::strip(body);
        if said == Said::Emote && text.trim().is_empty() {
            return; // a bare `/me`: nothing was acted
        }
        // The tag when the server sends tags, else what the session learnt.
        let account = if self.registration.caps().enabled("account-tag") {
            accounts::tag(message, "account")
        } else {
            lock(&self.shared.accounts).of(nick).map(str::to_owned)
        };
        let player = PlayerId::new(account.clone().unwrap_or_else(|| nick.to_owned()));
        lock(&self.shared.nicks).insert(player.clone(), nick.to_owned());
        // A sender without an account is their nick: after a nick change the daemon must
        // carry their command count over (with an account the id does not change).
        let renamed = self.renames.speaks(nick);
        let formerly = renamed.filter(|_| account.is_none()).map(PlayerId::new);
        // An emote is not a command, so it is not refused (the daemon counts commands). The
        // prefix typed full width (`！`) starts a command too, as the daemon reads it.
        let command = said == Said::Message
            && spellbridge_core::grammar::strip_prefix(&text, &self.shared.options.prefix).is_some();
        if command && account.is_none() && self.require_account() {
            let language = self.shared.options.language;
            let note = spellbridge_core::locale::text(
                language,
                "notice-log-in",
                &spellbridge_core::locale::Args::new(),
            );
            return self.notice(nick, note);
        }
        // Where players are their accounts (`require_account`, on by default wherever the
        // server shows accounts), a bare nick is a guest.
        let guest = account.is_none() && self.require_account();
        let options = &self.shared.options;
        let private = !target.starts_with(['#', '&']);
        let room = if private { nick.to_owned() } else { target.to_owned() };
        let message = Inbound {
            display_name: nick.to_owned(),
            rich: format::parse(body),
            said,
            private,
            message_id: accounts::tag(message, "msgid"),
            operator: !private && lock(&self.shared.members).is_operator(target, nick),
            formerly,
            verified: account.is_some(),
            guest,
            ..Inbound::new(options.network.clone(), RoomId::new(room), player, text)
        };
        if inbound.send(message).await.is_err() {
            tracing::debug!("nobody reads inbound messages any more");
        }
    }
}
