//! `store copy` on PostgreSQL (`store::copy`): every row of the store's tables read, or
//! written in one transaction with their ids as they were (the identity columns are then
//! moved past the highest id, so new rows never reuse one). Both go a page at a time
//! ([`PAGE`] rows), so a copy's memory does not grow with the store: the reading streams
//! the rows of one `REPEATABLE READ` transaction from the connection's thread to the
//! caller's through a channel one page deep; the writing sends each page as a job of its
//! own inside one transaction, which every job checks is still the one it began.

use futures_util::TryStreamExt as _;
use tokio_postgres::types::ToSql;

use super::super::StoreError;
use super::super::copy::{Cell, Kind, PAGE, Page, Read, Sink, TABLES, first_held};
use super::PgStore;

impl PgStore {
    /// Every row of every table in [`TABLES`], [`PAGE`] at a time, as of one moment.
    pub(in crate::store) fn pages(&self, sink: &mut Sink<'_>) -> Result<(), StoreError> {
        let (pages, taken) = std::sync::mpsc::sync_channel::<Page>(1);
        std::thread::scope(|scope| {
            let reader = scope.spawn(move || {
                self.call("reading every table", move |client| {
                    Box::pin(async move {
                        // One snapshot of the database: every table as of one moment.
                        let client = client
                            .build_transaction()
                            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                            .read_only(true)
                            .start()
                            .await?;
                        for (place, table) in TABLES.iter().enumerate() {
                            let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
                            let sql = format!("SELECT {} FROM {} ORDER BY 1", names.join(", "), table.name);
                            let rows = client.query_raw(&sql, std::iter::empty::<i64>()).await?;
                            futures_util::pin_mut!(rows);
                            let mut page = Vec::with_capacity(PAGE);
                            while let Some(row) = rows.try_next().await? {
                                page.push(cells(table.columns, &row));
                                // Waits while the caller writes the page before (this
                                // thread runs nothing else meanwhile: the server waits too).
                                if page.len() == PAGE
                                    && pages
                                        .send((place, std::mem::replace(&mut page, Vec::with_capacity(PAGE))))
                                        .is_err()
                                {
                                    return Ok(()); // the caller stopped: its error is the answer
                                }
                            }
                            if !page.is_empty() && pages.send((place, page)).is_err() {
                                return Ok(());
                            }
                        }
                        client.commit().await
                    })
                })
            });
            let mut written = Ok(());
            while let Ok(page) = taken.recv() {
                if let Err(error) = sink(page) {
                    written = Err(error);
                    break;
                }
            }
            drop(taken);
            let read = reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            written.and(read)
        })
    }

    /// Who holds this database's lease now, if a daemon leads on it.
    pub(in crate::store) fn leader(&self) -> Result<Option<String>, StoreError> {
        self.call("reading the lease", move |client| {
            Box::pin(async move {
                let row = client
                    .query_opt(
                        "SELECT holder FROM leader_lease WHERE expires_at > now() AND holder <> ''",
                        &[],
                    )
                    .await?;
                Ok(row.map(|r| r.get(0)))
            })
        })
    }

    /// Writes every page `read` gives in one transaction; returns the first table that
    /// holds rows (and writes nothing) unless `replace`, which deletes them first.
    pub(in crate::store) fn load_pages(
        &self,
        replace: bool,
        read: &mut Read<'_>,
    ) -> Result<Option<(&'static str, usize)>, StoreError> {
        let begun = self.call("copying every table", move |client| {
            Box::pin(async move {
                client.batch_execute("BEGIN").await?;
                let mut counts = Vec::new();
                for table in TABLES {
                    let n: i64 =
                        client.query_one(&format!("SELECT count(*) FROM {}", table.name), &[]).await?.get(0);
                    counts.push(usize::try_from(n).unwrap_or(0));
                }
                if let Some(held) = first_held(&counts).filter(|_| !replace) {
                    client.batch_execute("ROLLBACK").await?;
                    return Ok(Err(held));
                }
                for table in TABLES {
                    client.execute(&format!("DELETE FROM {}", table.name), &[]).await?;
                }
                Ok(Ok(client.query_one("SELECT txid_current()", &[]).await?.get::<_, i64>(0)))
            })
        })?;
        let xid = match begun {
            Ok(xid) => xid,
            Err(held) => return Ok(Some(held)),
        };
        let written = read(&mut |(place, rows): Page| self.write_page(xid, place, rows)).and_then(|()| {
            self.in_copy(xid, move |client| {
                Box::pin(async move {
                    for table in TABLES.iter().filter(|table| table.identity) {
                        // The next id the database gives is past every copied one.
                        let sql = format!(
                            "SELECT setval(pg_get_serial_sequence('{0}', 'id'), COALESCE((SELECT MAX(id) FROM {0}), 0) + 1, false)",
                            table.name
                        );
                        client.execute(&sql, &[]).await?;
                    }
                    client.batch_execute("COMMIT").await
                })
            })
        });
        if written.is_err() {
            // Nothing stays of a copy that failed (a broken connection rolled it back already).
            let _ = self.call("abandoning the copy", |client| Box::pin(client.batch_execute("ROLLBACK")));
        }
        written.map(|()| None)
    }

    /// Inserts one page of a table's rows in the copy's transaction `xid`.
    fn write_page(&self, xid: i64, place: usize, rows: Vec<Vec<Cell>>) -> Result<(), StoreError> {
        self.in_copy(xid, move |client| {
            Box::pin(async move {
                let table = &TABLES[place];
                let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
                let marks: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
                let sql = format!(
                    "INSERT INTO {} ({}) {} VALUES ({})",
                    table.name,
                    names.join(", "),
                    if table.identity { "OVERRIDING SYSTEM VALUE" } else { "" },
                    marks.join(", ")
                );
                let insert = client.prepare(&sql).await?;
                for row in rows {
                    let values: Vec<Box<dyn ToSql + Sync + Send>> =
                        row.iter().zip(table.columns).map(|(cell, (_, kind))| value(cell, *kind)).collect();
                    let params: Vec<&(dyn ToSql + Sync)> =
                        values.iter().map(|v| v.as_ref() as &(dyn ToSql + Sync)).collect();
                    client.execute(&insert, &params).await?;
                }
                Ok(())
            })
        })
    }

    /// Runs `job` only if the connection is still in the copy's transaction `xid` (one
    /// opened again after a break is not: the copy so far was rolled back with it).
    fn in_copy(
        &self,
        xid: i64,
        job: impl for<'c> FnOnce(
            &'c mut tokio_postgres::Client,
        ) -> super::Work<'c, Result<(), tokio_postgres::Error>>
        + Send
        + 'static,
    ) -> Result<(), StoreError> {
        let same = self.call("copying every table", move |client| {
            Box::pin(async move {
                let now: i64 = client.query_one("SELECT txid_current()", &[]).await?.get(0);
                if now != xid {
                    return Ok(false);
                }
                job(client).await.map(|()| true)
            })
        })?;
        if same {
            Ok(())
        } else {
            Err(StoreError::Unreachable {
                target: self.url().shown().to_owned(),
                why: "the connection broke during the copy, so nothing was copied; run it again".to_owned(),
            })
        }
    }
}

/// A row's cells, read as `columns` say.
fn cells(columns: &[(&str, Kind)], row: &tokio_postgres::Row) -> Vec<Cell> {
    columns
        .iter()
        .enumerate()
        .map(|(i, (_, kind))| match kind {
            Kind::Int => row.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int),
            Kind::Int32 => row.get::<_, Option<i32>>(i).map_or(Cell::Null, |n| Cell::Int(n.into())),
            Kind::Text => row.get::<_, Option<String>>(i).map_or(Cell::Null, Cell::Text),
            Kind::Bool => row.get::<_, Option<bool>>(i).map_or(Cell::Null, Cell::Bool),
        })
        .collect()
}

/// A cell as a PostgreSQL value of its column's type.
fn value(cell: &Cell, kind: Kind) -> Box<dyn ToSql + Sync + Send> {
    match (cell, kind) {
        (Cell::Int(n), Kind::Int32) => Box::new(i32::try_from(*n).ok()),
        (Cell::Int(n), Kind::Bool) => Box::new(Some(*n != 0)),
        (Cell::Int(n), _) => Box::new(Some(*n)),
        (Cell::Text(text), _) => Box::new(Some(text.clone())),
        (Cell::Bool(b), _) => Box::new(Some(*b)),
        (Cell::Null, Kind::Int) => Box::new(None::<i64>),
        (Cell::Null, Kind::Int32) => Box::new(None::<i32>),
        (Cell::Null, Kind::Text) => Box::new(None::<String>),
        (Cell::Null, Kind::Bool) => Box::new(None::<bool>),
    }
}
