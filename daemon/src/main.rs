//! The `spellbridge` command line: a thin layer over the library's modules.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use spellbridge::config::Settings;
use spellbridge::console::{Console, play};
use spellbridge::serve;
use spellbridge::store::audit::{self, KeyCheck};
use spellbridge::store::copy::{self, Place};
use spellbridge::store::postgres::StoreUrl;
use spellbridge::store::startup::Policy as StartPolicy;
use spellbridge::store::{Durability, OpenMode, Store};
use spellbridge_core::dice::{Commitment, DiceKey};
use spellbridge_core::{GamePlugin, Registry};
use spellbridge_core::{Language, NetworkId};
use tokio_util::sync::CancellationToken;

/// mimalloc rather than glibc's malloc: the daemon makes and drops many small strings per
/// command, and glibc's chunk consolidation was a third of its CPU under load (issue 16).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Chat games (Thaum and Duel) on Matrix and IRC.
#[derive(Debug, Parser)]
#[command(name = "spellbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The database used when `--db` is not given.
const DEFAULT_DB: &str = "spellbridge.db";

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: connect to the configured networks and host games.
    Run {
        /// The TOML config (see config/spellbridge.example.toml).
        #[arg(long, default_value = "spellbridge.toml")]
        config: PathBuf,
        /// Refuse to start when a table's snapshot does not match its journal, instead of
        /// rebuilding it from the journal.
        #[arg(long)]
        strict: bool,
    },
    /// Check a config file and print what it sets up (secrets are not shown).
    CheckConfig {
        /// The TOML config.
        #[arg(long, default_value = "spellbridge.toml")]
        config: PathBuf,
        /// Also connect to each network once (IRC: connect, TLS, register, log in;
        /// Matrix: log in) and print what happened; exits non-zero if any fails.
        #[arg(long)]
        connect: bool,
    },
    /// Play through the real router and games over stdin/stdout, with no network.
    ///
    /// Input lines: `alice: !new thaum`, `bob (dm): !cast surge fire end`, `#clock +3d`.
    Console {
        /// Seed for every random draw; the same seed replays the same game.
        #[arg(long)]
        seed: Option<u64>,
        /// Keep the games in this SQLite file: a later run with the same file continues them.
        #[arg(long)]
        db: Option<PathBuf>,
        /// At the end of input, write every table's state to this file as JSON.
        #[arg(long, value_name = "PATH")]
        state_json: Option<PathBuf>,
        /// The language games are told in: `en` (the default) or `zh-CN`.
        #[arg(long, value_name = "LANGUAGE", default_value = "en")]
        lang: Language,
    },
    /// Replay every table's journal with its recorded seeds and compare it with the stored
    /// state and its checksum, and check the outbox; lists every problem and exits
    /// non-zero if there is any.
    ///
    /// With `--table N [--key K]`: check the dice keys K that table N revealed against the
    /// commitments it announced, and re-derive every action's seed and draws from them
    /// (RULES T-10; docs/operations.md, "Checking the dice").
    Verify {
        /// The database to audit.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Audit this PostgreSQL database instead (`postgres://…`, as `[store] url`).
        #[arg(long, value_name = "URL", conflicts_with = "db")]
        store: Option<String>,
        /// Also check that each outbox row's network is configured in this TOML config
        /// (and replay the tables of its `[[game]]` components).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Check only this table, with the keys given by `--key`.
        #[arg(long, conflicts_with = "config")]
        table: Option<u64>,
        /// A dice key the table revealed (64 hex digits); give one per key for a Thaum
        /// table that ran several seasons.
        #[arg(long, value_name = "KEY", requires = "table")]
        key: Vec<String>,
    },
    /// Derive the Duel ratings (Glicko-2), Thaum standings and players' records from the
    /// journal, keep them in the database (`verify` checks them), and print them.
    Ratings {
        /// The database to read.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Read this PostgreSQL database instead (`postgres://…`, as `[store] url`).
        #[arg(long, value_name = "URL", conflicts_with = "db")]
        store: Option<String>,
        /// The daemon's TOML config, so identities linked across its networks count as one
        /// player (without it: the console's games, other networks' ids inferred).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print them as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the Matrix appservice registration file of each `[[matrix]]` with
    /// mode = "appservice" (fresh tokens from the OS generator, owner-only) and print its
    /// path: give that file to the homeserver (Synapse: app_service_config_files).
    AppserviceRegistration {
        /// The TOML config.
        #[arg(long, default_value = "spellbridge.toml")]
        config: PathBuf,
        /// Replace an existing registration file (new tokens: the homeserver must be
        /// given the new file).
        #[arg(long)]
        force: bool,
    },
    /// Games as WebAssembly components (wit/game.wit, games/nim-wasm/README.md).
    Game {
        #[command(subcommand)]
        command: GameCommand,
    },
    /// Print a table's history and current state.
    Export {
        /// The table's number (`spellbridge verify` lists them).
        table: u64,
        /// `json`, or `wiki` for MediaWiki table markup.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// The database to read.
        #[arg(long, default_value = DEFAULT_DB)]
        db: PathBuf,
        /// Read this PostgreSQL database instead (`postgres://…`, as `[store] url`).
        #[arg(long, value_name = "URL", conflicts_with = "db")]
        store: Option<String>,
        /// The daemon's TOML config, for a table of one of its `[[game]]` components.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// The store as a whole: `spellbridge store copy --from sqlite:PATH --to postgres://…`.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Copy every table (journal, snapshots, outbox, ratings, dice keys…) from one
    /// database to another, SQLite or PostgreSQL, in one transaction; then check the copy
    /// with `spellbridge verify`. Stop the daemon first.
    Copy {
        /// Where to copy from: `sqlite:PATH` or `postgres://USER:PASSWORD@HOST:PORT/DB`.
        #[arg(long, value_name = "STORE")]
        from: String,
        /// Where to copy to (created if an SQLite file does not exist); it must hold no
        /// games unless `--replace` is given.
        #[arg(long, value_name = "STORE")]
        to: String,
        /// Delete what the destination holds first (in the same transaction).
        #[arg(long)]
        replace: bool,
    },
}

#[derive(Debug, Subcommand)]
enum GameCommand {
    /// Load a game component as the daemon would and print its name, imports, commands and
    /// limits use; exits non-zero, with the reason, for one the daemon would refuse.
    Check {
        /// The component (`games/nim-wasm/out/nim.wasm`).
        file: PathBuf,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Json,
    Wiki,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { config, strict } => run(&config, strict),
        Command::CheckConfig { config, connect } => check_config(&config, connect),
        Command::Console { seed, db, state_json, lang } => console(seed, db, state_json, lang),
        Command::Verify { db, store, config, table: None, .. } => {
            verify(&Database::of(db, store.as_deref()), config.as_deref())
        }
        Command::Verify { db, store, table: Some(table), key, .. } => {
            verify_keys(&Database::of(db, store.as_deref()), table, &key)
        }
        Command::Export { table, format, db, store, config } => {
            export(table, format, &Database::of(db, store.as_deref()), config.as_deref())
        }
        Command::Ratings { db, store, config, json } => {
            ratings(&Database::of(db, store.as_deref()), config.as_deref(), json)
        }
        Command::Store { command: StoreCommand::Copy { from, to, replace } } => {
            store_copy(&from, &to, replace)
        }
        Command::AppserviceRegistration { config, force } => appservice_registration(&config, force),
        Command::Game { command: GameCommand::Check { file } } => game_check(&file),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("spellbridge: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `spellbridge game check FILE.wasm`: the report on stdout; a refusal or a problem fails.
fn game_check(file: &Path) -> anyhow::Result<ExitCode> {
    match spellbridge_wasm::check::check(file) {
        Ok(report) => {
            print!("{report}");
            Ok(ExitCode::SUCCESS)
        }
        Err(report) => anyhow::bail!("{report}"),
    }
}

fn console(
    seed: Option<u64>,
    db: Option<PathBuf>,
    state_json: Option<PathBuf>,
    language: Language,
) -> anyhow::Result<ExitCode> {
    let seed = seed.unwrap_or_else(random_seed);
    eprintln!("spellbridge console: seed {seed} (replay with --seed {seed})");
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut console = match &db {
        Some(path) => Console::with_store_in(seed, path, language)?,
        None => Console::new_in(seed, language),
    };
    let stdout = BufWriter::new(std::io::stdout().lock());
    runtime.block_on(play(&mut console, std::io::stdin().lock(), stdout, std::io::stderr()))?;
    if let Some(path) = state_json {
        let mut json = serde_json::to_string_pretty(&console.snapshot())?;
        json.push('\n');
        std::fs::write(&path, json).with_context(|| format!("writing the state to {}", path.display()))?;
    }
    std::io::stdout().flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `spellbridge appservice-registration`: the adapters read the config's appservice
/// sections and write their registrations ([`spellbridge_adapters::appservice_registrations`]).
fn appservice_registration(config: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(config)
        .with_context(|| format!("cannot read the config {}", config.display()))?;
    let file: toml::Table = toml::from_str(&text).with_context(|| format!("{}", config.display()))?;
    let written =
        spellbridge_adapters::appservice_registrations(file, config, force).map_err(anyhow::Error::msg)?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn run(config: &Path, strict: bool) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    spellbridge::logging::init(settings.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let shutdown = CancellationToken::new();
        let signals = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("signal received");
            signals.cancel();
        });
        let policy = if strict { StartPolicy::Refuse } else { StartPolicy::Rebuild };
        serve::run_with(settings, policy, shutdown).await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// SIGINT or SIGTERM.
async fn wait_for_signal() {
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(error) => {
            tracing::error!(%error, "cannot listen for SIGTERM; only Ctrl-C stops spellbridge");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

fn check_config(config: &Path, connect: bool) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(config)?;
    println!("{}: ok", config.display());
    println!("prefix: {}", settings.prefix);
    match &settings.postgres {
        Some(url) => println!("database: {url} (PostgreSQL)"),
        None => println!("database: {} (durability {:?})", settings.database.display(), settings.durability),
    }
    for component in &settings.components {
        let game = &component.game;
        println!("game {}: {} (component, sha256 {})", game.name(), component.path.display(), game.hash());
    }
    for network in &settings.networks {
        println!("{}", spellbridge::probe::describe(network.as_ref()));
    }
    if let Some(languages) = settings.languages.describe() {
        println!("languages: {languages}");
    }
    for (network, room) in &settings.hidden_rooms {
        if let Some(configured) = settings.networks.iter().find(|n| n.name() == network.as_str()) {
            println!("{}", spellbridge::config::http::describe_hidden(configured.as_ref(), room));
        }
    }
    if !connect {
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let outcomes = runtime.block_on(spellbridge::probe::connect_all(&settings));
    for outcome in &outcomes {
        println!("{}", outcome.line);
    }
    Ok(if outcomes.iter().all(|o| o.ok) { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The database a command reads: `--db PATH`, or `--store postgres://…`.
enum Database {
    File(PathBuf),
    Url(Result<Box<StoreUrl>, String>),
}

impl Database {
    fn of(db: PathBuf, store: Option<&str>) -> Database {
        match store {
            None => Database::File(db),
            Some(url) => {
                Database::Url(StoreUrl::parse(url).map(Box::new).map_err(|e| format!("--store: {e}")))
            }
        }
    }

    /// Opens it; it must exist (PostgreSQL: it is opened without the lease, reading).
    fn open(&self) -> anyhow::Result<Store> {
        Ok(match self {
            Database::File(db) => Store::open(db, OpenMode::MustExist, Durability::Full)?,
            Database::Url(url) => {
                Store::open_postgres(url.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?, None)?
            }
        })
    }

    /// How `verify` is told to read it.
    fn flag(&self) -> String {
        match self {
            Database::File(db) => format!("--db {}", db.display()),
            Database::Url(Ok(url)) => format!("--store {}", url.shown()),
            Database::Url(Err(_)) => "--store URL".to_owned(),
        }
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::File(db) => write!(f, "{}", db.display()),
            Database::Url(Ok(url)) => f.write_str(url.shown()),
            Database::Url(Err(_)) => f.write_str("the --store database"),
        }
    }
}

/// `spellbridge store copy`: what was copied, then how to check it.
fn store_copy(from: &str, to: &str, replace: bool) -> anyhow::Result<ExitCode> {
    let from = Place::parse(from).map_err(|e| anyhow::anyhow!("--from: {e}"))?;
    let to = Place::parse(to).map_err(|e| anyhow::anyhow!("--to: {e}"))?;
    let copied = copy::copy(&from, &to, replace)?;
    for (table, rows) in &copied {
        println!("{table}: {rows} rows");
    }
    let check = match &to {
        Place::Sqlite(path) => format!("--db {}", path.display()),
        Place::Postgres(url) => format!("--store {}", url.shown()),
    };
    println!("copied {from} to {to}; check it with `spellbridge verify {check}`");
    Ok(ExitCode::SUCCESS)
}

/// The games a tool replays with: the config's (with its `[[game]]` components), or the
/// built-in ones.
fn games(config: Option<&Path>) -> anyhow::Result<Registry> {
    Ok(match config {
        Some(config) => Settings::load(config)?.registry(),
        None => Registry::standard(),
    })
}

fn verify(db: &Database, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (networks, games) = match config {
        Some(config) => {
            let settings = Settings::load(config)?;
            let networks = settings.networks.iter().map(|n| NetworkId::new(n.name())).collect::<Vec<_>>();
            (Some(networks), settings.registry())
        }
        None => (None, Registry::standard()),
    };
    let store = db.open()?;
    let report = audit::verify(&store, move || games.clone(), networks.as_deref())?;
    for table in &report.tables {
        let verdict = if table.findings.is_empty() {
            "ok".to_owned()
        } else {
            table.findings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        };
        println!("table {} ({}, {} entries): {verdict}", table.table, table.game, table.entries);
    }
    for problem in &report.lobby {
        println!("lobby: BAD JOURNAL ROW: {problem}");
    }
    for row in &report.outbox {
        println!("outbox row {}: BAD: {}", row.id, row.reason);
    }
    for row in &report.set_aside {
        println!(
            "outbox row {}: set aside at an earlier start (kept in outbox_set_aside): {}",
            row.id, row.reason
        );
    }
    println!("ratings: {}", report.ratings);
    let bad_tables = report.tables.iter().filter(|t| !t.findings.is_empty()).count();
    println!(
        "{} tables checked, {bad_tables} with problems; {} outbox rows checked, {} bad; {} lobby rows bad",
        report.tables.len(),
        report.outbox_rows,
        report.outbox.len(),
        report.lobby.len()
    );
    Ok(if report.problems() == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn ratings(db: &Database, config: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let (mut scopes, games) = match config {
        Some(config) => {
            let settings = Settings::load(config)?;
            (serve::network_scopes(&settings), settings.registry())
        }
        None => (Default::default(), Registry::standard()),
    };
    scopes
        .entry(NetworkId::new(spellbridge::console::CONSOLE_NETWORK))
        .or_insert(spellbridge::identity::Scope::Bare);
    let store = db.open()?;
    let summary = store.refresh_ratings(&games, &scopes)?.with_context(|| {
        format!("the ratings cannot be derived from {db}; `spellbridge verify {}` says why", db.flag())
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", spellbridge::ratings::report::text(&summary));
    }
    Ok(ExitCode::SUCCESS)
}

fn verify_keys(db: &Database, table: u64, keys: &[String]) -> anyhow::Result<ExitCode> {
    let keys = keys
        .iter()
        .map(|key| DiceKey::from_hex(key).with_context(|| format!("--key {key}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let store = db.open()?;
    match audit::verify_keys(&store, Registry::standard(), table, &keys)? {
        KeyCheck::NoTable => {
            anyhow::bail!("{db} has no table {table}; `spellbridge verify {}` lists the tables", db.flag())
        }
        KeyCheck::Unmatched { commitment, announced } => {
            let announced: Vec<&str> = announced.iter().map(Commitment::as_str).collect();
            println!(
                "table {table}: WRONG KEY: its SHA-256 is {commitment}, which is none of the dice commitments the table announced ({}); check that you copied the key the table revealed",
                if announced.is_empty() {
                    "none: the table is from before dice keys".to_owned()
                } else {
                    announced.join(", ")
                }
            );
            Ok(ExitCode::FAILURE)
        }
        KeyCheck::Replayed { game, matched, actions, findings } => {
            let keys = if matched.is_empty() {
                "with the stored keys".to_owned()
            } else {
                let matched: Vec<&str> = matched.iter().map(Commitment::as_str).collect();
                format!("key matches commitment {}", matched.join(", "))
            };
            let (verdict, code) = if findings.is_empty() {
                (
                    format!(
                        "{actions} actions re-derived, every recorded dice seed agrees, state agrees: ok"
                    ),
                    ExitCode::SUCCESS,
                )
            } else {
                let findings: Vec<String> = findings.iter().map(ToString::to_string).collect();
                (findings.join("; "), ExitCode::FAILURE)
            };
            println!("table {table} ({game}): {keys}; {verdict}");
            Ok(code)
        }
    }
}

fn export(table: u64, format: Format, db: &Database, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let games = games(config)?;
    let store = db.open()?;
    let text = match format {
        Format::Json => audit::export_json(&store, &games, table)?
            .map(|v| serde_json::to_string_pretty(&v))
            .transpose()?,
        Format::Wiki => audit::export_wiki(&store, &games, table)?,
    };
    match text {
        Some(text) => {
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        None => {
            anyhow::bail!("{db} has no table {table}; `spellbridge verify {}` lists the tables", db.flag())
        }
    }
}

/// A seed from the standard library's per-process random keys (no extra dependency).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
