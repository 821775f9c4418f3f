//! The load generator's IRC clients: each a raw TCP connection (TCP_NODELAY on, and
//! TCP_QUICKACK set again after every read, so neither side's delayed ACK holds a line
//! back) that registers, joins its table's channel and then hands its socket's reading to
//! a task of its own. The reading task knows what the bot's answer to this client's
//! command looks like and reports only that ([`Event::Answer`]), the bot's private
//! notices, and, while [`Fleet::verbose`] is on, every line of the bot's (for setup and
//! start probes). Every client's writing stays with the [`Fleet`], which sends the
//! commands and matches each answer to the oldest unanswered command of its client.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use socket2::SockRef;
use spellbridge_adapters::irc::format::strip;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;

/// The longest registration and the JOIN may take (InspIRCd registers on a 1 s timer).
const SETUP_LIMIT: Duration = Duration::from_secs(60);

/// Which seat a client holds, and so which command it sends and what its answer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Opened the Thaum table, its game master: `!coins <me> +1` (a journaled change),
    /// answered in the channel with `<me> changes <me>'s coins: …`.
    ThaumMaster,
    /// Joined the Thaum table: `!status`, answered in the channel with `<me>'s sheet: …`.
    ThaumPlayer,
    /// One of the Duel's two wizards: `!status` privately, answered privately; its last
    /// line is `Your queued tokens (only you see this): …`.
    DuelWizard,
}

impl Role {
    /// The command this client sends.
    pub fn command(self, nick: &str) -> String {
        match self {
            Role::ThaumMaster => format!("!coins {nick} +1"),
            Role::ThaumPlayer | Role::DuelWizard => "!status".to_owned(),
        }
    }

    /// Whether the command goes to the bot privately rather than to the channel.
    pub fn private(self) -> bool {
        self == Role::DuelWizard
    }

    /// How the (formatting-stripped) answer to this client starts.
    fn answer_prefix(self, nick: &str) -> String {
        match self {
            Role::ThaumMaster => format!("{nick} changes {nick}'s coins:"),
            Role::ThaumPlayer => format!("{nick}'s sheet:"),
            Role::DuelWizard => "Your queued tokens".to_owned(),
        }
    }
}

/// What a client's reading task reports.
#[derive(Debug)]
pub enum Event {
    /// The bot's answer to this client's command arrived.
    Answer { client: usize, at: Instant },
    /// Another line of the bot's: always for a private NOTICE, any line while verbose.
    Other { client: usize, at: Instant, private: bool, text: String },
    /// The server asked for a PONG.
    Ping { client: usize, token: String },
    /// The connection ended.
    Closed { client: usize, why: String },
}

/// One client's writing side.
struct Client {
    nick: String,
    channel: String,
    role: Role,
    writer: OwnedWriteHalf,
}

/// Every client, the events of their reading tasks and the send times of the commands
/// not answered yet.
pub struct Fleet {
    clients: Vec<Client>,
    events: mpsc::UnboundedReceiver<Event>,
    /// Per client, when each unanswered command was sent (oldest first).
    pending: Vec<VecDeque<Instant>>,
    /// While on, the reading tasks report every line of the bot's.
    pub verbose: Arc<AtomicBool>,
    bot: String,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// What one client is: its nick, channel and seat.
#[derive(Clone, Debug)]
pub struct Seat {
    pub nick: String,
    pub channel: String,
    pub role: Role,
}

impl Fleet {
    /// Connects every seat's client to `127.0.0.1:port` (at most `parallel` registering
    /// at once), each joining its channel.
    pub async fn connect(port: u16, bot: &str, seats: &[Seat], parallel: usize) -> Fleet {
        let (tx, events) = mpsc::unbounded_channel();
        let verbose = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(tokio::sync::Semaphore::new(parallel));
        let joins: Vec<_> = seats
            .iter()
            .enumerate()
            .map(|(index, seat)| {
                let (seat, gate, tx, verbose, bot) =
                    (seat.clone(), gate.clone(), tx.clone(), verbose.clone(), bot.to_owned());
                tokio::spawn(async move {
                    let _permit = gate.acquire().await.expect("the connect gate");
                    let (stream, rest) = tokio::time::timeout(SETUP_LIMIT, register(port, &seat))
                        .await
                        .unwrap_or_else(|_| Err(format!("no 001 and JOIN within {SETUP_LIMIT:?}")))
                        .unwrap_or_else(|e| panic!("client {} cannot connect: {e}", seat.nick));
                    let (reader, writer) = stream.into_split();
                    let reading = Reading {
                        client: index,
                        prefix: seat.role.answer_prefix(&seat.nick),
                        seat: seat.clone(),
                        bot,
                        events: tx,
                        verbose,
                    };
                    let task = tokio::spawn(reading.run(reader, rest));
                    (Client { nick: seat.nick, channel: seat.channel, role: seat.role, writer }, task)
                })
            })
            .collect();
        let mut clients = Vec::with_capacity(seats.len());
        let mut tasks = Vec::with_capacity(seats.len());
        for join in joins {
            let (client, task) = join.await.unwrap_or_else(|e| panic!("a client failed to connect: {e}"));
            clients.push(client);
            tasks.push(task);
        }
        let pending = vec![VecDeque::new(); clients.len()];
        Fleet { clients, events, pending, verbose, bot: bot.to_owned(), tasks }
    }

    pub fn len(&self) -> usize {
        self.clients.len()
    }

    pub fn nick(&self, client: usize) -> &str {
        &self.clients[client].nick
    }

    pub fn role(&self, client: usize) -> Role {
        self.clients[client].role
    }

    /// Sends `text` from `client` to its channel, or to the bot with `private`.
    pub async fn say(&mut self, client: usize, private: bool, text: &str) {
        let c = &mut self.clients[client];
        let target = if private { &self.bot } else { &c.channel };
        let line = format!("PRIVMSG {target} :{text}\r\n");
        c.writer.write_all(line.as_bytes()).await.unwrap_or_else(|e| panic!("{} sends: {e}", c.nick));
    }

    /// Sends `client`'s command and remembers when, for its answer.
    pub async fn command(&mut self, client: usize) {
        let (role, nick) = (self.clients[client].role, self.clients[client].nick.clone());
        let text = role.command(&nick);
        self.pending[client].push_back(Instant::now());
        self.say(client, role.private(), &text).await;
    }

    /// The commands sent and not answered yet.
    pub fn unanswered(&self) -> usize {
        self.pending.iter().map(VecDeque::len).sum()
    }

    /// Forgets the commands not answered yet (after probes, whose answers are not counted).
    pub fn forget_pending(&mut self) {
        self.pending.iter_mut().for_each(VecDeque::clear);
    }

    /// The next event (PINGs are answered here and not handed on), or `None` at `deadline`.
    pub async fn next(&mut self, deadline: Instant) -> Option<Happened> {
        loop {
            let event = tokio::time::timeout_at(deadline.into(), self.events.recv()).await.ok()??;
            match event {
                Event::Ping { client, token } => {
                    let line = format!("PONG :{token}\r\n");
                    let _ = self.clients[client].writer.write_all(line.as_bytes()).await;
                }
                Event::Answer { client, at } => {
                    let sent = self.pending[client].pop_front();
                    return Some(Happened::Answer { client, at, sent });
                }
                Event::Other { client, at, private, text } => {
                    return Some(Happened::Other { client, at, private, text });
                }
                Event::Closed { client, why } => {
                    panic!("client {} lost its connection: {why}", self.clients[client].nick)
                }
            }
        }
    }

    /// Drops events until `quiet` passes with none (at most `limit`); answers still pop
    /// their commands.
    pub async fn drain(&mut self, quiet: Duration, limit: Duration) {
        let end = Instant::now() + limit;
        while Instant::now() < end && self.next((Instant::now() + quiet).min(end)).await.is_some() {}
    }

    /// Closes every connection.
    pub async fn quit(mut self) {
        self.verbose.store(false, Ordering::Relaxed);
        for c in &mut self.clients {
            let _ = c.writer.write_all(b"QUIT :done\r\n").await;
        }
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// An event as the [`Fleet`] hands it on.
#[derive(Debug)]
pub enum Happened {
    /// The answer to `client`'s oldest unanswered command (`sent`: when that was sent;
    /// `None` for an answer to a command not counted, e.g. a probe's).
    Answer { client: usize, at: Instant, sent: Option<Instant> },
    /// Another line of the bot's to `client` (privately, or in its channel).
    Other { client: usize, at: Instant, private: bool, text: String },
}

/// Sets TCP_QUICKACK (Linux leaves quick-ACK mode by itself, so this is set after every
/// read).
fn quickack(stream: &TcpStream) {
    let _ = SockRef::from(stream).set_tcp_quickack(true);
}

/// Connects, registers and joins the seat's channel; returns the stream and what was
/// read past the JOIN.
async fn register(port: u16, seat: &Seat) -> Result<(TcpStream, Vec<u8>), String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("TCP_NODELAY: {e}"))?;
    quickack(&stream);
    let nick = &seat.nick;
    let hello = format!("NICK {nick}\r\nUSER {nick} 0 * :spellbridge scale bench\r\n");
    stream.write_all(hello.as_bytes()).await.map_err(|e| format!("NICK/USER: {e}"))?;
    let mut buffer = Vec::new();
    let mut joined = false;
    loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err(format!("closed while registering; read {:?}", String::from_utf8_lossy(&buffer)));
        }
        quickack(&stream);
        buffer.extend_from_slice(&chunk[..n]);
        while let Some(end) = buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end();
            let words: Vec<&str> = line.splitn(4, ' ').collect();
            if words.first() == Some(&"PING") {
                let pong = format!("PONG {}\r\n", words.get(1).unwrap_or(&""));
                stream.write_all(pong.as_bytes()).await.map_err(|e| format!("PONG: {e}"))?;
            } else if words.get(1) == Some(&"001") {
                let join = format!("JOIN {}\r\n", seat.channel);
                stream.write_all(join.as_bytes()).await.map_err(|e| format!("JOIN: {e}"))?;
            } else if words.get(1) == Some(&"366") {
                // End of NAMES: the JOIN is done.
                joined = true;
            } else if matches!(words.get(1), Some(&"433" | &"432" | &"405" | &"471" | &"473" | &"474")) {
                return Err(format!("the server refused: {line}"));
            }
        }
        if joined {
            return Ok((stream, buffer));
        }
    }
}

/// A client's reading task.
struct Reading {
    client: usize,
    seat: Seat,
    /// How the answer to this client starts.
    prefix: String,
    bot: String,
    events: mpsc::UnboundedSender<Event>,
    verbose: Arc<AtomicBool>,
}

impl Reading {
    async fn run(self, mut reader: OwnedReadHalf, mut buffer: Vec<u8>) {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            while let Some(end) = buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=end).collect();
                self.line(String::from_utf8_lossy(&line).trim_end());
            }
            let why = match reader.read(&mut chunk).await {
                Ok(0) => "closed by the server".to_owned(),
                Ok(n) => {
                    quickack(reader.as_ref());
                    buffer.extend_from_slice(&chunk[..n]);
                    continue;
                }
                Err(e) => e.to_string(),
            };
            let _ = self.events.send(Event::Closed { client: self.client, why });
            return;
        }
    }

    fn line(&self, line: &str) {
        let at = Instant::now();
        if let Some(token) = line.strip_prefix("PING ") {
            let token = token.trim_start_matches(':').to_owned();
            let _ = self.events.send(Event::Ping { client: self.client, token });
            return;
        }
        // `:nick!user@host COMMAND target :text`
        let Some(rest) = line.strip_prefix(':') else { return };
        let Some((source, rest)) = rest.split_once(' ') else { return };
        let from = source.split('!').next().unwrap_or(source);
        if from != self.bot {
            return;
        }
        let Some((command, rest)) = rest.split_once(' ') else { return };
        let notice = match command {
            "PRIVMSG" => false,
            "NOTICE" => true,
            _ => return,
        };
        let Some((target, text)) = rest.split_once(' ') else { return };
        let text = strip(text.strip_prefix(':').unwrap_or(text));
        let private = target == self.seat.nick;
        let answer = !notice && private == self.seat.role.private() && text.starts_with(&self.prefix);
        let event = if answer {
            Event::Answer { client: self.client, at }
        } else if (notice && private) || self.verbose.load(Ordering::Relaxed) {
            Event::Other { client: self.client, at, private, text }
        } else {
            return;
        };
        let _ = self.events.send(event);
    }
}
