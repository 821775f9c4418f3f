//! Loading a game component: the engine (fuel, epochs, the component model, nothing
//! else), the check of what the component imports, and the disk cache of compiled
//! components, kept by the SHA-256 of the component's bytes.
//!
//! The world imports nothing but its own types (`spellbridge:game/types`, which hold no
//! function). A component whose language runtime imports WASI 0.2 (`wasi:cli`,
//! `wasi:clocks`, `wasi:filesystem`, `wasi:io`, `wasi:random`, `wasi:sockets`) gets an
//! empty one ([`crate::wasi`]): no files, environment or network, and clocks and random
//! sources fixed so that a replay is the same game. Any other import is refused at load,
//! with its name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::limits::Limits;
use crate::plugin::WasmGame;
use crate::run::Runner;
use crate::wasi;

/// The world's own types interface, the one import every component may have.
const WORLD_TYPES: &str = "spellbridge:game/types@1.0.0";

/// Why a component was not loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The bytes are not a WebAssembly component wasmtime can compile.
    #[error("not a WebAssembly component: {0}")]
    Compile(String),
    /// It imports something the host does not give games.
    #[error(
        "it imports `{0}`, which a game may not have: games get only their world's types and an empty \
         WASI 0.2 (wasi:cli, clocks, filesystem, io, random, sockets: no files, network or environment); \
         rebuild it without that import"
    )]
    Import(String),
    /// It does not export the world `spellbridge:game@1.0.0` as the host reads it.
    #[error("it does not match the world spellbridge:game@1.0.0 (wit/game.wit): {0}")]
    World(String),
    /// Its `info` or `texts` were refused.
    #[error("its description was refused: {0}")]
    Info(String),
}

/// Loads game components into one engine.
pub struct Loader {
    engine: Engine,
    cache: Option<PathBuf>,
    limits: Limits,
}

impl Loader {
    /// A loader whose calls get `limits`, caching compiled components in `cache` (a
    /// folder of the daemon's own, made if missing), or nowhere.
    pub fn new(cache: Option<PathBuf>, limits: Limits) -> Result<Loader, LoadError> {
        let mut config = Config::new();
        config.wasm_component_model(true).consume_fuel(true).epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| LoadError::Compile(e.to_string()))?;
        tick(&engine);
        Ok(Loader { engine, cache, limits })
    }

    /// Loads the component in the file at `path`.
    pub fn load_file(&self, path: &Path) -> Result<WasmGame, LoadError> {
        let bytes = std::fs::read(path).map_err(|error| LoadError::Read { path: path.to_owned(), error })?;
        self.load(&bytes)
    }

    /// Loads a component from its bytes (binary, or the component text format).
    pub fn load(&self, bytes: &[u8]) -> Result<WasmGame, LoadError> {
        let hash = hex(&Sha256::digest(bytes));
        let component = self.compile(bytes, &hash)?;
        let mut linker = Runner::linker(&self.engine);
        let component_type = component.component_type();
        let mut imports = Vec::new();
        for (name, _) in component_type.imports(&self.engine) {
            if name == WORLD_TYPES {
                // The world's own types: an import that holds no function.
                linker.instance(name).map_err(|e| LoadError::World(format!("{name}: {e:#}")))?;
            } else if !wasi::is_wasi(name) {
                return Err(LoadError::Import(name.to_owned()));
            }
            imports.push(name.to_owned());
        }
        let uses_wasi = imports.iter().any(|name| wasi::is_wasi(name));
        if uses_wasi {
            wasi::add(&mut linker).map_err(|e| LoadError::World(format!("the empty WASI: {e:#}")))?;
        }
        let pre = linker.instantiate_pre(&component).map_err(|e| missing(&format!("{e:#}")))?;
        let runner = Runner::new(self.engine.clone(), pre, self.limits, uses_wasi)
            .map_err(|e| LoadError::World(format!("{e:#}")))?;
        WasmGame::new(Arc::new(runner), hash, imports)
    }

    /// The compiled component: from the cache when it holds this hash's, else compiled
    /// (and written to the cache).
    fn compile(&self, bytes: &[u8], hash: &str) -> Result<Component, LoadError> {
        if let Some(dir) = &self.cache
            && let Some(component) = self.cached(dir, hash)
        {
            return Ok(component);
        }
        let component =
            Component::new(&self.engine, bytes).map_err(|e| LoadError::Compile(format!("{e:#}")))?;
        if let Some(dir) = &self.cache {
            // A cache that cannot be written only costs a compile at the next start.
            let _ = store_cached(dir, hash, &component);
        }
        Ok(component)
    }

    /// The cached compile of `hash`, if the cache has one whose own SHA-256 is the one
    /// written beside it when it was made.
    fn cached(&self, dir: &Path, hash: &str) -> Option<Component> {
        let compiled = std::fs::read(dir.join(format!("{hash}.cwasm"))).ok()?;
        let seal = std::fs::read_to_string(dir.join(format!("{hash}.sha256"))).ok()?;
        if hex(&Sha256::digest(&compiled)) != seal.trim() {
            return None;
        }
        deserialize(&self.engine, &compiled)
    }
}

/// Why a component did not link: a WASI import the host has no implementation of (one
/// wasmtime-wasi does not give, such as an unstable interface or a function it lacks) is
/// refused by name.
fn missing(error: &str) -> LoadError {
    let name = error
        .split_once("imports instance `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(name, _)| name)
        .filter(|name| wasi::is_wasi(name) && error.contains("matching implementation was not found"));
    match name {
        Some(name) => LoadError::Import(name.to_owned()),
        None => LoadError::World(error.to_owned()),
    }
}

/// Reads back a compiled component this daemon wrote.
// SAFETY: `Component::deserialize` runs the machine code in the bytes it is given. The
// bytes are only ever our own cache file, read back only when its SHA-256 is the one we
// wrote beside it when we compiled it (so a truncated or altered file is compiled again);
// wasmtime itself refuses a file from another engine version or configuration. The cache
// folder is the daemon's own (SECURITY.md): whoever can write there can already replace
// the daemon's binary.
#[allow(unsafe_code)]
fn deserialize(engine: &Engine, compiled: &[u8]) -> Option<Component> {
    unsafe { Component::deserialize(engine, compiled) }.ok()
}

fn store_cached(dir: &Path, hash: &str, component: &Component) -> std::io::Result<()> {
    let compiled = component.serialize().map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dir)?;
    let file = dir.join(format!("{hash}.cwasm"));
    let part = dir.join(format!("{hash}.cwasm.part"));
    std::fs::write(&part, &compiled)?;
    std::fs::rename(&part, &file)?;
    std::fs::write(dir.join(format!("{hash}.sha256")), hex(&Sha256::digest(&compiled)))
}

/// Advances the engine's epoch every [`Limits::TICK`] while the engine lives.
fn tick(engine: &Engine) {
    let weak = engine.weak();
    let _ = std::thread::Builder::new().name("wasm-epoch".into()).spawn(move || {
        while let Some(engine) = weak.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(Limits::TICK);
        }
    });
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
