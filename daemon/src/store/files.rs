//! The database's file modes: the database is created owner-only (0600), so SQLite makes
//! its `-wal` and `-shm` files with the same mode. An existing file that others may read
//! or write is reported with a WARN and tightened to 0600 (a chmod only its owner, or root,
//! can make; when it fails the WARN says what to type).

use std::io;
use std::path::{Path, PathBuf};

use super::StoreError;

/// Creates the empty database file, readable and writable by its owner only.
pub(super) fn create_private(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        // Created meanwhile by someone else: SQLite opens it as it is.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// A failure to create the database file, as a store error.
pub(super) fn classify_io(path: &Path, error: io::Error) -> StoreError {
    match error.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            StoreError::ReadOnly { path: path.to_owned() }
        }
        io::ErrorKind::StorageFull => StoreError::Full { path: path.to_owned() },
        _ => StoreError::File { path: path.to_owned(), source: error },
    }
}

/// The database's companions, which SQLite creates beside it.
fn companions(path: &Path) -> [PathBuf; 2] {
    let with = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [with("-wal"), with("-shm")]
}

/// Warns about, and tightens, the `-wal` and `-shm` files if others may read them.
pub(super) fn tighten_companions(path: &Path) {
    for companion in companions(path) {
        tighten(&companion);
    }
}

/// If `path` exists and its group or others have any access, warns and sets it to 0600.
pub(super) fn tighten(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let Ok(metadata) = std::fs::metadata(path) else { return };
        let mode = metadata.permissions().mode() & 0o777;
        if !metadata.is_file() || mode & 0o077 == 0 {
            return;
        }
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => tracing::warn!(
                file = %path.display(),
                mode = format!("{mode:o}"),
                "the file could be read by other users; its mode is now 600 (owner only)"
            ),
            Err(error) => tracing::warn!(
                file = %path.display(),
                mode = format!("{mode:o}"),
                %error,
                "the file can be read by other users and could not be tightened; run `chmod 600` on it as its owner"
            ),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("exists").permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_is_owner_only_and_a_wide_one_is_tightened() {
        let dir = tempfile::tempdir().expect("temp dir");
        let new = dir.path().join("new.db");
        create_private(&new).expect("created");
        assert_eq!(mode(&new), 0o600);
        let wide = dir.path().join("wide.db");
        std::fs::write(&wide, b"").expect("write");
        std::fs::set_permissions(&wide, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let [wal, _] = companions(&wide);
        std::fs::write(&wal, b"").expect("write");
        std::fs::set_permissions(&wal, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        tighten(&wide);
        tighten_companions(&wide);
        assert_eq!((mode(&wide), mode(&wal)), (0o600, 0o600));
    }
}
