//! One commit on PostgreSQL in two round trips (issue 34). Its statements — `BEGIN`, the
//! transaction's id, the leader's fence, then the named values, message ids, journal,
//! outbox and dice key rows — go out together, pipelined (tokio-postgres sends a request
//! when its future is first polled and reads the answers in order; [`in_order`] polls them
//! in the order written), as statements prepared once per connection ([`Prepared`]).
//! Once every answer is in and the fence passed, `COMMIT` goes alone.
//!
//! Waiting for those answers before `COMMIT` is what keeps a commit cut off at `COMMIT`
//! resolvable: its transaction id and outbox ids are known before `COMMIT` is sent, so
//! `PgStore::write_batch` can ask `txid_status` what became of it. A stale fence or a
//! failed statement is answered `ROLLBACK` instead: nothing of the batch stays. A commit
//! that writes a table's snapshot reads inside its transaction (the journal's digest, the
//! history's head), so it takes a few more round trips before its `COMMIT`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;

use tokio_postgres::{Client, Row, Statement};

use super::{Batch, Written, lost, snapshots};
use crate::leader::{self, Fence};

const XID: &str = "SELECT txid_current()";
const META: &str =
    "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
const SEEN: &str = "INSERT INTO seen_messages (network, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING";
const JOURNAL: &str = "INSERT INTO journal (table_id, sequence, kind, player, command, network, message_id, dice_seed, entry, events)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
const OUTBOX: &str = "INSERT INTO outbox (network, destination, text) VALUES ($1, $2, $3) RETURNING id";
const KEYS: &str = "INSERT INTO dice_keys (table_id, epoch, key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";

/// A commit's statements, prepared on one connection.
#[derive(Clone)]
struct Statements {
    xid: Statement,
    fence: Statement,
    meta: Statement,
    seen: Statement,
    journal: Statement,
    outbox: Statement,
    keys: Statement,
}

/// The commit's statements as prepared on the connection open now: prepared on the first
/// commit after each connect (a statement lives only as long as its connection), and
/// again after a statement failed (a schema changed under a prepared statement fails it
/// until it is prepared anew).
#[derive(Clone, Default)]
pub(super) struct Prepared {
    /// How many connections were opened so far; each connect bumps it ([`Self::connected`]).
    connections: Arc<AtomicU64>,
    /// The statements and the connection (its number) they were prepared on.
    kept: Arc<Mutex<Option<(u64, Statements)>>>,
}

impl Prepared {
    /// A new connection was opened: the statements prepared before are gone with the old one.
    pub(super) fn connected(&self) {
        self.connections.fetch_add(1, Ordering::SeqCst);
    }

    fn forget(&self) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The statements on `client`, the connection open now, prepared (pipelined) if needed.
    async fn on(&self, client: &Client) -> Result<Statements, tokio_postgres::Error> {
        let connection = self.connections.load(Ordering::SeqCst);
        if let Some((on, statements)) = &*self.kept.lock().unwrap_or_else(PoisonError::into_inner)
            && *on == connection
        {
            return Ok(statements.clone());
        }
        let texts = [XID, leader::FENCE_SQL, META, SEEN, JOURNAL, OUTBOX, KEYS];
        let prepared =
            in_order(texts.iter().map(|sql| Box::pin(client.prepare(sql)) as Request<'_, _>).collect())
                .await
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?;
        let [xid, fence, meta, seen, journal, outbox, keys] =
            <[Statement; 7]>::try_from(prepared).unwrap_or_else(|_| unreachable!("one statement per text"));
        let statements = Statements { xid, fence, meta, seen, journal, outbox, keys };
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some((connection, statements.clone()));
        Ok(statements)
    }
}

/// One request of a pipeline.
type Request<'a, T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'a>>;

/// What one pipelined statement answered.
enum Reply {
    Done,
    Xid(i64),
    Lease(Option<Row>),
    OutboxId(i64),
}

/// Runs `requests` together and returns their answers in order. Each is first polled in
/// the order given, so their requests reach the server in that order, all before the
/// first answer is awaited.
async fn in_order<T>(mut requests: Vec<Request<'_, T>>) -> Vec<Result<T, tokio_postgres::Error>> {
    let mut answers: Vec<Option<Result<T, tokio_postgres::Error>>> = requests.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (request, answer) in requests.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none() {
                match request.as_mut().poll(cx) {
                    Poll::Ready(done) => *answer = Some(done),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    answers
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| unreachable!("every request answered")))
        .collect()
}

/// Writes `batch` in one transaction that passes `fence` first; returns the outbox ids.
/// A failed one is rolled back before this returns, so the lease row's lock the fence
/// took is let go at once (a take-over waits for it).
pub(super) async fn write(
    client: &mut Client,
    prepared: Prepared,
    fence: Fence,
    batch: Arc<Batch>,
) -> Result<Vec<i64>, Written> {
    let broken = |source: tokio_postgres::Error, xid: i64, ids: Vec<i64>, before_commit: bool| {
        Written::Broken { before_commit, xid, ids, source }
    };
    let client: &Client = client;
    let statements = match prepared.on(client).await {
        Ok(statements) => statements,
        Err(source) if lost(&source) => return Err(broken(source, 0, Vec::new(), true)),
        Err(source) => {
            prepared.forget();
            return Err(Written::Sql(source));
        }
    };
    let (mut xid, mut lease, mut ids, mut failed) = (0, None, Vec::new(), None);
    for (n, reply) in in_order(pipeline(client, &statements, &batch)).await.into_iter().enumerate() {
        match reply {
            Ok(Reply::Done) => {}
            Ok(Reply::Xid(id)) => xid = id,
            Ok(Reply::Lease(row)) => lease = row,
            Ok(Reply::OutboxId(id)) => ids.push(id),
            // The first error is the cause; the statements after it only say the
            // transaction is aborted.
            Err(source) => {
                if failed.is_none() {
                    failed = Some((n, source));
                }
            }
        }
    }
    match failed {
        // Nothing was committed: `COMMIT` was not sent, and PostgreSQL rolls back the
        // transaction of a session that ended.
        Some((_, source)) if lost(&source) => return Err(broken(source, 0, Vec::new(), true)),
        Some((n, source)) => {
            let _ = client.batch_execute("ROLLBACK").await;
            prepared.forget();
            return Err(match n {
                FENCE_AT => Written::Fenced(leader::FenceError::Sql(source)),
                _ => Written::Sql(source),
            });
        }
        None => {
            if let Err(stale) = leader::judged(lease.as_ref(), &fence) {
                let _ = client.batch_execute("ROLLBACK").await;
                return Err(Written::Fenced(stale));
            }
        }
    }
    for snapshot in &batch.snapshots {
        match snapshots::write(client, snapshot).await {
            Ok(()) => {}
            Err(Written::Sql(source)) if lost(&source) => return Err(broken(source, xid, Vec::new(), true)),
            Err(error) => {
                let _ = client.batch_execute("ROLLBACK").await;
                return Err(error);
            }
        }
    }
    match client.batch_execute("COMMIT").await {
        Ok(()) => Ok(ids),
        Err(source) if lost(&source) => Err(broken(source, xid, ids, false)),
        Err(source) => Err(Written::Sql(source)),
    }
}

/// Where the fence is in [`pipeline`].
const FENCE_AT: usize = 2;

/// The requests of one commit before its `COMMIT`, in order: `BEGIN`, the transaction's
/// id, the fence (at [`FENCE_AT`]), then the batch's rows.
fn pipeline<'a>(client: &'a Client, statements: &'a Statements, batch: &'a Batch) -> Vec<Request<'a, Reply>> {
    let mut requests: Vec<Request<'a, Reply>> = Vec::new();
    requests.push(Box::pin(async move { client.batch_execute("BEGIN").await.map(|()| Reply::Done) }));
    requests
        .push(Box::pin(async move { Ok(Reply::Xid(client.query_one(&statements.xid, &[]).await?.get(0))) }));
    requests.push(Box::pin(async move { Ok(Reply::Lease(client.query_opt(&statements.fence, &[]).await?)) }));
    for (key, value) in &batch.meta {
        requests.push(Box::pin(async move {
            client.execute(&statements.meta, &[key, value]).await.map(|_| Reply::Done)
        }));
    }
    for (network, id) in &batch.seen {
        requests.push(Box::pin(async move {
            client.execute(&statements.seen, &[network, id]).await.map(|_| Reply::Done)
        }));
    }
    for row in &batch.journal {
        requests.push(Box::pin(async move {
            let values: [&(dyn tokio_postgres::types::ToSql + Sync); 10] = [
                &row.table,
                &row.sequence,
                &row.kind,
                &row.player,
                &row.command,
                &row.network,
                &row.message_id,
                &row.dice_seed,
                &row.entry,
                &row.events,
            ];
            client.execute(&statements.journal, &values).await.map(|_| Reply::Done)
        }));
    }
    for (network, destination, text) in &batch.outbox {
        requests.push(Box::pin(async move {
            Ok(Reply::OutboxId(
                client.query_one(&statements.outbox, &[network, destination, text]).await?.get(0),
            ))
        }));
    }
    for (table, epoch, key) in &batch.keys {
        requests.push(Box::pin(async move {
            client.execute(&statements.keys, &[table, epoch, key]).await.map(|_| Reply::Done)
        }));
    }
    requests
}
