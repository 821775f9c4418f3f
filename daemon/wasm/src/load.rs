//! Loading a game component: the engine (fuel, epochs, the component model, nothing
//! else), the check of what the component imports, and the disk cache of compiled
//! components, kept by the SHA-256 of the component's bytes.
//!
//! The world imports nothing but its own types (`spellbridge:game/types`, which hold no
//! function). For a component whose language runtime asks for them, the
//! host offers exactly two things, both fixed so that a replay is the same game: a wall
//! clock that always reads 1970-01-01T00:00:00Z (`wasi:clocks/wall-clock`) and a random
//! source that gives the same bytes on every call (`wasi:random/random`). Any other
//! import (files, the environment, sockets, stdio) is refused at load, with its name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, ComponentType, Lower};
use wasmtime::{Config, Engine};

use crate::limits::Limits;
use crate::plugin::WasmGame;
use crate::run::{Held, Runner};

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
        "it imports `{0}`, which a game may not have: games get no files, network, environment \
         or other host functions (only a fixed wall clock and random source); rebuild it without that import"
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
            offer(&mut linker, name)?;
            imports.push(name.to_owned());
        }
        let pre = linker.instantiate_pre(&component).map_err(|e| LoadError::World(format!("{e:#}")))?;
        let runner = Runner::new(self.engine.clone(), pre, self.limits)
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

/// The wall clock's reading: always the epoch, 1970-01-01T00:00:00Z.
#[derive(Clone, Copy, ComponentType, Lower)]
#[component(record)]
struct Datetime {
    seconds: u64,
    nanoseconds: u32,
}

/// The fixed random source's bytes: the same on every call, so a replay draws the same.
const FIXED_RANDOM: u64 = 0x5EED_0F5A_4DB0_C5E5;

/// Adds the host's fixed version of the import `name`, or refuses it.
fn offer(linker: &mut wasmtime::component::Linker<Held>, name: &str) -> Result<(), LoadError> {
    let refused = || LoadError::Import(name.to_owned());
    let world = |e: wasmtime::Error| LoadError::World(format!("{name}: {e:#}"));
    if name == "spellbridge:game/types@1.0.0" {
        // The world's own types: an import that holds no function.
        linker.instance(name).map_err(world)?;
        Ok(())
    } else if name.starts_with("wasi:clocks/wall-clock@0.2.") {
        let mut clock = linker.instance(name).map_err(world)?;
        clock.func_wrap("now", |_, ()| Ok((Datetime { seconds: 0, nanoseconds: 0 },))).map_err(world)?;
        clock
            .func_wrap("resolution", |_, ()| Ok((Datetime { seconds: 1, nanoseconds: 0 },)))
            .map_err(world)?;
        Ok(())
    } else if name.starts_with("wasi:random/random@0.2.") {
        let mut random = linker.instance(name).map_err(world)?;
        random.func_wrap("get-random-u64", |_, ()| Ok((FIXED_RANDOM,))).map_err(world)?;
        random
            .func_wrap("get-random-bytes", |_, (len,): (u64,)| {
                let len = usize::try_from(len.min(4096)).unwrap_or(0);
                Ok((FIXED_RANDOM.to_le_bytes().iter().copied().cycle().take(len).collect::<Vec<u8>>(),))
            })
            .map_err(world)?;
        Ok(())
    } else {
        Err(refused())
    }
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
