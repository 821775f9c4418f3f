//! A line-protocol network: a third network kind kept outside the adapters, to prove
//! that a network is added with one `Networks::register` and no change in the daemon.
//!
//! `[[line]]` names a server (`server = "127.0.0.1:7000"`) and its `rooms`. The
//! transport connects to it over TCP and speaks one line per message:
//!
//! - from the server: `MSG <id> <room> <sender> <text>` (said in a room) and
//!   `PRIV <id> <sender> <text>` (said to the bot privately);
//! - to the server: `JOIN <room>`, `PART <room>`, `SAY <room> <text>`,
//!   `TELL <player> <text>` (one line per line of the text), and `QUIT` when it stops.
//!
//! Its connection is up from the connect until the server closes it; it does not
//! reconnect (a test transport).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use spellbridge_adapters::network::{self, Ids, Network, NetworkKind, Start, Transport, UserLimit};
use spellbridge_adapters::supervise::Connection;
use spellbridge_core::{
    Destination, GameTransport, Inbound, Message, NetworkId, PlayerId, RoomId, TransportError,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, mpsc, watch};

/// The kind: `[[line]]` sections.
pub struct LineKind;

/// `[[line]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    name: String,
    server: String,
    #[serde(default)]
    rooms: Vec<String>,
    user_limit: Option<UserLimit>,
}

impl NetworkKind for LineKind {
    fn section(&self) -> &'static str {
        "line"
    }

    fn configure(&self, table: toml::Table, _base: &Path) -> Result<Arc<dyn Network>, String> {
        let name = network::name_of(&table, "line")?;
        let written: Written = network::parse_table(table, &format!("[[line]] `{name}`: "))?;
        let at = |what: &str| format!("[[line]] `{name}`: {what}");
        if written.server.parse::<std::net::SocketAddr>().is_err() {
            return Err(at("`server` must be an address and port, e.g. server = \"127.0.0.1:7000\""));
        }
        let user_limit = network::user_limit(written.user_limit, &at)?;
        Ok(Arc::new(LineNetwork {
            name: written.name,
            server: written.server,
            rooms: written.rooms,
            user_limit,
        }))
    }
}

/// One configured line-protocol network.
#[derive(Debug)]
pub struct LineNetwork {
    name: String,
    server: String,
    rooms: Vec<String>,
    user_limit: Option<(u32, Duration)>,
}

#[async_trait]
impl Network for LineNetwork {
    fn kind(&self) -> &'static str {
        "line"
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn rooms(&self) -> &[String] {
        &self.rooms
    }

    fn user_limit(&self) -> Option<(u32, Duration)> {
        self.user_limit
    }

    fn ids(&self) -> Ids {
        Ids::Local
    }

    fn describe(&self) -> String {
        format!("{}, rooms {}", self.server, self.rooms.join(" "))
    }

    fn start(&self, start: Start) -> (Arc<dyn Transport>, tokio::task::JoinHandle<()>) {
        let (inbound_tx, inbound_rx) = mpsc::channel(256);
        let (outgoing_tx, outgoing_rx) = mpsc::unbounded_channel();
        let (connection, _) = watch::channel(Connection::Down);
        let transport = Arc::new(LineTransport {
            network: NetworkId::new(self.name.as_str()),
            inbound: Mutex::new(inbound_rx),
            outgoing: outgoing_tx,
            connection,
        });
        let task =
            tokio::spawn(drive(transport.clone(), self.server.clone(), start, inbound_tx, outgoing_rx));
        (transport, task)
    }

    async fn check(&self, _prefix: &str, limit: Duration) -> Result<String, String> {
        match tokio::time::timeout(limit, TcpStream::connect(&self.server)).await {
            Ok(Ok(_)) => Ok(format!("connected to {}", self.server)),
            Ok(Err(error)) => Err(format!("cannot connect to {}: {error}", self.server)),
            Err(_) => Err(format!("no connection to {} within {limit:?}", self.server)),
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The running transport.
struct LineTransport {
    network: NetworkId,
    inbound: Mutex<mpsc::Receiver<Inbound>>,
    outgoing: mpsc::UnboundedSender<String>,
    connection: watch::Sender<Connection>,
}

impl LineTransport {
    fn write(&self, line: String) -> Result<(), TransportError> {
        if *self.connection.borrow() != Connection::Up {
            return Err(TransportError::Disconnected {
                network: self.network.clone(),
                reason: "not connected".into(),
            });
        }
        self.outgoing.send(line).map_err(|_| TransportError::Disconnected {
            network: self.network.clone(),
            reason: "stopped".into(),
        })
    }
}

#[async_trait]
impl GameTransport for LineTransport {
    fn network(&self) -> &NetworkId {
        &self.network
    }

    async fn recv(&self) -> Option<Inbound> {
        self.inbound.lock().await.recv().await
    }

    async fn join(&self, room: &RoomId) -> Result<(), TransportError> {
        self.write(format!("JOIN {room}"))
    }

    async fn leave(&self, room: &RoomId) -> Result<(), TransportError> {
        self.write(format!("PART {room}"))
    }

    async fn send(&self, to: &Destination, message: &Message) -> Result<(), TransportError> {
        let head = match to {
            Destination::Room(room) => format!("SAY {room}"),
            Destination::Private(player) => format!("TELL {player}"),
        };
        for line in message.text.plain().lines() {
            self.write(format!("{head} {line}"))?;
        }
        Ok(())
    }
}

impl Transport for LineTransport {
    fn connection(&self) -> watch::Receiver<Connection> {
        self.connection.subscribe()
    }
}

/// Connects (retrying every 50 ms until stopped), joins the rooms, then carries lines
/// both ways until the server closes the connection or the daemon stops.
async fn drive(
    transport: Arc<LineTransport>,
    server: String,
    start: Start,
    inbound: mpsc::Sender<Inbound>,
    mut outgoing: mpsc::UnboundedReceiver<String>,
) {
    let stream = loop {
        tokio::select! {
            () = start.stop.cancelled() => {
                transport.connection.send_replace(Connection::Closed);
                return;
            }
            connected = TcpStream::connect(&server) => match connected {
                Ok(stream) => break stream,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    };
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut joins = String::new();
    for room in &start.rooms {
        joins.push_str(&format!("JOIN {room}\n"));
    }
    if write.write_all(joins.as_bytes()).await.is_ok() {
        transport.connection.send_replace(Connection::Up);
        loop {
            tokio::select! {
                () = start.stop.cancelled() => {
                    let _ = write.write_all(b"QUIT\n").await;
                    break;
                }
                line = lines.next_line() => match line {
                    Ok(Some(line)) => {
                        if let Some(message) = read_line(&transport.network, &line)
                            && inbound.send(message).await.is_err()
                        {
                            break;
                        }
                    }
                    Ok(None) | Err(_) => break,
                },
                Some(line) = outgoing.recv() => {
                    if write.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
    transport.connection.send_replace(Connection::Closed);
}

/// One line from the server as an inbound message; `None` for any other line.
fn read_line(network: &NetworkId, line: &str) -> Option<Inbound> {
    let (verb, rest) = line.split_once(' ')?;
    match verb {
        "MSG" => {
            let mut parts = rest.splitn(4, ' ');
            let (id, room, sender, text) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            let message = Inbound::new(network.clone(), RoomId::new(room), PlayerId::new(sender), text);
            Some(Inbound { message_id: Some(id.to_owned()), ..message })
        }
        "PRIV" => {
            let mut parts = rest.splitn(3, ' ');
            let (id, sender, text) = (parts.next()?, parts.next()?, parts.next()?);
            let message = Inbound::new(network.clone(), RoomId::new(sender), PlayerId::new(sender), text);
            Some(Inbound { message_id: Some(id.to_owned()), private: true, ..message })
        }
        _ => None,
    }
}
