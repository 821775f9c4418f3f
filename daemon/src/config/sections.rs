//! The config's sections that belong to a plugin rather than to the daemon: each game's
//! options (`[games.<name>]`, or the older top-level `[<name>]`: `[thaum]`, `[duel]`)
//! and each network kind's `[[<section>]]` tables (`[[irc]]`, `[[matrix]]`). They are
//! taken out of the file's table by the names the [`Catalogue`](super::Catalogue)
//! knows, and what is left is the daemon's own [`raw`](super::raw) config.

use std::collections::BTreeMap;

use spellbridge_core::Registry;

/// The plugin sections taken out of a config file.
#[derive(Debug, Default)]
pub(super) struct Sections {
    /// Each game's options table, with the section as written (for messages).
    pub games: BTreeMap<String, (String, toml::Table)>,
    /// Each network kind's tables, by section name, in file order.
    pub networks: BTreeMap<String, Vec<toml::Table>>,
}

/// Takes the games' and network kinds' sections out of `file`.
pub(super) fn take(
    file: &mut toml::Table,
    games: &Registry,
    network_sections: &[&str],
) -> Result<Sections, String> {
    let mut sections = Sections::default();
    let names: Vec<&str> = games.iter().map(|g| g.name()).collect();
    if let Some(value) = file.remove("games") {
        let toml::Value::Table(tables) = value else {
            let example = names.first().copied().unwrap_or("<name>");
            return Err(format!("`games` must be a table of game sections, e.g. [games.{example}]"));
        };
        for (name, value) in tables {
            let Some(game) = games.get(&name) else {
                return Err(format!(
                    "[games.{name}]: there is no game called `{name}`; the games are: {}",
                    names.join(", ")
                ));
            };
            let toml::Value::Table(table) = value else {
                return Err(format!("[games.{name}] must be a table of options, e.g. [games.{name}]"));
            };
            sections.games.insert(game.name().to_owned(), (format!("[games.{name}]"), table));
        }
    }
    // The older form: a game's section at the top level (`[thaum]`, `[duel]`).
    for name in &names {
        let Some(value) = file.remove(*name) else { continue };
        let toml::Value::Table(table) = value else {
            return Err(format!("[{name}] must be a table of options"));
        };
        if sections.games.contains_key(*name) {
            return Err(format!(
                "[{name}] and [games.{name}] both give the {name} options; keep one of them"
            ));
        }
        sections.games.insert((*name).to_owned(), (format!("[{name}]"), table));
    }
    for section in network_sections {
        let Some(value) = file.remove(*section) else { continue };
        let toml::Value::Array(items) = value else {
            return Err(format!("`{section}` must be written [[{section}]], one table per network"));
        };
        let mut tables = Vec::with_capacity(items.len());
        for item in items {
            let toml::Value::Table(table) = item else {
                return Err(format!("`{section}` must be written [[{section}]], one table per network"));
            };
            tables.push(table);
        }
        sections.networks.insert((*section).to_owned(), tables);
    }
    Ok(sections)
}
