//! A raw IRC client for tests, playing a human user: it registers, joins channels,
//! sends PRIVMSGs (`/me` actions too) and NOTICEs and reads what arrives, answering PING
//! on the way. It asks for no IRCv3 capability (so no echo-message and none of its
//! delayed-ACK stalls) and sets TCP_NODELAY, so round trips measured with it are the
//! server's own.
//!
//! Messages that arrive while the client waits for something else (its JOIN echo, a
//! particular message) are kept in order for the next read, except that
//! [`IrcClient::expect_privmsg_matching`] consumes the messages it skips.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::time::Instant;

use super::HarnessError;

/// How long registration and joins may take (registration alone takes ~1 s).
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Lines remembered for error messages.
const RECENT_LINES: usize = 20;

/// Whether a message was a PRIVMSG or a NOTICE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    /// PRIVMSG.
    Privmsg,
    /// NOTICE.
    Notice,
}

/// A PRIVMSG or NOTICE as a client received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// PRIVMSG or NOTICE.
    pub kind: MessageKind,
    /// The sender's nick (or the server name).
    pub from: String,
    /// The channel, or this client's nick for a private message.
    pub target: String,
    /// The text, formatting codes and all.
    pub text: String,
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {} -> {}: {:?}", self.kind, self.from, self.target, self.text)
    }
}

/// A connected, registered test client.
pub struct IrcClient {
    nick: String,
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    /// Bytes read but not yet split into lines.
    buffer: Vec<u8>,
    /// Messages read while waiting for something else.
    pending: VecDeque<Message>,
    /// The last lines read, for error messages.
    recent: VecDeque<String>,
    closed: bool,
}

/// The capabilities the server on `127.0.0.1:port` lists to `CAP LS 302`, as it wrote
/// them (`sasl=PLAIN,EXTERNAL` with its value), the lines of a multi-line reply joined
/// with spaces. The probe connection registers no nick and quits.
pub async fn offered_caps(port: u16) -> Result<String, HarnessError> {
    let failed = |reason: String| HarnessError::Client { nick: "(CAP LS probe)".to_owned(), reason };
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| failed(format!("connecting to port {port}: {e}")))?;
    stream.write_all(b"CAP LS 302\r\n").await.map_err(|e| failed(format!("sending CAP LS: {e}")))?;
    let deadline = Instant::now() + SETUP_TIMEOUT;
    let (mut buffer, mut caps) = (Vec::new(), Vec::new());
    loop {
        while let Some(end) = buffer.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = buffer.drain(..=end).collect();
            let text = String::from_utf8_lossy(&raw).trim_end().to_owned();
            let Some(line) = parse(&text) else { continue };
            // [target, "LS", ("*",) caps]
            if line.command == "CAP" && line.params.get(1).map(String::as_str) == Some("LS") {
                let more = line.params.len() > 3 && line.params[2] == "*";
                caps.push(line.params.last().cloned().unwrap_or_default());
                if !more {
                    let _ = stream.write_all(b"QUIT :probed\r\n").await;
                    return Ok(caps.join(" "));
                }
            }
        }
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buffer.extend_from_slice(&chunk[..n]),
            Ok(_) => {
                return Err(failed("the server closed the connection before its CAP LS reply ended".into()));
            }
            Err(_) => return Err(failed(format!("no complete CAP LS reply within {SETUP_TIMEOUT:?}"))),
        }
    }
}

/// One line from the server, split into its parts.
#[derive(Debug, PartialEq, Eq)]
struct Line {
    /// The nick (or server name) of the prefix, if any.
    source: Option<String>,
    command: String,
    params: Vec<String>,
}

impl IrcClient {
    /// Connects to `127.0.0.1:port` and registers as `nick`, waiting (bounded by
    /// [`SETUP_TIMEOUT`]) for numeric 001.
    pub async fn connect(port: u16, nick: &str) -> Result<Self, HarnessError> {
        let stream = TcpStream::connect(("127.0.0.1", port)).await.map_err(|e| HarnessError::Client {
            nick: nick.to_owned(),
            reason: format!("connecting to port {port}: {e}"),
        })?;
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        let mut client = Self {
            nick: nick.to_owned(),
            reader,
            writer,
            buffer: Vec::new(),
            pending: VecDeque::new(),
            recent: VecDeque::new(),
            closed: false,
        };
        client.send_raw(&format!("NICK {nick}")).await?;
        client.send_raw(&format!("USER {nick} 0 * :spellbridge test client {nick}")).await?;
        let deadline = Instant::now() + SETUP_TIMEOUT;
        loop {
            let line =
                client.read_line(deadline).await.ok_or_else(|| client.error("no 001 (registration)"))?;
            match line.command.as_str() {
                "001" => return Ok(client),
                "432" | "433" | "ERROR" => {
                    return Err(client.error(&format!("registration refused ({})", line.command)));
                }
                _ => client.keep(line),
            }
        }
    }

    /// The nick this client registered with.
    pub fn nick(&self) -> &str {
        &self.nick
    }

    /// Sends one raw line (without `\r\n`).
    pub async fn send_raw(&mut self, line: &str) -> Result<(), HarnessError> {
        let mut bytes = Vec::with_capacity(line.len() + 2);
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(b"\r\n");
        self.writer.write_all(&bytes).await.map_err(|e| HarnessError::Client {
            nick: self.nick.clone(),
            reason: format!("sending {line:?}: {e}"),
        })
    }

    /// Joins a channel and waits (bounded by [`SETUP_TIMEOUT`]) for the server to echo
    /// the JOIN.
    pub async fn join(&mut self, channel: &str) -> Result<(), HarnessError> {
        self.send_raw(&format!("JOIN {channel}")).await?;
        let deadline = Instant::now() + SETUP_TIMEOUT;
        loop {
            let line = self
                .read_line(deadline)
                .await
                .ok_or_else(|| self.error(&format!("no JOIN echo for {channel}")))?;
            let own = line.source.as_deref() == Some(self.nick.as_str());
            let joined = line.params.first().is_some_and(|c| c.eq_ignore_ascii_case(channel));
            if line.command == "JOIN" && own && joined {
                return Ok(());
            }
            // 403 no such channel, 405 too many channels, 471-477 cannot join.
            if matches!(line.command.as_str(), "403" | "405" | "471" | "473" | "474" | "475" | "477") {
                return Err(self.error(&format!("cannot join {channel} ({})", line.command)));
            }
            self.keep(line);
        }
    }

    /// Sends a PRIVMSG.
    pub async fn privmsg(&mut self, target: &str, text: &str) -> Result<(), HarnessError> {
        self.send_raw(&format!("PRIVMSG {target} :{text}")).await
    }

    /// Acts in the third person (`/me text`): a CTCP ACTION.
    pub async fn action(&mut self, target: &str, text: &str) -> Result<(), HarnessError> {
        self.privmsg(target, &format!("\u{1}ACTION {text}\u{1}")).await
    }

    /// Sends a NOTICE.
    pub async fn notice(&mut self, target: &str, text: &str) -> Result<(), HarnessError> {
        self.send_raw(&format!("NOTICE {target} :{text}")).await
    }

    /// The members of `channel` as NAMES lists them, prefixes (`@`, `+`) kept; bounded by
    /// [`SETUP_TIMEOUT`]. A PING round trip first skips any NAMES reply still unread
    /// (the one after a JOIN), so the list is the server's answer now.
    pub async fn names(&mut self, channel: &str) -> Result<Vec<String>, HarnessError> {
        let deadline = Instant::now() + SETUP_TIMEOUT;
        self.send_raw("PING :names-sync").await?;
        loop {
            let line = self.read_line(deadline).await.ok_or_else(|| self.error("no PONG"))?;
            if line.command == "PONG" && line.params.last().is_some_and(|t| t == "names-sync") {
                break;
            }
            self.keep(line);
        }
        self.send_raw(&format!("NAMES {channel}")).await?;
        let mut names = Vec::new();
        loop {
            let line = self
                .read_line(deadline)
                .await
                .ok_or_else(|| self.error(&format!("no end of NAMES for {channel}")))?;
            let about = |i: usize| line.params.get(i).is_some_and(|c| c.eq_ignore_ascii_case(channel));
            match line.command.as_str() {
                // [our nick, symbol, channel, names]
                "353" if about(2) => {
                    let listed = line.params.get(3).map(String::as_str).unwrap_or_default();
                    names.extend(listed.split_whitespace().map(str::to_owned));
                }
                // [our nick, channel, text]
                "366" if about(1) => return Ok(names),
                _ => self.keep(line),
            }
        }
    }

    /// The services account `nick` is logged in to, from WHOIS numeric 330; `None` when
    /// the WHOIS ends (318) without one. An error if `nick` is not on the server (401) or
    /// no answer comes within [`SETUP_TIMEOUT`].
    pub async fn whois_account(&mut self, nick: &str) -> Result<Option<String>, HarnessError> {
        self.send_raw(&format!("WHOIS {nick}")).await?;
        let deadline = Instant::now() + SETUP_TIMEOUT;
        let mut account = None;
        loop {
            let line = self
                .read_line(deadline)
                .await
                .ok_or_else(|| self.error(&format!("no end of WHOIS {nick}")))?;
            let about = line.params.get(1).is_some_and(|n| n.eq_ignore_ascii_case(nick));
            match line.command.as_str() {
                // [our nick, nick, account, "is logged in as"]
                "330" if about => account = line.params.get(2).cloned(),
                "318" if about => return Ok(account),
                "401" if about => return Err(self.error(&format!("WHOIS {nick}: no such nick"))),
                _ => self.keep(line),
            }
        }
    }

    /// WHOIS `nick` until it shows a services account (numeric 330), for at most `limit`
    /// (a login reaches the server a moment after the client sent it): that account, or
    /// `None` when it showed none in time.
    pub async fn wait_for_account(
        &mut self,
        nick: &str,
        limit: Duration,
    ) -> Result<Option<String>, HarnessError> {
        let deadline = Instant::now() + limit;
        loop {
            let account = self.whois_account(nick).await?;
            if account.is_some() || Instant::now() >= deadline {
                return Ok(account);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The next PRIVMSG within `timeout`, or `None`. NOTICEs are kept for
    /// [`IrcClient::next_message`]; other lines are skipped.
    pub async fn next_privmsg(&mut self, timeout: Duration) -> Option<Message> {
        self.next_of(timeout, |m| m.kind == MessageKind::Privmsg).await
    }

    /// The next PRIVMSG or NOTICE within `timeout`, or `None`.
    pub async fn next_message(&mut self, timeout: Duration) -> Option<Message> {
        self.next_of(timeout, |_| true).await
    }

    /// Waits up to `timeout` for a PRIVMSG that `pred` accepts; the PRIVMSGs before it
    /// are consumed. On timeout the error lists what arrived instead.
    pub async fn expect_privmsg_matching(
        &mut self,
        mut pred: impl FnMut(&Message) -> bool,
        timeout: Duration,
    ) -> Result<Message, HarnessError> {
        let deadline = Instant::now() + timeout;
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_privmsg(left).await {
                Some(message) if pred(&message) => return Ok(message),
                Some(message) => skipped.push(message.to_string()),
                None => {
                    let seen = if skipped.is_empty() { "none".to_owned() } else { skipped.join("\n  ") };
                    return Err(self.error(&format!(
                        "no matching PRIVMSG within {timeout:?}; PRIVMSGs skipped:\n  {seen}"
                    )));
                }
            }
        }
    }

    /// True once the server has closed the connection; waits up to `timeout` for it.
    pub async fn wait_closed(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.closed {
            if let Some(line) = self.read_line(deadline).await {
                self.keep(line);
            } else if Instant::now() >= deadline {
                break;
            }
        }
        self.closed
    }

    /// Says goodbye and closes the connection.
    pub async fn quit(mut self) -> Result<(), HarnessError> {
        self.send_raw("QUIT :done").await?;
        let _ = self.writer.shutdown().await;
        Ok(())
    }

    async fn next_of(&mut self, timeout: Duration, wanted: impl Fn(&Message) -> bool) -> Option<Message> {
        if let Some(i) = self.pending.iter().position(&wanted) {
            return self.pending.remove(i);
        }
        let deadline = Instant::now() + timeout;
        loop {
            let line = self.read_line(deadline).await?;
            match to_message(&line) {
                Some(message) if wanted(&message) => return Some(message),
                Some(message) => self.pending.push_back(message),
                None => {}
            }
        }
    }

    /// Keeps a line's message (if it is one) for a later read.
    fn keep(&mut self, line: Line) {
        if let Some(message) = to_message(&line) {
            self.pending.push_back(message);
        }
    }

    /// The next line before `deadline`, answering PINGs; `None` on timeout or when the
    /// connection is closed.
    async fn read_line(&mut self, deadline: Instant) -> Option<Line> {
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let raw: Vec<u8> = self.buffer.drain(..=end).collect();
                let text = String::from_utf8_lossy(&raw).trim_end_matches(['\r', '\n']).to_owned();
                if self.recent.len() == RECENT_LINES {
                    self.recent.pop_front();
                }
                self.recent.push_back(text.clone());
                let Some(line) = parse(&text) else { continue };
                if line.command == "PING" {
                    let token = line.params.first().cloned().unwrap_or_default();
                    let _ = self.send_raw(&format!("PONG :{token}")).await;
                    continue;
                }
                return Some(line);
            }
            if self.closed {
                return None;
            }
            let mut chunk = [0u8; 16 * 1024];
            // `read` is cancel-safe: a timeout loses no bytes.
            match tokio::time::timeout_at(deadline, self.reader.read(&mut chunk)).await {
                Err(_elapsed) => return None,
                Ok(Ok(0)) | Ok(Err(_)) => self.closed = true,
                Ok(Ok(n)) => self.buffer.extend_from_slice(&chunk[..n]),
            }
        }
    }

    fn error(&self, what: &str) -> HarnessError {
        let state = if self.closed { " (connection closed)" } else { "" };
        let recent: Vec<&str> = self.recent.iter().map(String::as_str).collect();
        HarnessError::Client {
            nick: self.nick.clone(),
            reason: format!("{what}{state}; last lines read:\n  {}", recent.join("\n  ")),
        }
    }
}

/// Splits a line: `[@tags] [:prefix] COMMAND params… [:trailing]`. `None` for a line
/// with no command.
fn parse(text: &str) -> Option<Line> {
    let mut rest = text;
    if rest.starts_with('@') {
        rest = rest.split_once(' ').map_or("", |(_, r)| r);
    }
    let mut source = None;
    if let Some(prefixed) = rest.strip_prefix(':') {
        let (prefix, r) = prefixed.split_once(' ').unwrap_or((prefixed, ""));
        source = Some(prefix.split(['!', '@']).next().unwrap_or(prefix).to_owned());
        rest = r;
    }
    let rest = rest.trim_start_matches(' ');
    let (command, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
    if command.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(' ');
        if rest.is_empty() {
            break;
        }
        if let Some(trailing) = rest.strip_prefix(':') {
            params.push(trailing.to_owned());
            break;
        }
        let (param, r) = rest.split_once(' ').unwrap_or((rest, ""));
        params.push(param.to_owned());
        rest = r;
    }
    Some(Line { source, command: command.to_ascii_uppercase(), params })
}

fn to_message(line: &Line) -> Option<Message> {
    let kind = match line.command.as_str() {
        "PRIVMSG" => MessageKind::Privmsg,
        "NOTICE" => MessageKind::Notice,
        _ => return None,
    };
    let [target, text] = line.params.as_slice() else { return None };
    Some(Message {
        kind,
        from: line.source.clone().unwrap_or_default(),
        target: target.clone(),
        text: text.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tags_prefix_params_and_trailing() {
        let line = parse("@time=2026-01-01T00:00:00Z :alice!a@host PRIVMSG #magic :hello  there");
        assert_eq!(
            line,
            Some(Line {
                source: Some("alice".into()),
                command: "PRIVMSG".into(),
                params: vec!["#magic".into(), "hello  there".into()],
            })
        );
        let ping = parse("PING :irc.test");
        assert_eq!(
            ping.map(|l| (l.source, l.command, l.params)),
            Some((None, "PING".into(), vec!["irc.test".into()]))
        );
        let numeric = parse(":irc.test 001 bob :Welcome");
        assert_eq!(numeric.map(|l| l.command), Some("001".into()));
        assert_eq!(parse(""), None);
        assert_eq!(parse(":only-a-prefix"), None);
    }

    #[test]
    fn only_privmsg_and_notice_are_messages() {
        let message = |text: &str| parse(text).and_then(|l| to_message(&l));
        let privmsg = message(":bob!b@h PRIVMSG alice :hi");
        assert_eq!(
            privmsg.map(|m| (m.kind, m.from, m.target, m.text)),
            Some((MessageKind::Privmsg, "bob".into(), "alice".into(), "hi".into()))
        );
        assert_eq!(message(":irc.test NOTICE * :*** Looking up").map(|m| m.kind), Some(MessageKind::Notice));
        assert_eq!(message(":bob!b@h JOIN #magic"), None);
        assert_eq!(message(":bob!b@h PRIVMSG alice"), None);
    }
}
