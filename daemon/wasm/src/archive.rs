//! The builds of game components that tables were played with, kept by the SHA-256 of
//! their bytes (`<hash>.wasm` in the daemon's compiled-games folder), so that a table in
//! play keeps the version it opened with: after a SIGHUP or a restart loads a newer build,
//! a table's snapshot names its own build's hash and is restored with that build. A build
//! whose file is gone (or altered) is refused with the hash and where it was looked for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::load::{Loader, hex};
use crate::plugin::WasmGame;

/// The kept builds, and the games loaded from them so far.
pub struct Archive {
    dir: PathBuf,
    loader: Loader,
    loaded: Mutex<BTreeMap<String, WasmGame>>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Archive({})", self.dir.display())
    }
}

impl Archive {
    /// An archive in `dir` (made when a build is first kept), loading with `loader`.
    pub fn new(dir: &Path, loader: Loader) -> Archive {
        Archive { dir: dir.to_owned(), loader, loaded: Mutex::new(BTreeMap::new()) }
    }

    /// The loader its builds are loaded with.
    pub fn loader(&self) -> &Loader {
        &self.loader
    }

    /// Keeps `bytes` (whose SHA-256 is `hash`) unless a build with that hash is kept.
    pub fn keep(&self, hash: &str, bytes: &[u8]) -> std::io::Result<()> {
        let file = self.file(hash);
        if file.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir)?;
        let part = self.dir.join(format!("{hash}.wasm.part"));
        std::fs::write(&part, bytes)?;
        std::fs::rename(&part, &file)
    }

    /// The game of the build `hash`, with `options`: from the archive's file, checked
    /// against its hash.
    pub fn game(&self, hash: &str, options: &str) -> Result<WasmGame, String> {
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(game) = loaded.get(hash) {
            return Ok(game.with_options(options));
        }
        let file = self.file(hash);
        let gone = |why: String| {
            format!(
                "the game component build {hash} this table was played with is not available ({why}): \
                 put that build back at {} (or in the [[game]] config) to go on",
                file.display()
            )
        };
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(gone("that is not a SHA-256".to_owned()));
        }
        let bytes = std::fs::read(&file).map_err(|e| gone(e.to_string()))?;
        if hex(&Sha256::digest(&bytes)) != hash {
            return Err(gone("the file there has another SHA-256".to_owned()));
        }
        let game = self.loader.load(&bytes).map_err(|e| gone(e.to_string()))?;
        loaded.insert(hash.to_owned(), game.clone());
        Ok(game.with_options(options))
    }

    fn file(&self, hash: &str) -> PathBuf {
        self.dir.join(format!("{hash}.wasm"))
    }
}
