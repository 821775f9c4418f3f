//! The PostgreSQL engine's own thread: the store's interface is synchronous (the daemon
//! loop calls it as it calls SQLite, and a move must be committed before it is
//! announced), while tokio-postgres is asynchronous. Calling `block_on` from the daemon's
//! runtime would panic ("a runtime within a runtime"), so the connection lives on a
//! thread of its own with a one-thread runtime, and each store call is a job sent there.
//!
//! The caller waits for its job's answer. On a multi-thread runtime's worker it waits
//! inside [`tokio::task::block_in_place`], so the runtime moves its other tasks (the
//! transports, the site) to other workers meanwhile; elsewhere (the console, a
//! current-thread test) it simply blocks, as an SQLite commit does.
//!
//! When the connection ends (PostgreSQL restarted, the network cut), the thread opens a
//! new one before the next job runs, with a backoff that doubles from
//! [`FIRST_BACKOFF`] to [`MAX_BACKOFF`]. A job that finds the database down waits at most
//! [`PATIENCE`] for it and is then answered [`Answer::Down`] without running: it sent
//! nothing, so its caller knows it changed nothing. The commit's prepared statements are
//! prepared again on a new connection (`commit::Prepared`); nothing else is kept across jobs.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};
use tokio::sync::mpsc as queue;
use tokio::time::Instant;
use tokio_postgres::Client;

/// A future a job returns, borrowing the client.
pub(super) type Work<'c, T> = Pin<Box<dyn Future<Output = T> + Send + 'c>>;

/// Opens a new connection after the last one ended.
pub(super) type Reconnect = Box<dyn Fn() -> Work<'static, Result<Client, tokio_postgres::Error>> + Send>;

/// A job: runs on the engine's thread with its client, or is told the database is down.
type Job = Box<dyn for<'c> FnOnce(Result<&'c mut Client, Down>) -> Work<'c, ()> + Send>;

/// The first wait before opening the connection again.
pub(super) const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two attempts.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long a job waits for the database to come back before it is answered "down".
pub(super) const PATIENCE: Duration = Duration::from_secs(4);
/// How long one attempt to connect again may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The thread that owns the connection and a one-thread runtime that drives it.
pub(super) struct Worker {
    jobs: Option<queue::UnboundedSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// Why a job got no answer from the database.
#[derive(Debug)]
pub(super) enum Answer {
    /// The engine's thread has stopped: nothing more can be done.
    Gone,
    /// The connection ended and could not be opened again within [`PATIENCE`]; the job
    /// did not run. The text is what the last attempt said.
    Down(String),
}

/// The database could not be reached; the job did not run.
#[derive(Debug)]
pub(super) struct Down(String);

/// The connection, and when to try opening it again once it ended.
struct Line {
    client: Client,
    reconnect: Reconnect,
    backoff: Duration,
    next_try: Instant,
    last_error: String,
}

impl Line {
    /// The client, open: opened again if it ended, waiting at most [`PATIENCE`].
    async fn open(&mut self) -> Result<&mut Client, Down> {
        // Let the connection's task see an end the server just announced.
        tokio::task::yield_now().await;
        if !self.client.is_closed() {
            return Ok(&mut self.client);
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            if self.next_try > deadline {
                return Err(Down(self.last_error.clone()));
            }
            tokio::time::sleep_until(self.next_try).await;
            match tokio::time::timeout(CONNECT_TIMEOUT, (self.reconnect)()).await {
                Ok(Ok(client)) => {
                    tracing::info!("the PostgreSQL store's connection is open again");
                    self.client = client;
                    self.backoff = FIRST_BACKOFF;
                    self.next_try = Instant::now();
                    return Ok(&mut self.client);
                }
                Ok(Err(error)) => self.last_error = error.to_string(),
                Err(_) => self.last_error = format!("no answer within {CONNECT_TIMEOUT:?}"),
            }
            tracing::warn!(error = %self.last_error, retry_in = ?self.backoff, "the PostgreSQL store's connection could not be opened again");
            self.next_try = Instant::now() + self.backoff;
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        }
    }
}

impl Worker {
    /// Starts the thread: `connect` runs there first and makes the client (its error, if
    /// any, is returned here and the thread ends); `reconnect` opens a new one each time
    /// the connection ends.
    pub(super) fn start<E: Send + 'static>(
        connect: impl FnOnce(&Runtime) -> Result<Client, E> + Send + 'static,
        reconnect: Reconnect,
    ) -> Result<Result<Worker, E>, std::io::Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (jobs, mut inbox) = queue::unbounded_channel::<Job>();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        let thread =
            std::thread::Builder::new().name("spellbridge-postgres".to_owned()).spawn(move || {
                let client = match connect(&runtime) {
                    Ok(client) => {
                        let _ = ready_tx.send(Ok(()));
                        client
                    }
                    Err(error) => {
                        let _ = ready_tx.send(Err(error));
                        return;
                    }
                };
                // The runtime runs all the while, between jobs too, so the connection's task
                // always progresses (a rollback sent by a dropped transaction goes at once).
                runtime.block_on(async move {
                    let mut line = Line {
                        client,
                        reconnect,
                        backoff: FIRST_BACKOFF,
                        next_try: Instant::now(),
                        last_error: String::new(),
                    };
                    while let Some(job) = inbox.recv().await {
                        match line.open().await {
                            Ok(client) => job(Ok(client)).await,
                            Err(down) => job(Err(down)).await,
                        }
                    }
                });
            })?;
        let started = match ready.recv() {
            Ok(Ok(())) => Ok(Worker { jobs: Some(jobs), thread: Some(thread) }),
            Ok(Err(error)) => Err(error),
            Err(_) => return Err(std::io::Error::other("the PostgreSQL thread ended while connecting")),
        };
        Ok(started)
    }

    /// Runs `job` on the engine's thread and waits for its answer.
    pub(super) fn call<T: Send + 'static>(
        &self,
        job: impl for<'c> FnOnce(&'c mut Client) -> Work<'c, T> + Send + 'static,
    ) -> Result<T, Answer> {
        let (answer_tx, answer) = mpsc::sync_channel(1);
        let jobs = self.jobs.as_ref().ok_or(Answer::Gone)?;
        jobs.send(Box::new(move |client: Result<&mut Client, Down>| {
            Box::pin(async move {
                let _ = answer_tx.send(match client {
                    Ok(client) => Ok(job(client).await),
                    Err(Down(why)) => Err(Answer::Down(why)),
                });
            }) as Work<'_, ()>
        }))
        .map_err(|_| Answer::Gone)?;
        let on_worker = Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
        let answered = if on_worker { tokio::task::block_in_place(|| answer.recv()) } else { answer.recv() };
        answered.map_err(|_| Answer::Gone)?
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends the thread after the job it runs, if any.
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
