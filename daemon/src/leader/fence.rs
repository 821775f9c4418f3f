//! The fence a journal commit passes in its own transaction: the lease row is read
//! `FOR KEY SHARE` and must still name this daemon's epoch and holder, unexpired by the
//! database's clock at that moment (`clock_timestamp()`, not the transaction's start).
//!
//! The lock is what makes it a fence and not only a check, and its strength is chosen so
//! that it stops a take-over and nothing else:
//!
//! - The epoch is a key of `leader_lease` (a unique index, schema step 14), so a take-over,
//!   the `UPDATE` that raises it, is a key update: PostgreSQL makes it take the row's
//!   strongest lock, which conflicts with `FOR KEY SHARE`. It waits until every commit that
//!   passed the fence has ended; a fence read while a take-over is under way waits for it
//!   and then reads (and judges) the new epoch. Once a take-over has committed, every
//!   later fence under the old epoch fails. So the commits of two leaders never
//!   interleave, however long the old one was paused between its fence and its `COMMIT`.
//! - A renewal or a release changes `expires_at` only, a non-key update, which does not
//!   conflict with `FOR KEY SHARE`: it never waits for a commit, so a stream of commits
//!   cannot delay the keeper's renewals (with `FOR SHARE` it waited for every open commit,
//!   and commits that overlapped without a gap could starve it until the lease ran out).
//!   The key-share lock is carried over to the row version the renewal writes, so a
//!   take-over after it still waits for the commit.
//! - Commits of one leader do not wait for each other either.
//!
//! Without the unique index on the epoch a take-over would be a non-key update too, and
//! would slip past an open commit: the index is part of the fence
//! (`daemon/tests/leader.rs` checks both halves against a real PostgreSQL).

use tokio_postgres::{Row, Transaction};

use super::{Epoch, Holder};

/// What a commit must prove: the epoch it was made under and its holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    epoch: Epoch,
    holder: Holder,
}

impl Fence {
    /// The fence of `holder`'s tenure `epoch`.
    pub fn new(epoch: Epoch, holder: Holder) -> Self {
        Self { epoch, holder }
    }

    /// The epoch the commits are made under.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }
}

/// Why a commit may not go on: the daemon must stop acting.
#[derive(Debug, thiserror::Error)]
pub enum FenceError {
    /// Another daemon took the lease since.
    #[error(
        "fenced: this daemon's lease (epoch {ours}) was taken over by {holder} (epoch {current}); \
         it stops acting and commits nothing"
    )]
    Superseded {
        /// The epoch the commit was made under.
        ours: Epoch,
        /// The latest epoch.
        current: Epoch,
        /// Its holder.
        holder: String,
    },
    /// The lease ran out (or was released) and was not renewed.
    #[error(
        "fenced: this daemon's lease (epoch {ours}) ran out before it was renewed; it stops \
         acting and commits nothing until it holds the lease again"
    )]
    Lapsed {
        /// The epoch the commit was made under.
        ours: Epoch,
    },
    /// The check itself failed (the transaction cannot commit either).
    #[error("fenced: the lease could not be checked: {0}")]
    Sql(#[from] tokio_postgres::Error),
    /// The `leader_lease` row is gone.
    #[error("fenced: the table leader_lease has no row (it was changed by hand)")]
    NoRow,
}

/// The fence's statement: the lease row, read `FOR KEY SHARE` so that no take-over (a key
/// update of its epoch) can commit until the transaction that runs it ends.
pub const FENCE_SQL: &str =
    "SELECT epoch, holder, expires_at > clock_timestamp() FROM leader_lease FOR KEY SHARE";

/// Passes when the lease is still `fence`'s, and holds it (key-shared) until `transaction`
/// ends; run it in the transaction that writes the journal, before its commit.
pub async fn fenced(transaction: &Transaction<'_>, fence: &Fence) -> Result<(), FenceError> {
    let row = transaction.query_opt(FENCE_SQL, &[]).await?;
    judged(row.as_ref(), fence)
}

/// Passes when `row`, what [`FENCE_SQL`] answered in the committing transaction, is still
/// `fence`'s lease: the store's commit sends that statement pipelined with its rows and
/// judges its answer before it sends `COMMIT`.
pub fn judged(row: Option<&Row>, fence: &Fence) -> Result<(), FenceError> {
    let row = row.ok_or(FenceError::NoRow)?;
    let (epoch, holder, live): (i64, String, bool) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    if epoch != fence.epoch.0 || holder != fence.holder.as_str() {
        return Err(FenceError::Superseded { ours: fence.epoch, current: Epoch(epoch), holder });
    }
    if !live {
        return Err(FenceError::Lapsed { ours: fence.epoch });
    }
    Ok(())
}
