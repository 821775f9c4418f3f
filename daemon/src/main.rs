//! The `spellbridge` command line.

use std::io::{BufWriter, Write as _};
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use spellbridge::console::{Console, play};

/// Chat games (Thaum and Duel) on Matrix and IRC.
#[derive(Debug, Parser)]
#[command(name = "spellbridge", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play through the real router and games over stdin/stdout, with no network.
    ///
    /// Input lines: `alice: !new thaum`, `bob (dm): !cast surge fire end`, `#clock +3d`.
    Console {
        /// Seed for every random draw; the same seed replays the same game.
        #[arg(long)]
        seed: Option<u64>,
        /// Persist the games to this SQLite file (needs the durable store).
        #[arg(long)]
        db: Option<PathBuf>,
        /// At the end of input, write every table's state to this file as JSON.
        #[arg(long, value_name = "PATH")]
        state_json: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Console { seed, db, state_json } => console(seed, db, state_json),
    }
}

fn console(seed: Option<u64>, db: Option<PathBuf>, state_json: Option<PathBuf>) -> anyhow::Result<()> {
    if let Some(db) = db {
        anyhow::bail!(
            "--db {}: the durable store is not in this version yet, so games cannot be saved; \
             run without --db (the games then live in memory)",
            db.display()
        );
    }
    let seed = seed.unwrap_or_else(random_seed);
    eprintln!("spellbridge console: seed {seed} (replay with --seed {seed})");
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut console = Console::new(seed);
    let stdout = BufWriter::new(std::io::stdout().lock());
    runtime.block_on(play(&mut console, std::io::stdin().lock(), stdout, std::io::stderr()))?;
    if let Some(path) = state_json {
        let mut json = serde_json::to_string_pretty(&console.snapshot())?;
        json.push('\n');
        std::fs::write(&path, json).with_context(|| format!("writing the state to {}", path.display()))?;
    }
    std::io::stdout().flush()?;
    Ok(())
}

/// A seed from the standard library's per-process random keys (no extra dependency).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
