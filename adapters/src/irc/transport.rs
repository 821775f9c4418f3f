//! The IRC [`GameTransport`]: one supervised connection to one network.
//!
//! [`IrcTransport::start`] spawns a supervisor that connects (plain or TLS), registers
//! (PASS, IRCv3 capabilities one by one, SASL PLAIN when configured, NICK/USER with
//! alternate nicks), joins the channels, and then runs a session until the connection
//! ends; it then reconnects with exponential backoff and jitter, rejoining every channel
//! it should be in ([`GameTransport::leave`] takes one out of that set and PARTs it).
//!
//! Inbound PRIVMSGs become [`Inbound`] messages: `text` with the formatting stripped,
//! `rich` with it read into rich text; the player is the services account when the
//! server tags one, else the nick; `operator` says whether the sender is half-op or
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
//! Capabilities requested: message-tags, server-time, account-tag, extended-join,
//! multi-prefix. Not echo-message or labeled-response: with them InspIRCd's small unflushed
//! writes meet the client's delayed ACK and every exchange stalls ~40 ms (SERVERS.md), and
//! the bot does not need them.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine as _;
use futures_util::StreamExt as _;
use irc::client::prelude::{Capability, Client, Command, Config, Message, Response};
use irc::proto::CapSubCommand;
use spellbridge_core::{
    Destination, GameTransport, Inbound, NetworkId, PlayerId, RoomId, Said, TransportError, Voice,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ctcp;
use super::flood::Flood;
use super::members::Members;
use super::options::IrcOptions;
use super::renames::Renames;
use super::{format, split};
use crate::supervise::backoff;

pub use crate::supervise::Link;

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
    link: watch::Sender<Link>,
    reconnects: std::sync::atomic::AtomicU64,
    /// `join()` calls waiting for the server's answer, by lower-cased channel name.
    joining: Mutex<HashMap<String, Vec<JoinWaiter>>>,
    /// Who is in the bot's channels and with which prefix, kept by the current session
    /// (emptied when a new one starts).
    members: Mutex<Members>,
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
}

/// A change of channel the connection task makes.
enum Membership {
    Join(String),
    Part(String),
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
        let (inbound_tx, inbound_rx) = mpsc::channel(1024);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (joins_tx, joins_rx) = mpsc::unbounded_channel();
        let (link, _) = watch::channel(Link::Down);
        let nick = options.nicks.first().cloned().unwrap_or_default();
        let shared = Arc::new(Shared {
            channels: Mutex::new(options.channels.iter().cloned().collect()),
            nicks: Mutex::new(HashMap::new()),
            me: Mutex::new((nick, 0)),
            link,
            reconnects: std::sync::atomic::AtomicU64::new(0),
            joining: Mutex::new(HashMap::new()),
            members: Mutex::new(Members::default()),
            options,
        });
        let supervisor = Supervisor {
            shared: shared.clone(),
            inbound: inbound_tx,
            jobs: jobs_rx,
            joins: joins_rx,
            shutdown,
        };
        let handle = tokio::spawn(supervisor.run());
        let transport = Arc::new(IrcTransport {
            shared,
            inbound: tokio::sync::Mutex::new(inbound_rx),
            jobs: jobs_tx,
            joins: joins_tx,
        });
        (transport, handle)
    }

    /// Watches the connection state (tests wait for [`Link::Up`]).
    pub fn link(&self) -> watch::Receiver<Link> {
        self.shared.link.subscribe()
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
        let mut link = self.link();
        tokio::time::timeout(limit, link.wait_for(|l| *l == Link::Up)).await.is_ok_and(|r| r.is_ok())
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

    fn is_member(&self, room: &RoomId, name: &str) -> bool {
        lock(&self.shared.members).contains(room.as_str(), name)
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
        if *self.shared.link.borrow() != Link::Up {
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
        if *self.shared.link.borrow() == Link::Up {
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
        if *self.shared.link.borrow() != Link::Up {
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
        let lines = splitter
            .split(&target, &format::render(text))
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
}

impl Supervisor {
    async fn run(mut self) {
        let network = self.shared.options.network.clone();
        let mut attempt: u32 = 0;
        loop {
            let outcome = self.session().await;
            let _ = self.shared.link.send_replace(Link::Down);
            if self.shutdown.is_cancelled() {
                break;
            }
            match outcome {
                Ok(Registered::Yes) => attempt = 0,
                Ok(Registered::No) => {}
                Err(error) => tracing::warn!(network = %network, %error, "IRC connection lost"),
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
        let _ = self.shared.link.send_replace(Link::Closed);
    }

    /// One connection, from connect to its end.
    async fn session(&mut self) -> Result<Registered, irc::error::Error> {
        let options = &self.shared.options;
        let config = Config {
            nickname: options.nicks.first().cloned(),
            alt_nicks: options.nicks.iter().skip(1).cloned().collect(),
            username: Some(options.username.clone()),
            realname: Some(options.realname.clone()),
            server: Some(options.server.clone()),
            port: Some(options.port),
            use_tls: Some(options.tls),
            // Joined by the session at the end of the MOTD from the set as it is then, so
            // a channel left meanwhile is not joined.
            channels: Vec::new(),
            version: Some(VERSION.to_owned()),
            ping_time: Some(options.ping.0.as_secs().max(1) as u32),
            ping_timeout: Some(options.ping.1.as_secs().max(1) as u32),
            ..Config::default()
        };
        let mut client = Client::from_config(config).await?;
        let mut stream = client.stream()?;
        let sender = client.sender();
        register(&sender, options)?;
        *lock(&self.shared.members) = Members::default();
        let mut session = Session {
            shared: self.shared.clone(),
            sender,
            registered: false,
            ready: false,
            queue: VecDeque::new(),
            notices_waiting: 0,
            ctcp_answered: ctcp::Answered::default(),
            slot: None,
            bucket: options.flood.map_or_else(Flood::off, |(burst, interval)| Flood::new(burst, interval)),
            renames: Renames::default(),
        };
        loop {
            let next_send = session.next_send_at();
            tokio::select! {
                () = self.shutdown.cancelled() => {
                    let _ = session.sender.send_quit("spellbridge is shutting down");
                    // Let the QUIT go out, briefly.
                    let _ = tokio::time::timeout(Duration::from_secs(1), stream.next()).await;
                    return Ok(session.outcome());
                }
                message = stream.next() => match message {
                    Some(Ok(message)) => session.handle(&client, &message, &self.inbound).await?,
                    Some(Err(error)) => return Err(error),
                    None => return Ok(session.outcome()),
                },
                Some(job) = self.jobs.recv(), if session.ready => {
                    // Lines the bucket allows go now; the timer is only for a real wait
                    // (it would round up to the next millisecond).
                    session.queue_job(job);
                    session.send_due()?;
                }
                // A change queued before a reconnect may be stale: the set has the last word.
                Some(change) = self.joins.recv(), if session.registered => match change {
                    Membership::Join(channel) if self.shared.wants(&channel) => {
                        session.sender.send_join(&channel)?;
                    }
                    Membership::Part(channel) if !self.shared.wants(&channel) => {
                        session.sender.send_part(&channel)?;
                    }
                    Membership::Join(_) | Membership::Part(_) => {}
                },
                () = sleep_until(next_send), if next_send.is_some() => session.send_due()?,
            }
        }
    }
}

/// Whether a session got as far as registering (resets the backoff).
enum Registered {
    Yes,
    No,
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// Sends PASS, the capability requests, NICK and USER; CAP END now, or after SASL.
fn register(sender: &irc::client::Sender, options: &IrcOptions) -> irc::error::Result<()> {
    if let Some(password) = &options.password {
        sender.send(Command::PASS(password.clone()))?;
    }
    sender.send(Command::CAP(None, CapSubCommand::LS, None, Some("302".to_owned())))?;
    // One request per capability: a server that lacks one refuses only that one.
    for capability in ["message-tags", "server-time", "account-tag", "extended-join", "multi-prefix"] {
        sender.send_cap_req(&[Capability::Custom(capability)])?;
    }
    if options.sasl.is_some() {
        sender.send_cap_req(&[Capability::Sasl])?;
    }
    let nick = options.nicks.first().cloned().unwrap_or_default();
    sender.send(Command::NICK(nick))?;
    sender.send(Command::USER(options.username.clone(), "0".to_owned(), options.realname.clone()))?;
    if options.sasl.is_none() {
        sender.send(Command::CAP(None, CapSubCommand::END, None, None))?;
    }
    Ok(())
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

/// One registered-or-registering connection.
struct Session {
    shared: Arc<Shared>,
    sender: irc::client::Sender,
    registered: bool,
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
}

impl Session {
    fn outcome(&self) -> Registered {
        if self.registered { Registered::Yes } else { Registered::No }
    }

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
    fn notice(&mut self, nick: &str, text: String) -> irc::error::Result<()> {
        if self.notices_waiting >= NOTICE_BACKLOG {
            tracing::debug!(network = %self.shared.options.network, "a notice was dropped: too many are waiting");
            return Ok(());
        }
        self.notices_waiting += 1;
        self.queue.push_back(Line { target: nick.to_owned(), text, notice: true, done: None });
        self.send_due()
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
    fn send_due(&mut self) -> irc::error::Result<()> {
        loop {
            match self.next_send_at() {
                Some(slot) if slot <= Instant::now() => self.slot = None,
                _ => return Ok(()),
            }
            let Some(line) = self.queue.pop_front() else { return Ok(()) };
            if line.notice {
                self.notices_waiting = self.notices_waiting.saturating_sub(1);
                self.sender.send_notice(&line.target, &line.text)?;
            } else {
                self.sender.send_privmsg(&line.target, &line.text)?;
            }
            if let Some(done) = line.done {
                let _ = done.send(());
            }
        }
    }

    async fn handle(
        &mut self,
        client: &Client,
        message: &Message,
        inbound: &mpsc::Sender<Inbound>,
    ) -> irc::error::Result<()> {
        let network = &self.shared.options.network;
        lock(&self.shared.members).observe(message, client.current_nickname());
        match &message.command {
            Command::Response(Response::RPL_WELCOME, args) => {
                self.registered = true;
                let nick = client.current_nickname().to_owned();
                // RPL_WELCOME usually ends with nick!user@host; else assume the longest host.
                let user_host = args
                    .last()
                    .and_then(|text| text.rsplit(' ').next())
                    .and_then(|mask| mask.split_once('!'))
                    .map_or(self.shared.options.username.len() + 1 + 63, |(_, user_host)| user_host.len());
                *lock(&self.shared.me) = (nick.clone(), user_host);
                tracing::info!(network = %network, nick = %nick, "registered on IRC");
            }
            Command::Response(Response::RPL_ENDOFMOTD | Response::ERR_NOMOTD, _) if !self.ready => {
                let channels: Vec<String> = lock(&self.shared.channels).iter().cloned().collect();
                for channel in channels {
                    self.sender.send_join(&channel)?;
                }
                // Up only now: a message queued while the connection was down must not
                // reach the server before the JOIN of its channel.
                self.ready = true;
                let _ = self.shared.link.send_replace(Link::Up);
            }
            Command::CAP(_, CapSubCommand::ACK, a, b) if mentions(a, b, "sasl") => {
                self.sender.send(Command::AUTHENTICATE("PLAIN".to_owned()))?;
            }
            Command::CAP(_, CapSubCommand::NAK, a, b) if mentions(a, b, "sasl") => {
                tracing::error!(network = %network, "the server does not offer SASL; continuing without logging in");
                self.sender.send(Command::CAP(None, CapSubCommand::END, None, None))?;
            }
            Command::AUTHENTICATE(text) if text == "+" => {
                if let Some((account, password)) = &self.shared.options.sasl {
                    let plain = format!("{account}\0{account}\0{password}");
                    let encoded = base64::engine::general_purpose::STANDARD.encode(plain);
                    // AUTHENTICATE payloads are sent in chunks of at most 400 bytes.
                    for chunk in encoded.as_bytes().chunks(400) {
                        self.sender
                            .send(Command::AUTHENTICATE(String::from_utf8_lossy(chunk).into_owned()))?;
                    }
                    if encoded.len() % 400 == 0 {
                        self.sender.send(Command::AUTHENTICATE("+".to_owned()))?;
                    }
                }
            }
            Command::Response(Response::RPL_SASLSUCCESS, _) => {
                tracing::info!(network = %network, "logged in with SASL");
                self.sender.send(Command::CAP(None, CapSubCommand::END, None, None))?;
            }
            Command::Response(
                Response::ERR_SASLFAIL
                | Response::ERR_SASLTOOLONG
                | Response::ERR_SASLABORT
                | Response::ERR_NICKLOCKED,
                args,
            ) => {
                tracing::error!(network = %network, reply = ?args, "SASL login failed; continuing without logging in (check the account and password)");
                self.sender.send(Command::CAP(None, CapSubCommand::END, None, None))?;
            }
            Command::Response(
                code @ (Response::ERR_BANNEDFROMCHAN
                | Response::ERR_INVITEONLYCHAN
                | Response::ERR_CHANNELISFULL
                | Response::ERR_BADCHANNELKEY),
                args,
            ) => {
                tracing::warn!(network = %network, reply = ?code, detail = ?args, "cannot join a channel");
                // args: [our nick, channel, reason]
                if let Some(channel) = args.get(1) {
                    let reason = args.get(2).cloned().unwrap_or_else(|| format!("{code:?}"));
                    self.shared.joined(channel, &Err(format!("cannot join {channel}: {reason}")));
                }
            }
            Command::JOIN(channel, _, _) if message.source_nickname() == Some(client.current_nickname()) => {
                self.shared.joined(channel, &Ok(()));
            }
            Command::KICK(channel, nick, reason) if *nick == client.current_nickname() => {
                tracing::warn!(network = %network, channel = %channel, by = ?message.source_nickname(), reason = ?reason, "kicked from a channel");
                if self.shared.options.rejoin_on_kick {
                    let sender = self.sender.clone();
                    let shared = self.shared.clone();
                    let channel = channel.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(2)).await;
                        // If the connection is gone by then, the next one joins from the set;
                        // if the channel was left meanwhile, it stays left.
                        if shared.wants(&channel) {
                            let _ = sender.send_join(&channel);
                        }
                    });
                } else {
                    lock(&self.shared.channels).remove(channel);
                }
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
            Command::PRIVMSG(target, body) => self.privmsg(client, message, target, body, inbound).await?,
            _ => {}
        }
        Ok(())
    }

    /// Answers a CTCP request from `nick` (not an ACTION), if CTCP is on, the request is
    /// one the bot answers, and `nick` has not had [`ctcp::PER_USER`] answers lately.
    fn answer_ctcp(&mut self, nick: &str, command: &str, text: &str) -> irc::error::Result<()> {
        if !self.shared.options.ctcp {
            return Ok(());
        }
        let Some(answer) = ctcp::answer(command, text, VERSION) else { return Ok(()) };
        if self.ctcp_answered.allow(nick, Instant::now().into_std()) {
            self.notice(nick, answer)
        } else {
            Ok(())
        }
    }

    async fn privmsg(
        &mut self,
        client: &Client,
        message: &Message,
        target: &str,
        body: &str,
        inbound: &mpsc::Sender<Inbound>,
    ) -> irc::error::Result<()> {
        let Some(nick) = message.source_nickname() else { return Ok(()) };
        if nick == client.current_nickname() {
            return Ok(()); // our own echo
        }
        let (said, body) = match ctcp::parse(body) {
            None => (Said::Message, body),
            Some((command, text)) if command.eq_ignore_ascii_case("ACTION") => (Said::Emote, text),
            // A request (VERSION, PING, …): answered through the bucket, a few per user.
            Some((command, text)) => return self.answer_ctcp(nick, command, text),
        };
        let text = format::strip(body);
        if said == Said::Emote && text.trim().is_empty() {
            return Ok(()); // a bare `/me`: nothing was acted
        }
        let tag = |name: &str| {
            message
                .tags
                .iter()
                .flatten()
                .find(|t| t.0 == name)
                .and_then(|t| t.1.clone())
                .filter(|v| !v.is_empty())
        };
        let account = tag("account");
        let player = PlayerId::new(account.clone().unwrap_or_else(|| nick.to_owned()));
        lock(&self.shared.nicks).insert(player.clone(), nick.to_owned());
        let options = &self.shared.options;
        // A sender without an account is their nick: after a nick change the daemon must
        // carry their command count over (with an account the id does not change).
        let renamed = self.renames.speaks(nick);
        let formerly = renamed.filter(|_| account.is_none()).map(PlayerId::new);
        // An emote is not a command, so it is not refused (the daemon counts commands).
        let command = said == Said::Message && text.trim_start().starts_with(options.prefix.as_str());
        if command && options.require_account && account.is_none() {
            let note = "spellbridge only takes commands from players logged in to services here: log in (e.g. /msg NickServ IDENTIFY …) and try again.";
            return self.notice(nick, note.to_owned());
        }
        let private = !target.starts_with(['#', '&']);
        let room = if private { nick.to_owned() } else { target.to_owned() };
        let message = Inbound {
            display_name: nick.to_owned(),
            rich: format::parse(body),
            said,
            private,
            message_id: tag("msgid"),
            operator: !private && lock(&self.shared.members).is_operator(target, nick),
            formerly,
            ..Inbound::new(options.network.clone(), RoomId::new(room), player, text)
        };
        if inbound.send(message).await.is_err() {
            tracing::debug!("nobody reads inbound messages any more");
        }
        Ok(())
    }
}

fn mentions(a: &Option<String>, b: &Option<String>, word: &str) -> bool {
    [a, b].into_iter().flatten().any(|s| s.split_whitespace().any(|w| w.eq_ignore_ascii_case(word)))
}
