//! The lease row and the three statements on it. Each is one autocommit statement whose
//! `WHERE` decides, under the row's lock, so two daemons racing never both win:
//!
//! - take: `epoch + 1` and a new holder, only where `expires_at <= now()` (free, released
//!   or run out);
//! - renew: a later `expires_at`, only where the epoch and holder are still ours and the
//!   lease has not run out (an expired lease is taken again, with a new epoch);
//! - release: `expires_at = now()`, only for our epoch and holder.
//!
//! `now()` is the database's clock, so daemons on machines whose clocks disagree still
//! agree on when a lease ran out. A connection that broke (PostgreSQL restarted, the
//! network cut) is made again at the next call.

use std::time::{Instant, SystemTime};

use tokio_postgres::{Client, Config};

use crate::store::postgres::{StoreUrl, tls::Tls};

use super::{Epoch, Fence, Holder, LeaseError, LeaseSettings, schema};

/// A lease this daemon took: its epoch and, by the database's clock, when it runs out
/// unless renewed.
#[derive(Clone, Debug)]
pub struct Term {
    /// The fencing epoch of this tenure.
    pub epoch: Epoch,
    /// When it runs out, by the database's clock.
    pub expires_at: SystemTime,
    /// When the statement that took or last renewed it was sent, by this machine's
    /// monotonic clock: the database's `now()` for it was no earlier, so the lease lasts
    /// at least until `sent + ttl`.
    pub sent: Instant,
}

/// The lease row as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holding {
    /// The latest epoch.
    pub epoch: Epoch,
    /// Who took it last (empty before anyone did).
    pub holder: String,
    /// Whether it is held now (not expired, not released).
    pub live: bool,
}

/// What a renewal found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Still ours, extended.
    Renewed,
    /// Not ours any more.
    Lost(super::Loss),
}

/// One daemon's handle on the lease: its holder name, its settings and a connection
/// of its own (not the store's, so that a busy store never delays a renewal).
pub struct Lease {
    config: Config,
    tls: Tls,
    target: String,
    holder: Holder,
    settings: LeaseSettings,
    client: Option<Client>,
}

impl Lease {
    /// Connects to the database at `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`)
    /// and brings the lease's schema up to date. A connect that takes longer than the
    /// lease fails.
    pub async fn open(url: &str, holder: Holder, settings: LeaseSettings) -> Result<Self, LeaseError> {
        let url = StoreUrl::parse(url).map_err(|e| LeaseError::Url { reason: e.to_string() })?;
        let mut config = url.config().clone();
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(settings.ttl());
        }
        config.application_name("spellbridge-lease");
        let target = target(&config);
        let mut lease = Self { config, tls: url.tls(), target, holder, settings, client: None };
        schema::migrate(lease.client().await?).await?;
        Ok(lease)
    }

    /// Who this lease is held as.
    pub fn holder(&self) -> &Holder {
        &self.holder
    }

    /// The settings.
    pub fn settings(&self) -> LeaseSettings {
        self.settings
    }

    /// The fence for a journal commit made under `epoch`.
    pub fn fence(&self, epoch: Epoch) -> Fence {
        Fence::new(epoch, self.holder.clone())
    }

    /// Takes the lease if it is free, released or expired (the epoch goes up by one);
    /// `None` while another holder's lease runs.
    pub async fn acquire(&mut self) -> Result<Option<Term>, LeaseError> {
        let ttl = self.settings.ttl().as_secs_f64();
        let sent = Instant::now();
        let holder = self.holder.as_str().to_owned();
        let row = self
            .client()
            .await?
            .query_opt(
                "UPDATE leader_lease
                    SET epoch = epoch + 1, holder = $1, expires_at = now() + make_interval(secs => $2)
                  WHERE expires_at <= now()
              RETURNING epoch, expires_at",
                &[&holder, &ttl],
            )
            .await
            .map_err(|source| LeaseError::Sql { what: "taking the lease", source })?;
        match row {
            Some(row) => Ok(Some(Term { epoch: Epoch(row.get(0)), expires_at: row.get(1), sent })),
            None => {
                // Held by another, unless the row is gone: then say so rather than wait forever.
                self.current().await?;
                Ok(None)
            }
        }
    }

    /// Extends the lease by its ttl from the database's `now()`, if it is still ours
    /// under `epoch` and has not run out; otherwise says why not.
    pub async fn renew(&mut self, epoch: Epoch) -> Result<Renewal, LeaseError> {
        let ttl = self.settings.ttl().as_secs_f64();
        let holder = self.holder.as_str().to_owned();
        let renewed = self
            .client()
            .await?
            .execute(
                "UPDATE leader_lease SET expires_at = now() + make_interval(secs => $3)
                  WHERE epoch = $1 AND holder = $2 AND expires_at > now()",
                &[&epoch.0, &holder, &ttl],
            )
            .await
            .map_err(|source| LeaseError::Sql { what: "renewing the lease", source })?;
        if renewed == 1 {
            return Ok(Renewal::Renewed);
        }
        let now = self.current().await?;
        Ok(Renewal::Lost(if now.epoch == epoch && now.holder == holder {
            super::Loss::Lapsed
        } else {
            super::Loss::Superseded { by: now.epoch, holder: now.holder }
        }))
    }

    /// Gives the lease up at once (on a clean shutdown), so a standby need not wait for it
    /// to run out; false when it was not ours under `epoch` any more.
    pub async fn release(&mut self, epoch: Epoch) -> Result<bool, LeaseError> {
        let holder = self.holder.as_str().to_owned();
        let released = self
            .client()
            .await?
            .execute(
                "UPDATE leader_lease SET expires_at = now()
                  WHERE epoch = $1 AND holder = $2 AND expires_at > now()",
                &[&epoch.0, &holder],
            )
            .await
            .map_err(|source| LeaseError::Sql { what: "releasing the lease", source })?;
        Ok(released == 1)
    }

    /// The lease row as it is now.
    pub async fn current(&mut self) -> Result<Holding, LeaseError> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT epoch, holder, expires_at > now() FROM leader_lease", &[])
            .await
            .map_err(|source| LeaseError::Sql { what: "reading the lease", source })?
            .ok_or(LeaseError::NoRow)?;
        Ok(Holding { epoch: Epoch(row.get(0)), holder: row.get(1), live: row.get(2) })
    }

    /// The open connection, made (again) when there is none or it broke.
    async fn client(&mut self) -> Result<&mut Client, LeaseError> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            _ => {
                let (client, connection) = self
                    .config
                    .connect(self.tls.clone())
                    .await
                    .map_err(|source| LeaseError::Connect { target: self.target.clone(), source })?;
                let target = self.target.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection.await {
                        tracing::debug!(%target, error = %e, "the lease's PostgreSQL connection ended");
                    }
                });
                client
            }
        };
        Ok(self.client.insert(client))
    }
}

/// `host:port/database` of a config, for messages: never the user's password.
fn target(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or("(default database)"))
}
