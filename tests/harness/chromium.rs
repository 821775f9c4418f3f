//! A headless Chromium (Debian's `chromium`, `tests/scripts/install-chromium.sh`) driven
//! over the Chrome DevTools Protocol, for the tests of the spectator site: open a page,
//! evaluate JavaScript in it, wait (bounded) until an expression holds, and take a
//! screenshot. The protocol is JSON over a WebSocket (the synchronous `tungstenite`
//! client); the browser runs from a profile in a temp dir and is killed on drop.
//!
//! The calls block: from an async test, run them in `tokio::task::block_in_place`.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use super::HarnessError;

/// Where Debian installs it; `CHROMIUM` overrides.
const BINARY: &str = "/usr/bin/chromium";
/// How long the browser may take to start and open its DevTools port.
const STARTUP: Duration = Duration::from_secs(30);
/// How long one protocol command may take.
const COMMAND: Duration = Duration::from_secs(30);

/// A running headless Chromium with one page attached.
pub struct Chromium {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    // Dropped last: the browser is killed once the socket is closed.
    _process: Process,
}

/// The browser process and its profile; killed on drop.
struct Process {
    child: Child,
    profile: tempfile::TempDir,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn browser(what: impl Into<String>) -> HarnessError {
    HarnessError::Browser(what.into())
}

impl Chromium {
    /// Starts Chromium (a window of `width`×`height`) and attaches to its blank page.
    pub fn start(width: u32, height: u32) -> Result<Chromium, HarnessError> {
        let binary = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from(BINARY), PathBuf::from);
        if !binary.exists() {
            return Err(HarnessError::ChromiumNotInstalled { binary: binary.display().to_string() });
        }
        let profile = tempfile::tempdir().map_err(HarnessError::io("making Chromium's profile dir"))?;
        let child = Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-sync",
                "--disable-component-update",
                "--mute-audio",
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(HarnessError::io(format!("starting {}", binary.display())))?;
        let mut process = Process { child, profile };
        let port = process.devtools_port()?;
        let page = page_socket_url(port)?;
        let (socket, _) = tungstenite::connect(page.as_str())
            .map_err(|e| browser(format!("connecting to the page's DevTools socket {page}: {e}")))?;
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream.set_read_timeout(Some(COMMAND)).map_err(HarnessError::io("setting a read timeout"))?;
        }
        let mut chromium = Chromium { socket, next_id: 0, _process: process };
        chromium.call("Page.enable", json!({}))?;
        chromium.call("Runtime.enable", json!({}))?;
        Ok(chromium)
    }
}

impl Process {
    /// The DevTools port Chromium wrote into its profile (`DevToolsActivePort`).
    fn devtools_port(&mut self) -> Result<u16, HarnessError> {
        let file = self.profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + STARTUP;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().map_err(HarnessError::io("checking on Chromium"))? {
                return Err(browser(format!("Chromium exited while starting ({status})")));
            }
            if let Ok(text) = std::fs::read_to_string(&file)
                && let Some(port) = text.lines().next().and_then(|line| line.trim().parse().ok())
            {
                return Ok(port);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(browser(format!("Chromium did not open its DevTools port within {STARTUP:?}")))
    }
}

impl Chromium {
    /// Sends one protocol command and returns its result (events in between are skipped).
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, HarnessError> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({ "id": id, "method": method, "params": params }).to_string();
        self.socket.send(Message::text(request)).map_err(|e| browser(format!("sending {method}: {e}")))?;
        let deadline = Instant::now() + COMMAND;
        while Instant::now() < deadline {
            let message = self.socket.read().map_err(|e| browser(format!("waiting for {method}: {e}")))?;
            let Message::Text(text) = message else { continue };
            let answer: Value =
                serde_json::from_str(text.as_str()).map_err(|e| browser(format!("{method}: {e}")))?;
            if answer["id"].as_u64() != Some(id) {
                continue;
            }
            if let Some(error) = answer.get("error") {
                return Err(browser(format!("{method} failed: {error}")));
            }
            return Ok(answer["result"].clone());
        }
        Err(browser(format!("{method} had no answer within {COMMAND:?}")))
    }

    /// Opens `url` and waits until the document has loaded.
    pub fn navigate(&mut self, url: &str) -> Result<(), HarnessError> {
        let result = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(error) = result.get("errorText").and_then(Value::as_str) {
            return Err(browser(format!("opening {url}: {error}")));
        }
        self.wait_for("document.readyState === 'complete'", STARTUP).map(drop)
    }

    /// The value of a JavaScript expression in the page (a promise is awaited).
    pub fn evaluate(&mut self, expression: &str) -> Result<Value, HarnessError> {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(browser(format!("`{expression}` threw: {exception}")));
        }
        Ok(result["result"]["value"].clone())
    }

    /// Evaluates `expression` every 100 ms until it is truthy, for at most `limit`; the
    /// error shows the page's text.
    pub fn wait_for(&mut self, expression: &str, limit: Duration) -> Result<Value, HarnessError> {
        let deadline = Instant::now() + limit;
        loop {
            let value = self.evaluate(expression)?;
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                let text = self.evaluate("document.body ? document.body.innerText : ''").unwrap_or_default();
                return Err(browser(format!(
                    "`{expression}` did not hold within {limit:?}; the page says:\n{text}"
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG screenshot of the whole page, written to `path`.
    pub fn screenshot(&mut self, path: &Path) -> Result<(), HarnessError> {
        let result =
            self.call("Page.captureScreenshot", json!({ "format": "png", "captureBeyondViewport": true }))?;
        let data = result["data"].as_str().ok_or_else(|| browser("a screenshot without data"))?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| browser(format!("the screenshot's base64: {e}")))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(HarnessError::io(format!("creating {}", dir.display())))?;
        }
        std::fs::write(path, png).map_err(HarnessError::io(format!("writing {}", path.display())))
    }
}

/// The WebSocket URL of the browser's first page, from `/json/list`.
fn page_socket_url(port: u16) -> Result<String, HarnessError> {
    let deadline = Instant::now() + STARTUP;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(body) = http_get(port, "/json/list") {
            let pages: Value = serde_json::from_str(&body).unwrap_or_default();
            if let Some(url) = pages
                .as_array()
                .into_iter()
                .flatten()
                .find(|target| target["type"] == "page")
                .and_then(|target| target["webSocketDebuggerUrl"].as_str())
            {
                return Ok(url.to_owned());
            }
            last = body;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(browser(format!("no page target on port {port} within {STARTUP:?}; /json/list said: {last}")))
}

/// A plain `GET` on the DevTools HTTP endpoint (which keeps the connection open: the
/// body is read by its `Content-Length`).
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&answer).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            if length.is_none_or(|length| body.len() >= length) {
                return Ok(body.to_owned());
            }
        }
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            return Ok(text.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default());
        }
        answer.extend_from_slice(&buffer[..read]);
    }
}
