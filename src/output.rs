//! Files that appear whole or not at all: written to a temporary file
//! beside the target and renamed over it only when complete, so a failed or
//! interrupted run leaves no partial file and never damages an existing one.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A temporary file in `target`'s directory (a rename cannot cross file
/// systems), named after it, with the permissions a new file would get
/// (those of the file it replaces, if any) rather than tempfile's 0600.
pub(crate) fn temp_file_beside(target: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{file_name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The process umask still applies, as for any new file.
        let permissions = std::fs::metadata(target)
            .map(|m| m.permissions())
            .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o666));
        builder.permissions(permissions);
    }
    builder.tempfile_in(&dir).map_err(|e| Error::io(&dir, e))
}

/// Writes `bytes` to `target` whole or not at all.
pub(crate) fn write_atomically(target: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut temp = temp_file_beside(target)?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| Error::io(temp.path(), e))?;
    temp.persist(target)
        .map_err(|e| Error::io(target, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_target_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.html");
        std::fs::write(&target, "old").unwrap();
        write_atomically(&target, b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_readable_by_others_unless_the_umask_says_no() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("new.parquet");
        write_atomically(&target, b"x").unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        // tempfile alone would give 0600; any usual umask leaves the owner
        // read/write and does not add execute bits.
        assert_ne!(mode, 0o600, "mode {mode:o}");
        assert_eq!(mode & 0o600, 0o600);
        assert_eq!(mode & 0o111, 0);
    }
}
