//! `store copy` on PostgreSQL (`store::copy`): every row of the store's tables read, or
//! written in one transaction with their ids as they were (the identity columns are then
//! moved past the highest id, so new rows never reuse one).

use tokio_postgres::types::ToSql;

use super::super::StoreError;
use super::super::copy::{Cell, Dump, Kind, TABLES, first_held};
use super::PgStore;

impl PgStore {
    /// Every row of every table in [`TABLES`].
    pub(in crate::store) fn dump(&self) -> Result<Dump, StoreError> {
        self.call("reading every table", move |client| {
            Box::pin(async move {
                // One snapshot of the database: every table as of one moment.
                let client = client
                    .build_transaction()
                    .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                    .read_only(true)
                    .start()
                    .await?;
                let mut dump = Vec::new();
                for table in TABLES {
                    let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
                    let sql = format!("SELECT {} FROM {} ORDER BY 1", names.join(", "), table.name);
                    let rows = client.query(&sql, &[]).await?;
                    let cells = rows
                        .iter()
                        .map(|row| {
                            table
                                .columns
                                .iter()
                                .enumerate()
                                .map(|(i, (_, kind))| match kind {
                                    Kind::Int => row.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int),
                                    Kind::Int32 => row
                                        .get::<_, Option<i32>>(i)
                                        .map_or(Cell::Null, |n| Cell::Int(n.into())),
                                    Kind::Text => {
                                        row.get::<_, Option<String>>(i).map_or(Cell::Null, Cell::Text)
                                    }
                                    Kind::Bool => {
                                        row.get::<_, Option<bool>>(i).map_or(Cell::Null, Cell::Bool)
                                    }
                                })
                                .collect()
                        })
                        .collect();
                    dump.push(cells);
                }
                client.commit().await?;
                Ok(dump)
            })
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

    /// Writes `dump` in one transaction; returns the first table that holds rows (and
    /// writes nothing) unless `replace`, which deletes them first.
    pub(in crate::store) fn load_dump(
        &self,
        dump: &Dump,
        replace: bool,
    ) -> Result<Option<(&'static str, usize)>, StoreError> {
        let dump = dump.clone();
        self.call("copying every table", move |client| {
            Box::pin(async move {
                let transaction = client.transaction().await?;
                let mut counts = Vec::new();
                for table in TABLES {
                    let n: i64 =
                        transaction.query_one(&format!("SELECT count(*) FROM {}", table.name), &[]).await?.get(0);
                    counts.push(usize::try_from(n).unwrap_or(0));
                }
                if let Some(held) = first_held(&counts).filter(|_| !replace) {
                    return Ok(Some(held));
                }
                for (table, rows) in TABLES.iter().zip(&dump) {
                    transaction.execute(&format!("DELETE FROM {}", table.name), &[]).await?;
                    let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
                    let marks: Vec<String> = (1..=names.len()).map(|i| format!("${i}")).collect();
                    let sql = format!(
                        "INSERT INTO {} ({}) {} VALUES ({})",
                        table.name,
                        names.join(", "),
                        if table.identity { "OVERRIDING SYSTEM VALUE" } else { "" },
                        marks.join(", ")
                    );
                    let insert = transaction.prepare(&sql).await?;
                    for row in rows {
                        let values: Vec<Box<dyn ToSql + Sync + Send>> =
                            row.iter().zip(table.columns).map(|(cell, (_, kind))| value(cell, *kind)).collect();
                        let params: Vec<&(dyn ToSql + Sync)> =
                            values.iter().map(|v| v.as_ref() as &(dyn ToSql + Sync)).collect();
                        transaction.execute(&insert, &params).await?;
                    }
                    if table.identity {
                        // The next id the database gives is past every copied one.
                        let sql = format!(
                            "SELECT setval(pg_get_serial_sequence('{0}', 'id'), COALESCE((SELECT MAX(id) FROM {0}), 0) + 1, false)",
                            table.name
                        );
                        transaction.execute(&sql, &[]).await?;
                    }
                }
                transaction.commit().await?;
                Ok(None)
            })
        })
    }
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
