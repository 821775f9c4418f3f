//! `[[game]]`: games loaded at start from WebAssembly components (issue 33).
//!
//! ```toml
//! [[game]]
//! path = "games/nim.wasm"          # relative to the config file
//! [game.options]                   # optional: given to the component's `open` as TOML
//! piles = [3, 4, 5]
//! ```
//!
//! Each file is loaded through one [`Loader`] (compiled components cached on disk by
//! their SHA-256 in `cache`, where each build's bytes are kept too: a table replays with
//! the build it opened with, [`Archive`]), so a component that does not match the world, or imports
//! what the host does not give, refuses the config with its file and the reason. Its game
//! joins the registry after the built-in games; a name another game already has is refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use spellbridge_core::{GamePlugin, Registry};
use spellbridge_wasm::{Archive, Limits, Loader, WasmGame};

/// One `[[game]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    /// The component file.
    path: PathBuf,
    /// Its options, given to `open`.
    #[serde(default)]
    options: toml::Table,
}

/// A game loaded from a component, as the config named it.
#[derive(Clone, Debug)]
pub struct ComponentSettings {
    /// The file, as resolved against the config's folder.
    pub path: PathBuf,
    /// The game (its name, the component's SHA-256).
    pub game: WasmGame,
}

/// Loads each component of `[[game]]` (`value`, taken out of the file); `registry` gains
/// their games.
pub(super) fn load(
    value: Option<toml::Value>,
    base: &Path,
    cache: &Path,
    registry: &mut Registry,
) -> Result<Vec<ComponentSettings>, String> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let toml::Value::Array(items) = value else {
        return Err(
            "`game` must be written [[game]] with path = \"games/nim.wasm\", one per component".to_owned()
        );
    };
    let loader = Loader::new(Some(cache.to_owned()), Limits::default())
        .map_err(|e| format!("[[game]]: the component engine could not start: {e}"))?;
    let archive = Arc::new(Archive::new(cache, loader));
    let mut loaded: Vec<ComponentSettings> = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let raw: RawComponent = item.try_into().map_err(|e: toml::de::Error| {
            format!(
                "[[game]] number {}: {}; write path = \"games/nim.wasm\" and, if needed, [game.options]",
                i + 1,
                e.message()
            )
        })?;
        let path = if raw.path.is_relative() { base.join(&raw.path) } else { raw.path };
        let bytes =
            std::fs::read(&path).map_err(|e| format!("[[game]] cannot read {}: {e}", path.display()))?;
        let game = archive
            .loader()
            .load(&bytes)
            .map_err(|e| format!("[[game]] {}: the component was refused: {e}", path.display()))?;
        // Its tables replay with this build after it is replaced (issue 33, item 3).
        archive.keep(game.hash(), &bytes).map_err(|e| {
            format!("[[game]] {}: cannot keep a copy in {}: {e}", path.display(), cache.display())
        })?;
        let options = toml::to_string(&raw.options)
            .map_err(|e| format!("[[game]] {}: its options: {e}", path.display()))?;
        let game = game.with_options(&options).with_archive(archive.clone());
        let name = game.name();
        if let Some(other) = loaded.iter().find(|c| c.game.name() == name) {
            return Err(format!(
                "[[game]] {} is the game `{name}`, and so is {}: load each game once",
                path.display(),
                other.path.display()
            ));
        }
        if registry.get(name).is_some() {
            return Err(format!(
                "[[game]] {} is called `{name}`, which is a built-in game's name: rename the component's game",
                path.display()
            ));
        }
        *registry = registry.clone().register(game.clone());
        loaded.push(ComponentSettings { path, game });
    }
    Ok(loaded)
}
