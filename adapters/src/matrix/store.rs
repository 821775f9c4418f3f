//! The files the Matrix transport keeps in its `store_dir`:
//!
//! - `session.json`: the homeserver, user id, device id and access token of the login
//!   (mode 0600; never logged), restored on every later start so the bot keeps one device
//!   and its E2EE identity;
//! - `sync-token`: the `/sync` position up to which every message has been handed to the
//!   daemon, so a restart continues from there and never replays older history;
//! - `sdk/`: matrix-sdk's SQLite state, crypto and event-cache stores;
//! - `pictures.json`: the last board picture posted of each table in each room, so the
//!   next one redacts it even after a restart (`picture`);
//! - `ghosts.json` (appservice mode): which ghost each IRC nick is, so a renamed nick
//!   keeps its ghost across a restart (`appservice::book`);
//! - `spoiled-rooms.json`: the rooms a third member spoiled as private chats, never used
//!   as one again (`spoiled`).
//!
//! Files are replaced atomically (written beside, then renamed). They are small and
//! written at most once per sync, so plain blocking `std::fs` calls are used.
//!
//! The store holds the login token, the E2EE keys and message history, so it is owner-only:
//! directories 0700, files 0600. [`StoreDir::secure`] runs before matrix-sdk opens its
//! stores: it creates the directories so, and tightens existing ones (and files) that others
//! could read, with a WARN for each. matrix-sdk's SQLite creates its files 0644 (less the
//! umask), inside the 0700 directory; [`StoreDir::tighten_created`] sets them to 0600 once
//! opened.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use matrix_sdk::authentication::matrix::MatrixSession;
use serde::{Deserialize, Serialize};

/// Why a store file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `session.json` is not a saved session.
    #[error("{path} is not a saved Matrix session: {source}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
}

/// A login saved for the next start.
#[derive(Clone, Serialize, Deserialize)]
pub struct SavedSession {
    /// The homeserver it was made on.
    pub homeserver: String,
    /// The user id, device id and tokens.
    #[serde(flatten)]
    pub session: MatrixSession,
}

impl std::fmt::Debug for SavedSession {
    /// Everything but the tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedSession")
            .field("homeserver", &self.homeserver)
            .field("user_id", &self.session.meta.user_id)
            .field("device_id", &self.session.meta.device_id)
            .finish_non_exhaustive()
    }
}

/// The paths inside one account's `store_dir`.
#[derive(Clone, Debug)]
pub struct StoreDir {
    root: PathBuf,
}

impl StoreDir {
    /// The store at `root` (created when first written).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        StoreDir { root: root.into() }
    }

    /// Creates the store's directories owner-only (0700) and tightens what already exists:
    /// directories to 0700, files to 0600, each one others could reach logged as a WARN
    /// (or, when the bot does not own it and cannot change it, a WARN saying to chmod it).
    pub fn secure(&self) -> Result<(), StoreError> {
        let sdk = self.sdk();
        private_dir(&sdk).map_err(|source| StoreError::Io { path: sdk, source })?;
        tighten_tree(&self.root, true);
        Ok(())
    }

    /// Sets the files matrix-sdk created since [`StoreDir::secure`] to 0600, quietly.
    pub fn tighten_created(&self) {
        tighten_tree(&self.root, false);
    }

    /// matrix-sdk's SQLite stores.
    pub fn sdk(&self) -> PathBuf {
        self.root.join("sdk")
    }

    /// Where the ghost of each IRC nick is remembered (appservice mode, `appservice::book`).
    pub(super) fn ghosts_path(&self) -> PathBuf {
        self.root.join("ghosts.json")
    }

    /// Where the rooms spoiled as private chats are remembered (see `spoiled`).
    pub(super) fn spoiled_path(&self) -> PathBuf {
        self.root.join("spoiled-rooms.json")
    }

    /// Where the last board pictures are remembered (see `picture`).
    pub(super) fn pictures_path(&self) -> PathBuf {
        self.root.join("pictures.json")
    }

    fn session_path(&self) -> PathBuf {
        self.root.join("session.json")
    }

    fn token_path(&self) -> PathBuf {
        self.root.join("sync-token")
    }

    /// The saved session, if there is one.
    pub fn load_session(&self) -> Result<Option<SavedSession>, StoreError> {
        let path = self.session_path();
        let Some(text) = read_optional(&path)? else { return Ok(None) };
        serde_json::from_str(&text).map(Some).map_err(|source| StoreError::Corrupt { path, source })
    }

    /// Saves the session (owner-only permissions).
    pub fn save_session(&self, session: &SavedSession) -> Result<(), StoreError> {
        let path = self.session_path();
        let json = serde_json::to_vec_pretty(session)
            .map_err(|source| StoreError::Corrupt { path: path.clone(), source })?;
        write_atomically(&path, &json)
    }

    /// The sync position everything before which has been delivered.
    pub fn load_sync_token(&self) -> Result<Option<String>, StoreError> {
        Ok(read_optional(&self.token_path())?.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()))
    }

    /// Records the sync position once a batch has been delivered.
    pub fn save_sync_token(&self, token: &str) -> Result<(), StoreError> {
        write_atomically(&self.token_path(), token.as_bytes())
    }

    /// Forgets the login, the sync position and matrix-sdk's stores: a fresh login makes a
    /// new device, whose crypto store must start empty.
    pub fn reset(&self) -> Result<(), StoreError> {
        for file in [self.session_path(), self.token_path()] {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(StoreError::Io { path: file, source: e });
                }
                _ => {}
            }
        }
        let sdk = self.sdk();
        match std::fs::remove_dir_all(&sdk) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(StoreError::Io { path: sdk, source: e })
            }
            _ => Ok(()),
        }
    }
}

/// Creates `dir` and its missing parents with mode 0700.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Sets `dir`, and every directory and file under it, owner-only; `warn`: log each one
/// others could reach.
fn tighten_tree(dir: &Path, warn: bool) {
    tighten(dir, warn);
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => tighten_tree(&path, warn),
            Ok(kind) if kind.is_file() => tighten(&path, warn),
            _ => {}
        }
    }
}

/// Sets one file to 0600 or directory to 0700 if its group or others have any access.
fn tighten(path: &Path, warn: bool) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let Ok(metadata) = std::fs::symlink_metadata(path) else { return };
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 == 0 || metadata.file_type().is_symlink() {
            return;
        }
        let private = if metadata.is_dir() { 0o700 } else { 0o600 };
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(private)) {
            Ok(()) if warn => tracing::warn!(
                path = %path.display(),
                mode = format!("{mode:o}"),
                "the Matrix store could be read by other users; its mode is now {private:o} (owner only)"
            ),
            Ok(()) => {}
            Err(error) => tracing::warn!(
                path = %path.display(),
                mode = format!("{mode:o}"),
                %error,
                "the Matrix store can be read by other users and could not be tightened; run `chmod -R go-rwx` on it as its owner"
            ),
        }
    }
    #[cfg(not(unix))]
    let _ = (path, warn);
}

pub(super) fn read_optional(path: &Path) -> Result<Option<String>, StoreError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StoreError::Io { path: path.to_owned(), source }),
    }
}

/// Writes `path.tmp` (mode 0600 on Unix), then renames it over `path`.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io = |source| StoreError::Io { path: path.to_owned(), source };
    if let Some(parent) = path.parent() {
        private_dir(parent).map_err(io)?;
    }
    let temp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    drop(file);
    std::fs::rename(&temp, path).map_err(io)
}

#[cfg(test)]
mod tests {
    use matrix_sdk::SessionMeta;
    use matrix_sdk::authentication::SessionTokens;
    use matrix_sdk::ruma::{device_id, user_id};

    use super::*;

    fn session() -> SavedSession {
        SavedSession {
            homeserver: "http://127.0.0.1:8008".to_owned(),
            session: MatrixSession {
                meta: SessionMeta {
                    user_id: user_id!("@bot:localhost").to_owned(),
                    device_id: device_id!("DEV").to_owned(),
                },
                tokens: SessionTokens { access_token: "syt_secret".to_owned(), refresh_token: None },
            },
        }
    }

    #[test]
    fn the_session_and_token_survive_a_round_trip_and_reset_forgets_them() -> Result<(), StoreError> {
        let dir = tempfile::tempdir().map_err(|source| StoreError::Io { path: "tmp".into(), source })?;
        let store = StoreDir::new(dir.path().join("bot"));
        assert!(store.load_session()?.is_none());
        assert!(store.load_sync_token()?.is_none());
        store.save_session(&session())?;
        store.save_sync_token("s72_1")?;
        std::fs::create_dir_all(store.sdk())
            .map_err(|source| StoreError::Io { path: store.sdk(), source })?;
        let loaded = store.load_session()?.expect("saved");
        assert_eq!(loaded.session.meta.device_id, "DEV");
        assert_eq!(loaded.session.tokens.access_token, "syt_secret");
        assert_eq!(store.load_sync_token()?.as_deref(), Some("s72_1"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode =
                std::fs::metadata(dir.path().join("bot/session.json")).expect("exists").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        store.reset()?;
        assert!(store.load_session()?.is_none());
        assert!(store.load_sync_token()?.is_none());
        assert!(!store.sdk().exists());
        store.reset()?;
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn the_store_is_created_owner_only_and_a_readable_one_is_tightened() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |path: &Path| std::fs::metadata(path).expect("exists").permissions().mode() & 0o777;
        let set = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let store = StoreDir::new(dir.path().join("bot"));
        store.secure().expect("secured");
        assert_eq!((mode(&dir.path().join("bot")), mode(&store.sdk())), (0o700, 0o700));
        store.save_sync_token("s1").expect("saved");
        assert_eq!(mode(&dir.path().join("bot/sync-token")), 0o600);
        // As matrix-sdk's SQLite makes its files, and as an older spellbridge left them.
        let state = store.sdk().join("matrix-sdk-state.sqlite3");
        std::fs::write(&state, b"").expect("write");
        set(&state, 0o644);
        store.tighten_created();
        assert_eq!(mode(&state), 0o600);
        set(&state, 0o644);
        set(&store.sdk(), 0o755);
        set(&dir.path().join("bot"), 0o755);
        store.secure().expect("secured");
        assert_eq!((mode(&dir.path().join("bot")), mode(&store.sdk()), mode(&state)), (0o700, 0o700, 0o600));
    }

    #[test]
    fn debug_output_hides_the_token_and_a_corrupt_file_is_an_error() {
        assert!(!format!("{:?}", session()).contains("syt_secret"));
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("session.json"), "{not json").expect("write");
        assert!(matches!(StoreDir::new(dir.path()).load_session(), Err(StoreError::Corrupt { .. })));
    }
}
