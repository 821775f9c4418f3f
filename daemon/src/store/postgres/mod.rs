//! The PostgreSQL engine of the store (issue 34), chosen by `[store] url`: the same rows
//! as SQLite's — the journal, the tables' sealed snapshots and history rows
//! ([`snapshots`]), message ids, the outbox ([`outbox`]), named values, dice keys and what
//! is kept beside the games ([`kept`]) — in the tables of `0012_store.sql`, step 12 of the
//! store's one list of migrations (`store::schema`), which also makes the leader lease.
//!
//! Every journal commit runs the leader's fence ([`crate::leader::FENCE_SQL`]) first, in
//! its own transaction: a daemon whose lease epoch is stale commits nothing and gets
//! [`StoreError::Fenced`]. A commit takes two round trips ([`commit`]): its statements
//! pipelined, then `COMMIT`. A store opened without a fence refuses to commit (it reads:
//! `verify`, `export`, the site, a standby).
//!
//! One connection, on a thread of its own ([`worker`]): the daemon loop is the store's
//! only writer and commits one batch at a time (group commit), so a pool would only add
//! connections that wait; the lease keeps its own connection (`leader::Lease`), so a busy
//! store never delays a renewal. The site, the STS policies and the appservice
//! transactions each open a store of their own (no lease) beside it.

mod audit;
mod commit;
mod copy;
mod kept;
mod outbox;
mod positions;
mod site;
mod snapshots;
pub mod tls;
pub mod url;
mod worker;

use spellbridge_core::Registry;
use spellbridge_core::dice::DiceKey;
use tokio_postgres::Client;

use super::{JournalRow, MessageKey, Queued, Step, StoreError, commits, sql_u64, to_json};
use crate::journal::{Entry, TableId};
use crate::leader::{self, Fence};
use crate::router::{Router, RouterConfig};
use crate::turn::Outbound;
pub use url::{StoreUrl, UrlError};
use worker::{Answer, Work, Worker};

/// The PostgreSQL store.
pub struct PgStore {
    worker: Worker,
    url: StoreUrl,
    fence: Option<Fence>,
    /// The commit's statements, prepared once per connection.
    prepared: commit::Prepared,
    commits: commits::Commits,
    /// Each table's journal entries committed since its snapshot was last written (as
    /// SQLite's store keeps them).
    since_snapshot: std::collections::HashMap<TableId, usize>,
    /// [`super::SNAPSHOT_EVERY`], or another count for tests and benches.
    snapshot_every: usize,
}

/// One journal row's values, owned, to send to the engine's thread.
struct JournalValues {
    table: Option<i64>,
    sequence: Option<i64>,
    kind: &'static str,
    player: Option<String>,
    command: Option<String>,
    network: Option<String>,
    message_id: Option<String>,
    dice_seed: Option<i64>,
    entry: String,
    events: String,
}

/// What one commit writes, computed from the router before it is sent to the thread.
#[derive(Default)]
struct Batch {
    meta: Vec<(String, String)>,
    seen: Vec<(String, String)>,
    journal: Vec<JournalValues>,
    outbox: Vec<(String, String, String)>,
    keys: Vec<(i64, i64, String)>,
    snapshots: Vec<snapshots::Snapshot>,
}

impl PgStore {
    /// Connects to the database at `url`, brings its schema up to date (the lease's and
    /// the store's migrations, one list) and commits under `fence` (`None`: reads only).
    pub fn open(url: &StoreUrl, fence: Option<Fence>) -> Result<PgStore, StoreError> {
        let target = url.shown().to_owned();
        let mut config = url.config().clone();
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.application_name("spellbridge-store");
        let (again, tls_again) = (config.clone(), url.tls());
        let prepared = commit::Prepared::default();
        let (first, anew) = (prepared.clone(), prepared.clone());
        let reconnect: worker::Reconnect = Box::new(move || {
            let (config, tls, anew) = (again.clone(), tls_again.clone(), anew.clone());
            Box::pin(async move {
                let (client, connection) = config.connect(tls).await?;
                tokio::spawn(watch(connection));
                anew.connected();
                Ok(client)
            })
        });
        let tls = url.tls();
        let started = Worker::start(
            move |runtime| {
                runtime.block_on(async {
                    let (mut client, connection) = config.connect(tls).await.map_err(Err)?;
                    tokio::spawn(watch(connection));
                    first.connected();
                    leader::schema::migrate(&mut client).await.map_err(Ok)?;
                    Ok::<Client, Result<leader::LeaseError, tokio_postgres::Error>>(client)
                })
            },
            reconnect,
        );
        let worker = match started {
            Ok(Ok(worker)) => worker,
            Ok(Err(Err(source))) => return Err(StoreError::Postgres { target, what: "connecting", source }),
            Ok(Err(Ok(source))) => return Err(StoreError::PostgresSchema { target, source }),
            Err(source) => return Err(StoreError::Thread { target, source: Some(source) }),
        };
        Ok(PgStore {
            worker,
            url: url.clone(),
            fence,
            prepared,
            commits: commits::Commits::default(),
            since_snapshot: Default::default(),
            snapshot_every: super::SNAPSHOT_EVERY,
        })
    }

    /// Writes a table's snapshot once `every` of its entries were committed since the last
    /// one (see [`super::SqliteStore::set_snapshot_every`]).
    pub fn set_snapshot_every(&mut self, every: usize) {
        self.snapshot_every = every.max(1);
    }

    /// Commits under `fence` from now on (a new lease term).
    pub fn set_fence(&mut self, fence: Fence) {
        self.fence = Some(fence);
    }

    /// The fence its commits pass, if it holds a lease.
    pub fn fence(&self) -> Option<&Fence> {
        self.fence.as_ref()
    }

    /// The database, without its password.
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// How many write transactions this store committed (all synced: PostgreSQL's
    /// `synchronous_commit`, on by default, makes a commit durable before it returns).
    pub fn commits(&self) -> commits::Commits {
        self.commits.clone()
    }

    /// Runs `job` on the connection's thread; `what` names it in an error.
    fn call<T: Send + 'static>(
        &self,
        what: &'static str,
        job: impl for<'c> FnOnce(&'c mut Client) -> Work<'c, Result<T, tokio_postgres::Error>> + Send + 'static,
    ) -> Result<T, StoreError> {
        let target = self.url.shown().to_owned();
        self.worker
            .call(job)
            .map_err(|answer| self.unanswered(answer))?
            .map_err(|source| StoreError::Postgres { target, what, source })
    }

    /// The error for a job the database did not answer.
    fn unanswered(&self, answer: Answer) -> StoreError {
        let target = self.url.shown().to_owned();
        match answer {
            Answer::Gone => StoreError::Thread { target, source: None },
            Answer::Down(why) => StoreError::Unreachable { target, why },
        }
    }

    /// True when this message was already handled.
    pub fn seen(&self, key: &MessageKey) -> Result<bool, StoreError> {
        let (network, id) = (key.network.as_str().to_owned(), key.id.clone());
        self.call("reading the message ids seen", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt(
                        "SELECT 1 FROM seen_messages WHERE network = $1 AND message_id = $2",
                        &[&network, &id],
                    )
                    .await?;
                Ok(row.is_some())
            })
        })
    }

    /// Commits a batch of steps in one transaction that first passes the lease's fence.
    /// Returns what to send, as [`super::Store::commit`] does.
    pub fn commit(&mut self, router: &Router, steps: Vec<Step>) -> Result<Vec<Queued>, StoreError> {
        let Some(fence) = self.fence.clone() else {
            return Err(StoreError::NoLease { target: self.url.shown().to_owned() });
        };
        let mut batch = Batch::default();
        // What to send, in order; `true` for an outbox row (its id comes from the commit).
        let mut order: Vec<(bool, Outbound)> = Vec::new();
        let mut keyed = std::collections::BTreeSet::new();
        // Each touched table: how many of its entries this batch commits, and whether it
        // opened here.
        let mut touched: std::collections::BTreeMap<TableId, (usize, bool)> = Default::default();
        for step in steps {
            batch.meta.extend(step.meta.iter().cloned());
            if step.fleeting {
                order.extend(step.outbound.into_iter().map(|o| (false, o)));
                continue;
            }
            if let Some(key) = &step.message {
                batch.seen.push((key.network.as_str().to_owned(), key.id.clone()));
            }
            for record in &step.records {
                let row = JournalRow::of(&record.entry);
                if let Entry::Opened { table, commitment: Some(_), .. } | Entry::Keyed { table, .. } =
                    &record.entry
                {
                    keyed.insert(*table);
                }
                let events: Vec<String> = record.announced.iter().map(|o| o.message.text.plain()).collect();
                if let Some(table) = record.entry.table() {
                    let (rows, opened) = touched.entry(table).or_default();
                    *rows += 1;
                    *opened |= matches!(record.entry, Entry::Opened { .. });
                }
                batch.journal.push(JournalValues {
                    table: row.table.map(sql_u64),
                    sequence: row.sequence.map(sql_u64),
                    kind: row.kind,
                    player: row.player.map(str::to_owned),
                    command: row.command.map(str::to_owned),
                    network: step.message.as_ref().map(|k| k.network.as_str().to_owned()),
                    message_id: step.message.as_ref().map(|k| k.id.clone()),
                    dice_seed: row.dice_seed.map(sql_u64),
                    entry: to_json(&record.entry),
                    events: to_json(&events),
                });
            }
            for outbound in step.outbound {
                batch.outbox.push((
                    outbound.network.as_str().to_owned(),
                    to_json(&outbound.to),
                    to_json(&outbound.message),
                ));
                order.push((true, outbound));
            }
        }
        for table in keyed {
            for (epoch, key) in router.dice_keys(table) {
                batch.keys.push((sql_u64(table), sql_u64(epoch), key.reveal()));
            }
        }
        let mut due = Vec::new();
        for (table, (rows, opened)) in &mut touched {
            let since = self.since_snapshot.get(table).copied().unwrap_or(0) + *rows;
            *rows = since;
            if *opened || since >= self.snapshot_every || router.table_finished(*table) == Some(true) {
                due.push(*table);
                *rows = 0;
            }
        }
        batch.snapshots = self.snapshots_of(router, &due)?;
        let ids = self.write_batch(fence, batch, "committing a batch")?;
        for (table, (since, _)) in touched {
            self.since_snapshot.insert(table, since);
        }
        self.commits.count(true);
        let mut ids = ids.into_iter();
        Ok(order
            .into_iter()
            .map(|(kept, outbound)| Queued { id: if kept { ids.next().unwrap_or(-1) } else { -1 }, outbound })
            .collect())
    }

    /// Writes `batch` in one transaction that passes `fence` first ([`commit::write`]);
    /// returns the outbox ids.
    ///
    /// When the connection ends under it, the batch is written once more on a new
    /// connection only if it surely was not committed: it failed before its `COMMIT` was
    /// sent (PostgreSQL aborts a transaction whose session ends), or its transaction id's
    /// status, asked on the new connection ([`PgStore::fate`]), is `aborted`. If the
    /// status says `committed`, the batch stands. Otherwise it is reported lost and
    /// nothing of it is announced.
    fn write_batch(&self, fence: Fence, batch: Batch, what: &'static str) -> Result<Vec<i64>, StoreError> {
        let target = self.url.shown().to_owned();
        let batch = std::sync::Arc::new(batch);
        let mut retried = false;
        loop {
            let (fence, written, prepared) = (fence.clone(), batch.clone(), self.prepared.clone());
            let error = match self
                .worker
                .call(move |client| Box::pin(commit::write(client, prepared, fence, written)))
            {
                Err(answer) => return Err(self.unanswered(answer)),
                Ok(Ok(ids)) => return Ok(ids),
                Ok(Err(Written::Fenced(source))) => return Err(StoreError::Fenced { source }),
                Ok(Err(Written::Row(detail))) => return Err(StoreError::PostgresRow { target, detail }),
                Ok(Err(Written::Sql(source))) => source,
                Ok(Err(Written::Broken { before_commit: true, source, .. })) if !retried => {
                    tracing::warn!(error = %source, "the PostgreSQL store's connection ended before a commit; writing it again on a new one");
                    retried = true;
                    continue;
                }
                Ok(Err(Written::Broken { before_commit: true, source, .. })) => source,
                Ok(Err(Written::Broken { xid, ids, source, .. })) => match self.fate(xid) {
                    Ok(Some(status)) if status == "committed" => {
                        tracing::warn!("the PostgreSQL store's connection ended during a commit that stood");
                        return Ok(ids);
                    }
                    Ok(Some(status)) if status == "aborted" && !retried => {
                        tracing::warn!(error = %source, "the PostgreSQL store's connection ended during a commit that did not stand; writing it again on a new one");
                        retried = true;
                        continue;
                    }
                    status => {
                        tracing::error!(error = %source, ?status, "the PostgreSQL store's connection ended during a commit whose fate is unknown");
                        return Err(StoreError::CommitUnknown { target });
                    }
                },
            };
            return Err(StoreError::Postgres { target, what, source: error });
        }
    }

    /// What became of transaction `xid`, whose `COMMIT` was sent on a connection that then
    /// ended: `txid_status` asked on a new one (`committed`, `aborted`, or `None` when
    /// PostgreSQL no longer knows). While it says `in progress` it is asked again for up to
    /// [`FATE_SETTLES`]: PostgreSQL rolls back the transaction of a session whose client
    /// vanished only once it sees the connection's end.
    fn fate(&self, xid: i64) -> Result<Option<String>, Answer> {
        self.worker
            .call(move |client| {
                Box::pin(async move {
                    let deadline = tokio::time::Instant::now() + FATE_SETTLES;
                    loop {
                        let row = client.query_one("SELECT txid_status($1)", &[&xid]).await?;
                        let status: Option<String> = row.get(0);
                        if status.as_deref() != Some("in progress") || tokio::time::Instant::now() >= deadline
                        {
                            return Ok::<_, tokio_postgres::Error>(status);
                        }
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    }
                })
            })?
            .or_else(|error| {
                tracing::warn!(%error, "the PostgreSQL store could not ask what became of a commit");
                Ok(None)
            })
    }

    /// Writes the snapshot of every table with journal entries committed since its last
    /// one (on a clean shutdown), in one fenced transaction.
    pub fn write_snapshots(&mut self, router: &Router) -> Result<(), StoreError> {
        let behind: Vec<TableId> =
            self.since_snapshot.iter().filter(|(_, since)| **since > 0).map(|(table, _)| *table).collect();
        if behind.is_empty() {
            return Ok(());
        }
        let Some(fence) = self.fence.clone() else {
            return Err(StoreError::NoLease { target: self.url.shown().to_owned() });
        };
        let batch = Batch { snapshots: self.snapshots_of(router, &behind)?, ..Batch::default() };
        self.write_batch(fence, batch, "writing the tables' snapshots")?;
        self.since_snapshot.clear();
        Ok(())
    }

    /// Rebuilds the router from the database: tables from their sound snapshots and the
    /// journal rows after them (see [`PgStore::load_checked`]), then the lobby.
    pub fn load(&self, registry: Registry, options: RouterConfig) -> Result<Router, StoreError> {
        self.load_checked(registry, options, super::startup::Policy::Rebuild).map(|loaded| loaded.router)
    }

    /// Journal entries (`Some(None)`: the lobby's; `Some(Some(t))`: table t's; `None`:
    /// all), in order.
    fn entries_of(&self, which: Option<Option<TableId>>) -> Result<Vec<Entry>, StoreError> {
        let (all, table) = (which.is_none(), which.flatten().map(sql_u64));
        let rows = self.call("reading the journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT id, entry FROM journal WHERE $1 OR table_id IS NOT DISTINCT FROM $2 ORDER BY id",
                        &[&all, &table],
                    )
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1))).collect::<Vec<_>>())
            })
        })?;
        rows.into_iter()
            .map(|(id, text)| {
                serde_json::from_str(&text).map_err(|e| self.bad_row(format!("journal row {id}: {e}")))
            })
            .collect()
    }

    /// The journal entries of one table (or, with `None`, the lobby's), in order.
    pub fn entries(&self, table: Option<TableId>) -> Result<Vec<Entry>, StoreError> {
        self.entries_of(Some(table))
    }

    /// Every journal entry, in the order committed.
    pub fn journal(&self) -> Result<Vec<Entry>, StoreError> {
        self.entries_of(None)
    }

    /// The journal rows after row `id`, with their ids, in order, at most `limit` of them:
    /// what a standby follows (`leader::standby`). The daemon loop is the only writer and
    /// commits one batch at a time, so ids become visible in order.
    pub fn journal_after(&self, id: i64, limit: i64) -> Result<Vec<(i64, Entry)>, StoreError> {
        let rows = self.call("following the journal", move |client| {
            Box::pin(async move {
                let rows = client
                    .query("SELECT id, entry FROM journal WHERE id > $1 ORDER BY id LIMIT $2", &[&id, &limit])
                    .await?;
                Ok(rows.into_iter().map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1))).collect::<Vec<_>>())
            })
        })?;
        rows.into_iter()
            .map(|(id, text)| {
                let entry = serde_json::from_str(&text)
                    .map_err(|e| self.bad_row(format!("journal row {id}: {e}")))?;
                Ok((id, entry))
            })
            .collect()
    }

    /// The dice keys kept for one table (or every table): table, epoch, key.
    pub fn dice_keys(&self, table: Option<TableId>) -> Result<Vec<(TableId, u64, DiceKey)>, StoreError> {
        let table = table.map(sql_u64);
        let rows = self.call("reading the dice keys", move |client| {
            Box::pin(async move {
                let rows = client
                    .query(
                        "SELECT table_id, epoch, key FROM dice_keys WHERE $1::bigint IS NULL OR table_id = $1 \
                         ORDER BY table_id, epoch",
                        &[&table],
                    )
                    .await?;
                Ok(rows
                    .into_iter()
                    .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1), r.get::<_, String>(2)))
                    .collect::<Vec<_>>())
            })
        })?;
        rows.into_iter()
            .map(|(table, epoch, key)| {
                let (table, epoch) = (table as TableId, epoch as u64);
                let key = DiceKey::from_hex(&key)
                    .map_err(|e| self.bad_row(format!("dice key of table {table}, epoch {epoch}: {e}")))?;
                Ok((table, epoch, key))
            })
            .collect()
    }

    /// A named value kept with the games, if set.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        let key = key.to_owned();
        self.call("reading a named value", move |client| {
            Box::pin(async move {
                Ok(client
                    .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
                    .await?
                    .map(|r| r.get(0)))
            })
        })
    }

    /// Removes sent messages from the outbox.
    pub fn sent_all(&self, ids: &[i64]) -> Result<(), StoreError> {
        let ids = ids.to_vec();
        self.call("marking messages sent", move |client| {
            Box::pin(async move {
                client.execute("DELETE FROM outbox WHERE id = ANY($1)", &[&ids]).await.map(drop)
            })
        })
    }

    pub(super) fn bad_row(&self, detail: String) -> StoreError {
        StoreError::PostgresRow { target: self.url.shown().to_owned(), detail }
    }
}

/// How long a commit cut off at `COMMIT` waits for its transaction to be seen ended.
const FATE_SETTLES: std::time::Duration = std::time::Duration::from_secs(2);

/// Logs how a connection ended.
async fn watch(
    connection: tokio_postgres::Connection<tokio_postgres::Socket, tls::TlsStream<tokio_postgres::Socket>>,
) {
    if let Err(error) = connection.await {
        tracing::warn!(%error, "the PostgreSQL store's connection ended; it is opened again before the next call");
    }
}

/// True when `error` says the connection ended (or the server is shutting down), not
/// that a statement was wrong.
fn lost(error: &tokio_postgres::Error) -> bool {
    // 08: connection exceptions; 57P: the server shutting down or not yet up.
    let code = error.code().map(|code| code.code());
    error.is_closed()
        || code.is_some_and(|code| code.starts_with("08") || code.starts_with("57P"))
        || std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

/// Why a batch was not written.
enum Written {
    Fenced(leader::FenceError),
    Sql(tokio_postgres::Error),
    /// A row the commit was to write does not fit what is stored.
    Row(String),
    /// The connection ended under the commit.
    Broken {
        /// It ended before `COMMIT` was sent: nothing was committed.
        before_commit: bool,
        /// The transaction's id (`txid_current()`), to ask what became of it; 0 if not known.
        xid: i64,
        /// The outbox ids the commit wrote, if it stood.
        ids: Vec<i64>,
        source: tokio_postgres::Error,
    },
}
