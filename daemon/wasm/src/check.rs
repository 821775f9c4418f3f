//! `spellbridge game check FILE.wasm`: loads a component as the daemon would and says
//! what it is: its name and hash, what it imports, its commands as `!help` would list
//! them (each example read against its own grammar), whether its texts have every help
//! message in both languages, and what opening a table cost against the limits. If the
//! component ships an example transcript (`NAME.transcript` beside `NAME.wasm`,
//! [`crate::transcript`]), it plays it step by step and fails at the first step whose
//! result differs. It ends with the fuel per call (most, average) and the most memory an
//! instance held. A component the daemon would refuse is refused here with the same
//! reason.

use std::fmt::Write as _;
use std::path::Path;

use spellbridge_core::grammar::parse;
use spellbridge_core::plugin::GamePlugin;

use crate::bindings::spellbridge::game::types as wit;
use crate::limits::Limits;
use crate::load::{LoadError, Loader};
use crate::transcript;

/// The report on the component at `path`, or why it would not load. Problems that do
/// not stop it loading (an example that does not read, a missing help text) are listed
/// and make the check fail too (`Err`, with the report).
pub fn check(path: &Path) -> Result<String, String> {
    let limits = Limits::default();
    let loader = Loader::new(None, limits).map_err(|e| e.to_string())?;
    let game = loader.load_file(path).map_err(|e: LoadError| format!("{}: refused: {e}", path.display()))?;
    let mut report = String::new();
    let mut problems = Vec::new();
    let _ = writeln!(report, "{}: game `{}`, world spellbridge:game@1.0.0", path.display(), game.name());
    let _ = writeln!(report, "  sha256 {}", game.hash());
    let _ = writeln!(report, "  {}", game.summary());
    match game.imports() {
        [] => {
            let _ = writeln!(report, "imports: none");
        }
        imports => {
            let _ = writeln!(report, "imports (each given by the host):");
            for import in imports {
                let given = if import.starts_with("wasi:") { "empty WASI 0.2" } else { "the world's types" };
                let _ = writeln!(report, "  {import} ({given})");
            }
        }
    }
    let _ = writeln!(report, "commands:");
    for command in game.commands() {
        let usage: Vec<&str> = command.args.iter().map(|a| a.shown).filter(|s| !s.is_empty()).collect();
        let aliases = if command.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", command.aliases.join(", "))
        };
        let usage: String = usage.iter().map(|shown| format!(" {shown}")).collect();
        let _ = writeln!(report, "  !{}{usage}{aliases}: {}", command.name, command.summary);
        if !command.example.is_empty() {
            let words: Vec<&str> = command.example.split_whitespace().collect();
            if let Err(error) = parse(command, &words) {
                problems.push(format!(
                    "the example of `{}`, `{}`, does not read: {error:?}",
                    command.name, command.example
                ));
            }
        }
    }
    for (command, id) in game.help_ids() {
        if !game.has_text(id) {
            problems.push(format!("the help of `{command}`, message `{id}`, is missing in a language"));
        }
    }
    let players = vec!["alice@check".to_owned(), "bob@check".to_owned()];
    let opened = game.runner().call_counted(|store, g| g.call_open(store, &players, "", 0, 0));
    match opened {
        Ok((Ok(wit::Outcome { state, news }), fuel)) => {
            let _ = writeln!(
                report,
                "opening a table: {} bytes of state, {} news, {fuel} of {} fuel",
                state.len(),
                news.len(),
                limits.fuel
            );
        }
        Ok((Err(refusal), _)) => {
            problems.push(format!("opening a table for two was refused: `{}`", refusal.id))
        }
        Err(error) => problems.push(format!("opening a table failed: {error}")),
    }
    let beside = path.with_extension("transcript");
    match std::fs::read_to_string(&beside) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let _ = writeln!(report, "transcript: none ({} not found)", beside.display());
        }
        Err(error) => problems.push(format!("cannot read the transcript {}: {error}", beside.display())),
        Ok(text) => match transcript::read(&text) {
            Err(error) => {
                problems.push(format!("the transcript {} does not read: {error}", beside.display()))
            }
            Ok(steps) => {
                let _ = writeln!(report, "transcript {} ({} steps):", beside.display(), steps.steps.len());
                match transcript::play(&game, &steps, &mut report) {
                    Ok(()) => {
                        let _ = writeln!(report, "transcript: every step as expected");
                    }
                    Err(error) => problems.push(format!("transcript: {error}")),
                }
            }
        },
    }
    let usage = game.runner().usage();
    let _ = writeln!(
        report,
        "fuel per call: at most {}, on average {} ({} calls); memory: at most {} KiB in one instance",
        usage.fuel_max,
        usage.fuel.checked_div(usage.calls).unwrap_or(0),
        usage.calls,
        usage.memory_peak >> 10
    );
    let _ = writeln!(
        report,
        "limits per call: {} fuel, {} ms, {} MiB of memory, {} KiB per state or view, {} news",
        limits.fuel,
        Limits::TICK.as_millis() * u128::from(limits.ticks),
        limits.memory >> 20,
        limits.output >> 10,
        limits.news
    );
    if problems.is_empty() {
        let _ = writeln!(report, "ok");
        Ok(report)
    } else {
        for problem in problems {
            let _ = writeln!(report, "problem: {problem}");
        }
        Err(report)
    }
}
