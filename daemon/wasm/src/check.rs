//! `spellbridge game check FILE.wasm`: loads a component as the daemon would and says
//! what it is: its name and hash, what it imports, its commands as `!help` would list
//! them (each example read against its own grammar), whether its texts have every help
//! message in both languages, and what opening a table cost against the limits. A
//! component the daemon would refuse is refused here with the same reason.

use std::fmt::Write as _;
use std::path::Path;

use spellbridge_core::grammar::parse;
use spellbridge_core::plugin::GamePlugin;

use crate::bindings::spellbridge::game::types as wit;
use crate::limits::Limits;
use crate::load::{LoadError, Loader};

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
            let _ = writeln!(report, "imports (each given by the host, fixed):");
            for import in imports {
                let _ = writeln!(report, "  {import}");
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
