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

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};
use tokio::sync::mpsc as queue;
use tokio_postgres::Client;

/// A future a job returns, borrowing the client.
pub(super) type Work<'c, T> = Pin<Box<dyn Future<Output = T> + Send + 'c>>;

/// A job: runs on the engine's thread with its client.
type Job = Box<dyn for<'c> FnOnce(&'c mut Client) -> Work<'c, ()> + Send>;

/// The thread that owns the connection and a one-thread runtime that drives it.
pub(super) struct Worker {
    jobs: Option<queue::UnboundedSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// The engine's thread has stopped (its connection could not be kept): nothing more can
/// be committed.
#[derive(Debug)]
pub(super) struct Gone;

impl Worker {
    /// Starts the thread: `connect` runs there first and makes the client (its error, if
    /// any, is returned here and the thread ends).
    pub(super) fn start<E: Send + 'static>(
        connect: impl FnOnce(&Runtime) -> Result<Client, E> + Send + 'static,
    ) -> Result<Result<Worker, E>, std::io::Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (jobs, mut inbox) = queue::unbounded_channel::<Job>();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        let thread =
            std::thread::Builder::new().name("spellbridge-postgres".to_owned()).spawn(move || {
                let mut client = match connect(&runtime) {
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
                    while let Some(job) = inbox.recv().await {
                        job(&mut client).await;
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
    ) -> Result<T, Gone> {
        let (answer_tx, answer) = mpsc::sync_channel(1);
        let jobs = self.jobs.as_ref().ok_or(Gone)?;
        jobs.send(Box::new(move |client| {
            Box::pin(async move {
                let _ = answer_tx.send(job(client).await);
            })
        }))
        .map_err(|_| Gone)?;
        let on_worker = Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
        if on_worker {
            tokio::task::block_in_place(|| answer.recv()).map_err(|_| Gone)
        } else {
            answer.recv().map_err(|_| Gone)
        }
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
