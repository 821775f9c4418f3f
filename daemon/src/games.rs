//! The games the daemon runs, as the spectator site, the board painter and the router
//! see them at once. [`Games`] is one shared handle to the registry that SIGHUP swaps
//! (a `[[game]]` component added by a reload reaches the site and the board pictures
//! with the router's next table), and [`played`] finds the game that plays a table: the
//! registry's, or for a component's table opened before a reload the build it opened
//! with ([`GamePlugin::build_of`]), so an old table is viewed, drawn and worded by its own
//! build.

use std::ops::Deref;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;
use spellbridge_core::{GamePlugin, Registry};

/// The registry in force; clones share it, and [`Games::set`] changes it for all.
#[derive(Clone, Debug)]
pub struct Games(Arc<RwLock<Arc<Registry>>>);

impl Games {
    /// A handle to `registry`.
    pub fn new(registry: Registry) -> Games {
        Games(Arc::new(RwLock::new(Arc::new(registry))))
    }

    /// The registry now (a reload after this call does not change what it returned).
    pub fn now(&self) -> Arc<Registry> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Swaps in the registry of a reloaded config, for every clone.
    pub fn set(&self, registry: Registry) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(registry);
    }
}

impl From<Registry> for Games {
    fn from(registry: Registry) -> Games {
        Games::new(registry)
    }
}

/// The game playing a table: the registry's own, or another build of it.
pub enum Played<'a> {
    /// The registry's game.
    Registered(&'a dyn GamePlugin),
    /// The build the table opened with, since replaced in the registry.
    Build(Arc<dyn GamePlugin>),
}

impl<'a> Deref for Played<'a> {
    type Target = dyn GamePlugin + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Played::Registered(game) => *game,
            Played::Build(game) => game.as_ref(),
        }
    }
}

/// The game playing a table of `game` whose snapshot state is `state` (a table's
/// [`Table::snapshot`], as the store keeps it): the build it names, when `registry` has
/// another one now. `None` for a game `registry` does not have.
///
/// [`Table::snapshot`]: spellbridge_core::Table::snapshot
pub fn played<'a>(registry: &'a Registry, game: &str, state: &Value) -> Option<Played<'a>> {
    let registered = registry.get(game)?;
    Some(registered.build_of(state).map_or(Played::Registered(registered), Played::Build))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use spellbridge_core::Registry;

    use super::{Games, played};

    #[test]
    fn a_registry_set_on_one_handle_is_the_one_every_clone_sees() {
        let games = Games::new(Registry::new(Vec::new()));
        let site = games.clone();
        assert!(site.now().get("nim").is_none());
        games.set(Registry::standard());
        assert!(site.now().get("nim").is_some(), "the clone sees the reload");
    }

    #[test]
    fn a_built_in_game_plays_its_tables_itself_and_an_unknown_game_is_none() {
        let registry = Registry::standard();
        let state = json!({"component": "0".repeat(64)});
        let nim = played(&registry, "nim", &state).map(|game| game.name());
        assert_eq!(nim, Some("nim"));
        assert!(played(&registry, "nim-wasm", &state).is_none());
    }
}
