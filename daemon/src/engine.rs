//! The one commit path that `spellbridge run` ([`crate::serve`]) and `spellbridge
//! console` ([`crate::console`]) both drive, so they cannot drift (RULES T-10): redelivery
//! check → [`Router::handle_turn`] → group commit ([`Store::commit`]) → the queued
//! messages handed back to the driver for its couriers (or its printer) → on a failed
//! write, the games reloaded from the store and each command's sender told "that was not
//! taken…".
//!
//! Where the two drivers used to differ, the engine does one thing:
//! - A redelivery check that fails (the store could not be read) is not taken as "new":
//!   the commit records message ids with `INSERT OR IGNORE`, so nothing later would catch
//!   a move applied twice. The message is not handled and its sender is told to try again,
//!   as after a failed write; a move is applied at most once.
//! - Only commands are apologised for: a command is what a player waits an answer to;
//!   plain chat that was not relayed has nothing to undo.
//! - A batch that changed nothing (questions, refusals, plain chat) and keeps nothing is
//!   answered without a commit (no fsync); its message ids are not recorded, so a
//!   redelivered question may be answered twice, which is harmless.
//! - If the games cannot be reloaded after a failed write, the router in memory holds
//!   moves the store does not: going on would announce states the journal cannot replay.
//!   The engine reports [`EngineError::Reload`] and the driver stops (a restart loads and
//!   checks the store).
//! - Ratings and records are committed with the entries that change them (a game's end,
//!   a link): the router folds each entry as it journals it and the engine keeps the new
//!   ratings in `meta` in the same transaction.
//!
//! After each commit the engine says which tables it changed on a broadcast
//! ([`Engine::notify_changes`]), for the spectator site's live updates: sending never
//! waits, and a listener that falls behind only misses notices (it reads the store).

use spellbridge_core::locale::{self, Args};
use spellbridge_core::{Destination, Inbound, Language, Registry, Timestamp};

use tokio::sync::broadcast;

use crate::courier::Learned;
use crate::journal::TableId;
use crate::router::{Router, RouterConfig};
use crate::store::{MessageKey, Queued, Step, Store, StoreError};
use crate::turn::{Happened, Outbound};

/// Makes the game registry afresh (a [`Registry`] is rebuilt to reload the router).
pub type RegistryFn = Box<dyn Fn() -> Registry + Send + Sync>;

/// The router and, when there is one, the store it commits to.
pub struct Engine {
    router: Router,
    store: Option<Store>,
    registry: RegistryFn,
    /// The router's one config: what a reload after a failed write is made with.
    config: RouterConfig,
    /// Told each table a commit changed (the spectator site), if anyone listens.
    changes: Option<broadcast::Sender<TableId>>,
}

/// What became of one inbound message of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Already handled once (the network redelivered it): ignored.
    Redelivered,
    /// Its redelivery check could not read the store: not handled, its sender told.
    Unchecked,
    /// Handled by the router.
    Handled(Happened),
}

/// How a batch's changes were kept.
#[derive(Debug)]
pub enum Saved {
    /// Nothing to keep: answered without a commit (also every batch of a storeless engine).
    NothingToKeep,
    /// Committed in one transaction before anything was handed out.
    Committed,
    /// The commit failed: the games were reloaded from the store (the batch's moves are
    /// undone) and each command's sender is told.
    Failed(StoreError),
}

/// One batch handled.
#[derive(Debug)]
pub struct Batch {
    /// Each inbound message's fate, in the batch's order.
    pub fates: Vec<Fate>,
    /// What to send, in order; `id` is the outbox row (`-1`: not in the outbox).
    pub queued: Vec<Queued>,
    /// Whether the batch was kept.
    pub saved: Saved,
    /// True when a redelivery check could not read the store.
    pub unchecked: bool,
}

/// The engine cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// After a failed write the games could not be reloaded from the store either.
    #[error(
        "the games could not be reloaded from the store after a failed write ({reload}; the write failed with: {write}); \
         stop, run `spellbridge verify` on the database, and start again"
    )]
    Reload {
        /// Why the write failed.
        write: Box<StoreError>,
        /// Why the reload failed.
        reload: Box<StoreError>,
    },
}

impl Engine {
    /// An engine over `router` committing to `store` (`None`: games kept in memory only).
    /// `registry` and `config` (the config `router` was made with) rebuild the router
    /// from the store after a failed write.
    pub fn new(router: Router, store: Option<Store>, registry: RegistryFn, config: RouterConfig) -> Engine {
        Engine { router, store, registry, config, changes: None }
    }

    /// The router (its tables, timers and snapshot).
    pub fn router(&self) -> &Router {
        &self.router
    }

    /// The router's config, as the last [`Engine::reconfigure`] set it.
    pub fn config(&self) -> &RouterConfig {
        &self.config
    }

    /// Applies a new config (and registry): to the router now, and to the router a failed
    /// write reloads from the store (SIGHUP, a bridge's alias looked up, the transports'
    /// facts once they run). The one place the router's config changes.
    pub fn reconfigure(&mut self, registry: RegistryFn, config: RouterConfig) {
        self.router.reconfigure(config.clone());
        self.router.set_games(registry());
        self.registry = registry;
        self.config = config;
    }

    /// The store, if there is one.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// Marks outbox rows sent (the couriers reported them: [`Store::sent_all`]); without a
    /// store there is nothing to mark.
    pub fn sent_all(&mut self, ids: &[i64]) -> Result<(), StoreError> {
        self.store.as_mut().map_or(Ok(()), |store| store.sent_all(ids))
    }

    /// After each commit, sends the number of every table it changed to `changes`.
    pub fn notify_changes(&mut self, changes: broadcast::Sender<TableId>) {
        self.changes = Some(changes);
    }

    /// Handles a batch of inbound messages and commits it in one transaction; `meta` is
    /// kept with it (the console's clock).
    pub fn handle_batch(
        &mut self,
        batch: &[Inbound],
        now: Timestamp,
        meta: Vec<(String, String)>,
    ) -> Result<Batch, EngineError> {
        let mut seen_here = std::collections::HashSet::new();
        let mut fates = Vec::with_capacity(batch.len());
        let mut steps = Vec::with_capacity(batch.len());
        let mut apologies = Vec::new();
        let mut handled = Vec::new();
        let mut keep = !meta.is_empty();
        let mut unchecked = false;
        for inbound in batch {
            let key =
                inbound.message_id.clone().map(|id| MessageKey { network: inbound.network.clone(), id });
            if let Some(key) = &key {
                let again = !seen_here.insert((key.network.clone(), key.id.clone()));
                let stored = match &self.store {
                    Some(store) if !again => store.seen(key),
                    _ => Ok(false),
                };
                match stored {
                    Ok(stored) if again || stored => {
                        tracing::debug!(network = %key.network, id = %key.id, "redelivered message ignored");
                        fates.push(Fate::Redelivered);
                        continue;
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::error!(network = %key.network, id = %key.id, %error, "could not check for a redelivery; the message is not taken and its sender told");
                        unchecked = true;
                        apologies.push(not_taken(inbound, &error, self.router.language_of(inbound)));
                        fates.push(Fate::Unchecked);
                        continue;
                    }
                }
            }
            let span = tracing::debug_span!(
                "message",
                network = %inbound.network,
                room = %inbound.room,
                player = %inbound.sender,
                outcome = tracing::field::Empty,
            );
            let turn = span.in_scope(|| self.router.handle_turn(inbound, now));
            span.record("outcome", happened_name(&turn.happened));
            span.in_scope(|| tracing::debug!("message handled"));
            // Relayed chat is kept like a move: it must reach the other rooms exactly once.
            let relayed = matches!(turn.happened, Happened::Chat { bridge: Some(_) });
            keep |= relayed;
            let records = self.router.take_journal();
            let mut meta = self.ratings_meta();
            let committing = !records.is_empty() || !meta.is_empty();
            meta.extend(self.names_meta(committing));
            let fleeting = records.is_empty() && meta.is_empty() && !relayed;
            steps.push(Step { message: key, records, outbound: turn.outbound, meta, fleeting });
            if turn.happened.is_command() {
                handled.push(inbound);
            }
            fates.push(Fate::Handled(turn.happened));
        }
        if let Some(last) = steps.last_mut() {
            last.meta.extend(meta);
        } else if !meta.is_empty() {
            steps.push(Step { meta, ..Step::default() });
        }
        let (mut queued, saved) = self.commit(steps, keep)?;
        self.keep_heard();
        if let Saved::Failed(error) = &saved {
            let router = &self.router;
            apologies.extend(
                handled.into_iter().map(|inbound| not_taken(inbound, error, router.language_of(inbound))),
            );
        }
        queued.extend(apologies.into_iter().map(|outbound| Queued { id: -1, outbound }));
        Ok(Batch { fates, queued, saved, unchecked })
    }

    /// Fires the timers due at `now` and commits what they did; `meta` is kept with it.
    pub fn tick(
        &mut self,
        now: Timestamp,
        meta: Vec<(String, String)>,
    ) -> Result<(Vec<Queued>, Saved), EngineError> {
        let outbound = self.router.tick(now);
        let keep = !meta.is_empty();
        let records = self.router.take_journal();
        let mut meta = meta;
        meta.extend(self.ratings_meta());
        let committing = !records.is_empty() || !meta.is_empty();
        meta.extend(self.names_meta(committing));
        let step = Step { records, outbound, meta, ..Step::default() };
        self.commit(vec![step], keep)
    }

    /// The ratings to keep with the entries just taken, when they changed them (a game
    /// ended): in the same transaction, so the stored ratings always match the journal.
    fn ratings_meta(&mut self) -> Vec<(String, String)> {
        let changed = self.router.take_ratings();
        changed.map(|text| (crate::store::ratings::META_KEY.to_owned(), text)).into_iter().collect()
    }

    /// The names players are shown under, when they changed, to keep with entries being
    /// committed anyway (for the site, and `!top` after a restart): a name alone never
    /// makes a commit.
    fn names_meta(&mut self, committing: bool) -> Vec<(String, String)> {
        if !committing {
            return Vec::new();
        }
        let names = self.router.take_names();
        names.map(|text| (crate::router::SHOWN_NAMES_KEY.to_owned(), text)).into_iter().collect()
    }

    /// Takes what the couriers learned by sending ([`Learned`]): relayed lines' ids go
    /// to the router and the store (so replies and reactions to them name their speaker,
    /// after a restart too); a private chat opened for a player is said in the room where
    /// they last asked, returned to be sent (not kept in the outbox: it only says where to
    /// look). A failed write is logged; the ids stay known until the next start.
    pub fn learn(&mut self, learned: Vec<Learned>, now: Timestamp) -> Vec<Queued> {
        let mut lines = Vec::new();
        let mut told = Vec::new();
        for news in learned {
            match news {
                Learned::Relayed { network, id, line } => {
                    self.router.learn_relayed(&network, &id, line.clone());
                    lines.push((network, id, line));
                }
                Learned::OpenedPrivate { network, player, link } => {
                    tracing::info!(network = %network, player = %player, "opened a private chat with a player who had none");
                    told.extend(self.router.opened_private(&network, &player, link.as_deref(), now));
                }
            }
        }
        if let Some(store) = self.store.as_mut()
            && !lines.is_empty()
            && let Err(error) = store.keep_relayed(&lines)
        {
            tracing::error!(%error, "could not keep the ids of relayed lines; replies to them will not name their speaker after a restart");
        }
        told.into_iter().map(|outbound| Queued { id: -1, outbound }).collect()
    }

    /// Keeps the speakers' latest lines the router heard (what an IRC `alice: hi` answers
    /// as a Matrix reply), so a restart does not forget them; a failed write is logged.
    fn keep_heard(&mut self) {
        let heard = self.router.take_heard();
        if let Some(store) = self.store.as_mut()
            && !heard.is_empty()
            && let Err(error) = store.keep_latest(&heard)
        {
            tracing::warn!(%error, "could not keep the speakers' latest lines; after a restart a line addressing them by a bare name is plain chat");
        }
    }

    /// The tables whose picture is to be posted since the last call (their moves are
    /// committed; after a failed write the reloaded router has none).
    pub fn take_boards(&mut self) -> Vec<TableId> {
        self.router.take_boards()
    }

    /// Writes the snapshot of every table behind its journal (on a clean shutdown, so the
    /// next start replays nothing; see `Store::write_snapshots`).
    pub fn write_snapshots(&mut self) -> Result<(), StoreError> {
        match self.store.as_mut() {
            Some(store) => store.write_snapshots(&self.router),
            None => Ok(()),
        }
    }

    /// Commits `steps` (unless nothing in them is to be kept) and returns what to send.
    fn commit(&mut self, steps: Vec<Step>, keep: bool) -> Result<(Vec<Queued>, Saved), EngineError> {
        let unsaved = |steps: Vec<Step>| -> Vec<Queued> {
            steps.into_iter().flat_map(|s| s.outbound).map(|outbound| Queued { id: -1, outbound }).collect()
        };
        let Some(store) = self.store.as_mut() else { return Ok((unsaved(steps), Saved::NothingToKeep)) };
        if !keep && steps.iter().all(|step| step.records.is_empty()) {
            return Ok((unsaved(steps), Saved::NothingToKeep));
        }
        let tables: std::collections::BTreeSet<TableId> =
            steps.iter().flat_map(|s| &s.records).filter_map(|r| r.entry.table()).collect();
        match store.commit(&self.router, steps) {
            Ok(queued) => {
                if let Some(changes) = &self.changes {
                    for table in tables {
                        // No listener is not an error; a full channel drops its oldest notice.
                        let _ = changes.send(table);
                    }
                }
                Ok((queued, Saved::Committed))
            }
            Err(write) => {
                tracing::error!(error = %write, "could not save; the moves are undone and the players told");
                match store.load((self.registry)(), self.config.clone()) {
                    Ok(router) => {
                        self.router = router;
                        Ok((Vec::new(), Saved::Failed(write)))
                    }
                    Err(reload) => {
                        Err(EngineError::Reload { write: Box::new(write), reload: Box::new(reload) })
                    }
                }
            }
        }
    }
}

/// "That was not taken": to a message's sender, where they said it, in `language` (the
/// room's, or privately the sender's). The reason is the kind of failure in the player's
/// words ([`crate::store::outage`]): the error itself, which names the database, is logged.
fn not_taken(inbound: &Inbound, error: &StoreError, language: Language) -> Outbound {
    let reason = crate::store::outage::reason(error, language);
    let args = Args::new().mention("player", &inbound.sender).text("reason", reason);
    let text = locale::rich(language, "notice-not-taken", &args);
    let to = if inbound.private {
        Destination::Private(inbound.sender.clone())
    } else {
        Destination::Room(inbound.room.clone())
    };
    Outbound { network: inbound.network.clone(), to, message: text.into() }
}

/// How a [`Happened`] reads in the logs.
pub fn happened_name(happened: &Happened) -> &'static str {
    match happened {
        Happened::Chat { bridge: Some(_) } => "relayed",
        Happened::Chat { bridge: None } => "chat",
        Happened::Command(outcome) => outcome.as_str(),
        Happened::Dropped => "dropped",
        Happened::TooFast { .. } => "too fast",
    }
}

#[cfg(test)]
mod tests {
    //! Both drivers over a store that fails: a database locked by another connection
    //! (writes fail, reads go on, as `tests/store.rs` does it), and one whose
    //! redelivery table cannot be read.

    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use spellbridge_core::{Inbound, NetworkId, PlayerId, Registry, RoomId, Timestamp};
    use tokio::sync::mpsc;

    use super::{Engine, Saved};
    use crate::console::{CONSOLE_NETWORK, CONSOLE_ROOM, Console, run_script_with_db};
    use crate::metrics::Metrics;
    use crate::store::{Durability, MessageKey, OpenMode, Store};

    /// How the store is broken before alice's next command.
    #[derive(Clone, Copy)]
    enum Broken {
        /// Another connection holds the write lock: the commit fails.
        Locked,
        /// The redelivery table is gone: the redelivery check fails.
        Unreadable,
    }

    impl Broken {
        /// The id of alice's next command. With the redelivery table gone, one the store
        /// already holds: a new id is answered from memory (`store::seen`), a held one
        /// must be checked in the table.
        fn message_id(self) -> &'static str {
            match self {
                Broken::Locked => "9",
                Broken::Unreadable => "8",
            }
        }
    }

    /// A database with a Thaum table where alice has 1 coin, given by message 8.
    fn database(dir: &Path) -> PathBuf {
        let db = dir.join("games.db");
        run_script_with_db("alice: !new thaum\n@msgid=8 alice: !coins alice +1\n", 1, &db)
            .expect("the script plays");
        db
    }

    /// Breaks the store at `db`; the returned connection holds the lock while it lives.
    fn break_store(db: &Path, how: Broken) -> rusqlite::Connection {
        let holder = rusqlite::Connection::open(db).expect("sqlite opens");
        match how {
            Broken::Locked => holder.execute_batch("BEGIN EXCLUSIVE;").expect("lock the database"),
            Broken::Unreadable => holder.execute_batch("DROP TABLE seen_messages;").expect("drop the table"),
        }
        holder
    }

    fn coins(state: &serde_json::Value) -> u64 {
        state["tables"][0]["state"]["players"]["alice"]["coins"].as_u64().unwrap_or(0)
    }

    /// The daemon's engine on the database at `db`.
    fn engine_on(db: &Path) -> Engine {
        let store = Store::open(db, OpenMode::MustExist, Durability::Full).expect("store opens");
        let options = Console::options(1);
        let router = store.load(Registry::standard(), options.clone()).expect("loads");
        Engine::new(router, Some(store), Box::new(Registry::standard), options)
    }

    /// `spellbridge run`'s batch path: what alice's command is answered, and alice's coins.
    fn daemon_answers(how: Broken) -> (Vec<String>, u64) {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = database(dir.path());
        let mut engine = engine_on(&db);
        let _holder = break_store(&db, how);
        let (courier, mut sent) = mpsc::unbounded_channel();
        let couriers = BTreeMap::from([(NetworkId::new(CONSOLE_NETWORK), courier)]);
        let inbound = Inbound {
            message_id: Some(how.message_id().into()),
            ..Inbound::new(
                NetworkId::new(CONSOLE_NETWORK),
                RoomId::new(CONSOLE_ROOM),
                PlayerId::new("alice"),
                "!coins alice +1",
            )
        };
        let metrics = Metrics::new();
        crate::serve::handle_batch(&mut engine, &couriers, vec![(inbound, Instant::now())], &metrics)
            .expect("the daemon goes on");
        let mut answers = Vec::new();
        while let Ok(queued) = sent.try_recv() {
            let to = match &queued.outbound.to {
                spellbridge_core::Destination::Room(room) => room.to_string(),
                spellbridge_core::Destination::Private(player) => format!("dm:{player}"),
            };
            let text = queued.outbound.message.text.plain().replace(&db.display().to_string(), "DB");
            answers.push(format!("[{to}] {text}"));
        }
        (answers, coins(&engine.router().snapshot()))
    }

    /// `spellbridge console --db`: what alice's command is answered, and alice's coins.
    fn console_answers(how: Broken) -> (Vec<String>, u64) {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = database(dir.path());
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let mut console = Console::with_store(1, &db).expect("opens");
        let _holder = break_store(&db, how);
        let line = format!("@msgid={} alice: !coins alice +1", how.message_id());
        let printed = runtime.block_on(console.feed(&line)).expect("a readable line");
        let printed = printed.iter().map(|line| line.replace(&db.display().to_string(), "DB")).collect();
        (printed, coins(&console.snapshot()))
    }

    #[test]
    fn a_failed_write_is_undone_and_apologised_for_alike_by_daemon_and_console() {
        let (daemon, daemon_coins) = daemon_answers(Broken::Locked);
        let (console, console_coins) = console_answers(Broken::Locked);
        assert_eq!((daemon_coins, console_coins), (1, 1), "the move was undone in both");
        assert_eq!(daemon.len(), 1, "one apology: {daemon:?}");
        assert!(
            daemon[0].starts_with("[console] alice: that was not taken")
                && daemon[0].contains("the store is busy"),
            "{daemon:?}"
        );
        assert_eq!(console, daemon, "the console prints what the daemon sends");
    }

    #[test]
    fn a_failed_redelivery_check_is_not_taken_alike_by_daemon_and_console() {
        let (daemon, daemon_coins) = daemon_answers(Broken::Unreadable);
        let (console, console_coins) = console_answers(Broken::Unreadable);
        // Before the engine, the daemon took such a message as new and handled it.
        assert_eq!((daemon_coins, console_coins), (1, 1), "nothing was applied");
        assert_eq!(daemon.len(), 1, "one apology: {daemon:?}");
        assert!(daemon[0].starts_with("[console] alice: that was not taken"), "{daemon:?}");
        assert_eq!(console, daemon, "the console prints what the daemon sends");
    }

    #[test]
    fn a_storeless_engine_answers_without_committing() {
        let options = Console::options(1);
        let router = crate::router::Router::new(Registry::standard(), options.clone());
        let mut engine = Engine::new(router, None, Box::new(Registry::standard), options);
        let inbound = Inbound::new(
            NetworkId::new(CONSOLE_NETWORK),
            RoomId::new(CONSOLE_ROOM),
            PlayerId::new("alice"),
            "!new thaum",
        );
        let batch = engine.handle_batch(&[inbound], Timestamp::CONSOLE_EPOCH, Vec::new()).expect("goes on");
        assert!(matches!(batch.saved, Saved::NothingToKeep), "{:?}", batch.saved);
        assert!(!batch.queued.is_empty() && batch.queued.iter().all(|q| q.id == -1), "{:?}", batch.queued);
    }

    #[test]
    fn only_what_changed_something_goes_through_the_outbox_and_the_seen_ids() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = database(dir.path());
        let mut engine = engine_on(&db);
        let said = |id: &str, text: &str| Inbound {
            message_id: Some(id.into()),
            ..Inbound::new(
                NetworkId::new(CONSOLE_NETWORK),
                RoomId::new(CONSOLE_ROOM),
                PlayerId::new("alice"),
                text,
            )
        };
        let batch = engine
            .handle_batch(
                &[said("a", "!status"), said("b", "!coins alice +1"), said("c", "!coins alice lots")],
                Timestamp::CONSOLE_EPOCH,
                Vec::new(),
            )
            .expect("goes on");
        assert!(matches!(batch.saved, Saved::Committed), "{:?}", batch.saved);
        let kept: Vec<(i64, String)> =
            batch.queued.iter().map(|q| (q.id, q.outbound.message.text.plain())).collect();
        assert_eq!(kept.len(), 3, "{kept:?}");
        assert_eq!(kept[0].0, -1, "the status is only an answer: {kept:?}");
        assert!(kept[1].0 >= 0, "the coins' announcement is kept until sent: {kept:?}");
        assert_eq!(kept[2].0, -1, "a refusal changed nothing: {kept:?}");
        let store = engine.store().expect("a store");
        let seen = |id: &str| {
            store
                .seen(&MessageKey { network: NetworkId::new(CONSOLE_NETWORK), id: id.into() })
                .expect("reads")
        };
        assert_eq!((seen("a"), seen("b"), seen("c")), (false, true, false), "only the move's id is kept");
        assert_eq!(store.pending().expect("reads").len(), 1, "one message waits in the outbox");
    }

    /// Issue 30: under load the daemon answered `!status` 24 times slower with durability
    /// "full" than "normal", as if questions waited for the disk. Batches of questions and
    /// refusals, as the IRC bench sends them (from several nicks without accounts, each
    /// line with the server's msgid), commit nothing that syncs.
    #[test]
    fn questions_and_refusals_make_no_synced_commit() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("games.db");
        let store = Store::open(&db, OpenMode::CreateIfMissing, Durability::Full).expect("store opens");
        let commits = store.commits();
        let options = Console::options(1);
        let router = crate::router::Router::new(Registry::standard(), options.clone());
        let mut engine = Engine::new(router, Some(store), Box::new(Registry::standard), options);
        let mut id = 0;
        let mut said = |nick: &str, text: &str| {
            id += 1;
            Inbound {
                message_id: Some(format!("msgid-{id}")),
                verified: false,
                ..Inbound::new(NetworkId::new("bench"), RoomId::new("#sb-full"), PlayerId::new(nick), text)
            }
        };
        let now = Timestamp::CONSOLE_EPOCH;
        let opening = [said("player", "!new thaum"), said("player", "!join")];
        engine.handle_batch(&opening, now, Vec::new()).expect("goes on");
        // Each crowd nick's first command sets where it is at home (a journal entry).
        let first: Vec<Inbound> = (0..4).map(|n| said(&format!("crowd{n}"), "!status")).collect();
        engine.handle_batch(&first, now, Vec::new()).expect("goes on");
        let before = commits.counted();
        for round in 0..50 {
            let batch: Vec<Inbound> = (0..4)
                .map(|n| {
                    said(&format!("crowd{n}"), if round % 5 == 4 { "!coins crowd0 +1" } else { "!status" })
                })
                .collect();
            let done = engine.handle_batch(&batch, now, Vec::new()).expect("goes on");
            assert!(matches!(done.saved, Saved::NothingToKeep), "round {round}: {:?}", done.saved);
            assert_eq!(done.queued.len(), 4, "one answer each: {:?}", done.queued);
        }
        let after = commits.counted();
        assert_eq!(after.synced, before.synced, "no synced commit for 200 questions and refusals");
    }
}
