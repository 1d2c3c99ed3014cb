//! Where output goes, and files that appear whole or not at all.
//!
//! A regular file (or a new one) is written to a temporary file beside it
//! and renamed over it only when complete, so a failed or interrupted run
//! leaves no partial file and never damages an existing one. Anything else
//! is never renamed over:
//! - a symbolic link is followed, and its target is replaced as above (the
//!   link stays a link);
//! - a character or block device, a FIFO or a socket is written directly,
//!   streamed as standard output is (renaming over `/dev/null` would replace
//!   the device with a regular file);
//! - a directory, or a name ending in a separator (`out/`), is refused
//!   ([`names_a_directory`]).
//!
//! Temporary files are registered while they exist, so that a signal
//! handler can remove them ([`remove_unfinished_files`]): a process killed
//! by SIGINT or SIGTERM runs no destructors. Writes this module does not
//! make (an object store's staged uploads) register how to undo them
//! ([`undo_on_interrupt`]). A dataset's files that are
//! complete are counted in the same registry as each is renamed into
//! place, so that the handler can say what is left ([`CompleteFiles`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};

/// The temporary files that exist now, not yet renamed into place, and
/// the complete files of datasets being written. One lock for both: a
/// file renamed into place is counted in the same step, so a signal
/// handler never finds it complete and uncounted.
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    unfinished: Vec::new(),
    undo: Vec::new(),
    datasets: Vec::new(),
    next_id: 0,
});

struct Registry {
    unfinished: Vec<PathBuf>,
    /// Writes of others to undo, by id ([`undo_on_interrupt`]).
    undo: Vec<(u64, Box<dyn Fn() + Send>)>,
    /// Each dataset being written, by its id.
    datasets: Vec<(u64, CompleteFiles)>,
    /// The next id of a dataset or an undo.
    next_id: u64,
}

fn registry() -> MutexGuard<'static, Registry> {
    // A thread that panicked while holding the lock left the registry
    // whole: every change to it is one push, one removal or one count.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every temporary file of output not yet complete, and stops any
/// from being created or renamed into place afterwards: for a signal
/// handler, just before the process exits. Threads that write files block
/// from then on. Returns the complete files of each dataset that was being
/// written, which stay.
pub fn remove_unfinished_files() -> Vec<CompleteFiles> {
    let guard = registry();
    for path in guard.unfinished.iter() {
        let _ = std::fs::remove_file(path);
    }
    for (_, undo) in guard.undo.iter() {
        undo();
    }
    let datasets = guard.datasets.iter().map(|(_, d)| d.clone()).collect();
    // Held until the process exits: no temporary file is created and none
    // is renamed into place between this cleanup and the exit.
    std::mem::forget(guard);
    datasets
}

/// Registers `undo`, which undoes writes the registry cannot name (an
/// object store's staged uploads, say), to run in
/// [`remove_unfinished_files`] if the process is interrupted while the
/// returned guard lives. It runs on the signal handler's thread, with the
/// registry locked: it must not write files through this module.
pub fn undo_on_interrupt(undo: impl Fn() + Send + 'static) -> UndoOnInterrupt {
    let mut registry = registry();
    let id = registry.next_id;
    registry.next_id += 1;
    registry.undo.push((id, Box::new(undo)));
    UndoOnInterrupt(id)
}

/// Keeps an [`undo_on_interrupt`] registered while it lives.
#[must_use = "the undo is unregistered when this is dropped"]
pub struct UndoOnInterrupt(u64);

impl Drop for UndoOnInterrupt {
    fn drop(&mut self) {
        registry().undo.retain(|(id, _)| *id != self.0);
    }
}

/// The files a dataset writer has completed so far, in its directory:
/// what an interrupted or failed run leaves. Displayed as `3 complete
/// files were written to out/ (part-00000.parquet to part-00002.parquet)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompleteFiles {
    /// The dataset's directory.
    pub dir: PathBuf,
    /// How many files were completed.
    pub count: usize,
    /// The name of the first of them.
    pub first: Option<String>,
    /// The name of the last.
    pub last: Option<String>,
}

impl std::fmt::Display for CompleteFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = self.dir.display();
        match (self.count, &self.first, &self.last) {
            (0, _, _) => write!(f, "no complete file was written to {dir}"),
            (1, Some(name), _) => write!(f, "1 complete file was written to {dir} ({name})"),
            (n, Some(first), Some(last)) => write!(
                f,
                "{n} complete files were written to {dir} ({first} to {last})"
            ),
            (n, _, _) => write!(f, "{n} complete files were written to {dir}"),
        }
    }
}

/// A dataset being written, registered so that its complete files are
/// counted ([`Completion::count_in`]) and reported after a signal; removed
/// from the registry when dropped.
pub(crate) struct DatasetFiles {
    id: u64,
}

impl DatasetFiles {
    /// Registers a dataset written to `dir`.
    pub(crate) fn register(dir: &Path) -> DatasetFiles {
        let mut registry = registry();
        let id = registry.next_id;
        registry.next_id += 1;
        registry.datasets.push((
            id,
            CompleteFiles {
                dir: dir.to_path_buf(),
                count: 0,
                first: None,
                last: None,
            },
        ));
        DatasetFiles { id }
    }

    /// Its complete files so far.
    pub(crate) fn complete(&self) -> CompleteFiles {
        let registry = registry();
        let (_, files) = registry
            .datasets
            .iter()
            .find(|(id, _)| *id == self.id)
            .expect("registered until dropped");
        files.clone()
    }
}

impl Drop for DatasetFiles {
    fn drop(&mut self) {
        registry().datasets.retain(|(id, _)| *id != self.id);
    }
}

/// Where a command writes a file.
pub enum Output {
    /// A path, written by [the rules](self).
    Path(PathBuf),
    /// A stream (standard output, say), written as the bytes are made.
    Stream(Box<dyn Write + Send>),
}

impl<P: AsRef<Path>> From<P> for Output {
    fn from(path: P) -> Output {
        Output::Path(path.as_ref().to_path_buf())
    }
}

impl Output {
    /// Opens the output for writing: creates the temporary file of a path
    /// to replace, or opens the device. Done before any work, so that an
    /// output that cannot be written fails at once.
    pub(crate) fn open(self) -> Result<OpenOutput> {
        match self {
            Output::Stream(out) => Ok(OpenOutput {
                out,
                completion: Completion(None),
            }),
            Output::Path(path) => match destination(&path)? {
                Destination::Replace(target) => {
                    let (file, staged) = Staged::beside(&target)?;
                    let handle = file.try_clone().map_err(|e| Error::io(&path, e))?;
                    Ok(OpenOutput {
                        out: Box::new(file),
                        completion: Completion(Some((staged, handle))),
                    })
                }
                Destination::Stream(device) => {
                    let out = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&device)
                        .map_err(|e| Error::io(&path, e))?;
                    Ok(OpenOutput {
                        out: Box::new(out),
                        completion: Completion(None),
                    })
                }
            },
        }
    }
}

/// An [`Output`] open for writing: the bytes go to `out`, and
/// [`Completion::complete`] then moves a staged file into place.
pub(crate) struct OpenOutput {
    pub(crate) out: Box<dyn Write + Send>,
    pub(crate) completion: Completion,
}

/// What makes an output whole once its bytes are written: for a
/// replaced file (a temporary file and a second handle to it), syncing it
/// and renaming it into place. Dropped without
/// [`complete`](Self::complete), the temporary file is removed.
#[must_use = "a file is put in place only by Completion::complete"]
pub struct Completion(Option<(Staged, File)>);

impl Completion {
    /// Counts the file among the complete files of `dataset` once it is
    /// renamed into place.
    pub(crate) fn count_in(&mut self, dataset: &DatasetFiles) {
        if let Some((staged, _)) = &mut self.0 {
            staged.dataset = Some(dataset.id);
        }
    }

    /// The file written, for errors; `None` for a stream.
    pub(crate) fn target(&self) -> Option<&Path> {
        self.0.as_ref().map(|(s, _)| s.target())
    }

    /// Syncs a staged file and renames it over its target (after every
    /// byte was written and flushed).
    pub fn complete(self) -> Result<()> {
        self.synced()?.map_or(Ok(()), Staged::persist)
    }

    /// Syncs a staged file and leaves it under its hidden temporary name,
    /// which is returned, for another process to rename into place or
    /// remove: a distributed `COPY`'s coordinator, once it knows whether
    /// every task's file was written. `None` for a stream, written in
    /// place.
    pub fn keep_staged(self) -> Result<Option<PathBuf>> {
        self.synced()?.map(Staged::keep).transpose()
    }

    /// The staged file, its bytes synced to disk; `None` for a stream.
    fn synced(self) -> Result<Option<Staged>> {
        match self.0 {
            Some((staged, file)) => {
                file.sync_all().map_err(|e| Error::io(staged.target(), e))?;
                Ok(Some(staged))
            }
            None => Ok(None),
        }
    }
}

/// Where the bytes of an output path go.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    /// A regular file, or none yet: replaced whole.
    Replace(PathBuf),
    /// A device, FIFO or socket: written directly.
    Stream(PathBuf),
}

/// Most symbolic links followed from one path, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// Whether `path` names a directory: one there (through symbolic links),
/// or a name ending in a separator (`out/`), which only a directory takes.
pub fn names_a_directory(path: &Path) -> bool {
    let separator = std::path::MAIN_SEPARATOR_STR.as_bytes();
    path.is_dir() || path.as_os_str().as_encoded_bytes().ends_with(separator)
}

/// Where output to `path` goes ([the rules](self)).
pub(crate) fn destination(path: &Path) -> Result<Destination> {
    if names_a_directory(path) {
        return Err(Error::new(ErrorKind::Io, "is a directory, not a file").in_file(path));
    }
    let mut target = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let metadata = match std::fs::symlink_metadata(&target) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Destination::Replace(target));
            }
            Err(e) => return Err(Error::io(path, e)),
        };
        let kind = metadata.file_type();
        if kind.is_symlink() {
            let link = std::fs::read_link(&target).map_err(|e| Error::io(path, e))?;
            target = match target.parent() {
                Some(dir) => dir.join(link),
                None => link,
            };
        } else if kind.is_file() {
            return Ok(Destination::Replace(target));
        } else {
            return Ok(Destination::Stream(target));
        }
    }
    Err(Error::new(
        ErrorKind::Io,
        format!("more than {MAX_LINKS} symbolic links to follow"),
    )
    .in_file(path))
}

/// The most bytes of a target's name that its temporary file's name
/// (`.NAME.XXXXXX.tmp`) repeats.
const MAX_NAME_IN_TEMPORARY: usize = 200;

/// A temporary file beside its target, registered for
/// [`remove_unfinished_files`]; removed when dropped unless
/// [persisted](Self::persist).
pub(crate) struct Staged {
    temp: Option<tempfile::TempPath>,
    /// The final path, a regular file or none yet.
    target: PathBuf,
    /// The dataset that counts it when complete.
    dataset: Option<u64>,
}

impl Staged {
    /// A temporary file in `target`'s directory (a rename cannot cross file
    /// systems), named after it, with the permissions a new file would get
    /// (those of the file it replaces, if any) rather than tempfile's 0600.
    /// Errors name `target`, not the temporary file.
    pub(crate) fn beside(target: &Path) -> Result<(File, Staged)> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let file_name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // The temporary name adds 12 bytes to the target's, which may be
        // up to the file system's 255 already: a prefix of it does.
        let mut end = file_name.len().min(MAX_NAME_IN_TEMPORARY);
        while !file_name.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = format!(".{}.", &file_name[..end]);
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
        let mut registry = registry();
        let (file, temp) = builder
            .tempfile_in(&dir)
            .map_err(|e| {
                let why = if dir.is_dir() {
                    format!("cannot create a file in {}: {e}", dir.display())
                } else {
                    format!("the directory {} does not exist", dir.display())
                };
                Error::new(ErrorKind::Io, why)
                    .in_file(target)
                    .with_source(e)
            })?
            .into_parts();
        registry.unfinished.push(temp.to_path_buf());
        Ok((
            file,
            Staged {
                temp: Some(temp),
                target: target.to_path_buf(),
                dataset: None,
            },
        ))
    }

    /// The path the file will have.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file over the target.
    pub(crate) fn persist(mut self) -> Result<()> {
        let mut registry = registry();
        let temp = self.temp.take().expect("persisted once");
        let temp_path = temp.to_path_buf();
        let persisted = temp
            .persist(&self.target)
            .map_err(|e| Error::io(&self.target, e.error));
        registry.unfinished.retain(|p| *p != temp_path);
        if persisted.is_ok()
            && let Some((_, files)) = registry
                .datasets
                .iter_mut()
                .find(|(id, _)| Some(*id) == self.dataset)
        {
            let name = self
                .target
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            files.count += 1;
            files.first = files.first.take().or_else(|| name.clone());
            files.last = name;
        }
        persisted
    }

    /// Keeps the temporary file where it is, no longer removed when
    /// dropped or on a signal, and returns its path.
    fn keep(mut self) -> Result<PathBuf> {
        let mut registry = registry();
        let temp = self.temp.take().expect("kept once");
        let path = temp.to_path_buf();
        registry.unfinished.retain(|p| *p != path);
        temp.keep().map_err(|e| Error::io(&self.target, e.error))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            // Removed under the lock, so that a signal handler that runs
            // now finds it either registered or gone.
            let mut registry = registry();
            let path = temp.to_path_buf();
            drop(temp);
            registry.unfinished.retain(|p| *p != path);
        }
    }
}

/// A name in a directory taken for a file being written there, so that
/// writers of one directory at the same time (two appends to a dataset)
/// never rename two files to the same name, the second over the first: a
/// file `.{name}.claim`, made only where none is, for a name not yet
/// taken by a file, and removed once the file is in place or its writing
/// failed. Registered as unfinished, so that a signal handler removes it
/// too; a run killed outright leaves it, and the name is skipped.
pub(crate) struct Claim(PathBuf);

/// What holds a name [`Claim::take`] could not take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// A file of that name.
    File,
    /// Another writer's claim, this file: a run killed outright leaves it.
    Claim(PathBuf),
}

impl Claim {
    /// Takes `name` in `dir`, or says what has it.
    pub(crate) fn take(dir: &Path, name: &str) -> Result<std::result::Result<Claim, Taken>> {
        let path = dir.join(format!(".{name}.claim"));
        {
            let mut registry = registry();
            let made = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path);
            match made {
                Ok(_) => registry.unfinished.push(path.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Ok(Err(Taken::Claim(path)));
                }
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        let claim = Claim(path);
        // Written since the directory was looked at: dropped, the claim goes.
        if dir.join(name).exists() {
            return Ok(Err(Taken::File));
        }
        Ok(Ok(claim))
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut registry = registry();
        let _ = std::fs::remove_file(&self.0);
        registry.unfinished.retain(|p| *p != self.0);
    }
}

/// Writes `bytes` to `target` whole or not at all (directly, for a device
/// or FIFO).
pub(crate) fn write_atomically(target: &Path, bytes: &[u8]) -> Result<()> {
    let mut output = Output::from(target).open()?;
    output
        .out
        .write_all(bytes)
        .and_then(|()| output.out.flush())
        .map_err(|e| Error::io(target, e))?;
    output.completion.complete()
}

/// Fails when `output` is the file `input` names (`None`: standard input),
/// by device and inode, however either is named: through a symbolic or
/// hard link, or `/dev/stdin`. Writing it would destroy the input while
/// it is read. Neither is opened: opening a FIFO would wait for a writer.
pub fn check_output_is_not_input(output: &Path, input: Option<&Path>) -> Result<()> {
    let Some(out) = file_id(output) else {
        return Ok(()); // not there yet: not the input
    };
    let same = match input {
        Some(path) => file_id(path) == Some(out),
        None => stdin_id() == Some(out),
    };
    if same {
        let what = input.map_or("standard input".to_string(), |p| {
            format!("the input file {}", p.display())
        });
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "the output is {what}: writing it would destroy the input (choose another output)"
            ),
        )
        .in_file(output));
    }
    Ok(())
}

/// What identifies a file however it is named: its device and inode
/// (elsewhere, its canonical path).
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(path: &Path) -> Option<FileId> {
    std::fs::canonicalize(path).ok()
}

/// The file standard input reads, or standard output writes.
#[cfg(unix)]
fn stream_id(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let file = File::from(fd.try_clone_to_owned().ok()?);
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(unix)]
fn stdin_id() -> Option<FileId> {
    stream_id(std::os::fd::AsFd::as_fd(&std::io::stdin()))
}

#[cfg(not(unix))]
fn stdin_id() -> Option<FileId> {
    None
}

/// Fails when standard output is the file `input`: for an output of `-`.
pub fn check_stdout_is_not_input(input: &Path) -> Result<()> {
    #[cfg(unix)]
    let same = file_id(input).is_some()
        && file_id(input) == stream_id(std::os::fd::AsFd::as_fd(&std::io::stdout()));
    #[cfg(not(unix))]
    let same = false;
    if same {
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "standard output is the input {}: writing it would destroy the input",
                input.display()
            ),
        ));
    }
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

    #[test]
    fn a_name_as_long_as_the_file_system_takes_is_written() {
        let dir = tempfile::tempdir().unwrap();
        // Near the 255 bytes most file systems take, in two-byte
        // characters, so that the temporary name cuts it on a boundary.
        let name = format!("{}.parquet", "é".repeat(123));
        assert_eq!(name.len(), 254);
        let target = dir.path().join(&name);
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
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        // As a file made by `File::create` is: 0666 less the umask, where
        // tempfile alone gives 0600 (which a 077 umask gives too).
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        assert_eq!(mode(&target), mode(&plain), "mode {:o}", mode(&target));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.html");
        let link = dir.path().join("latest.html");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("real.html", &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_directly_never_replaced() {
        assert_eq!(
            destination(Path::new("/dev/null")).unwrap(),
            Destination::Stream("/dev/null".into())
        );
        write_atomically(Path::new("/dev/null"), b"x").unwrap();
        let kind = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(!kind.is_file());
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = destination(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        // A name ending in a separator, not made yet: the write would fail
        // with "Not a directory (os error 20)".
        let err = destination(&dir.path().join("new/")).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }

    #[test]
    fn a_missing_directory_is_named_with_the_target_not_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/out.parquet");
        let err = Staged::beside(&target).err().unwrap();
        assert_eq!(err.file(), Some(target.as_path()));
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(!err.to_string().contains(".out.parquet."), "{err}");
    }

    #[test]
    fn an_output_that_is_the_input_by_another_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("same.jsonl");
        std::fs::write(&input, "{}\n").unwrap();
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&input, &hard).unwrap();
        let other = dir.path().join("other.parquet");
        assert!(check_output_is_not_input(&hard, Some(&input)).is_err());
        assert!(check_output_is_not_input(&input, Some(&input)).is_err());
        assert!(check_output_is_not_input(&other, Some(&input)).is_ok());
        std::fs::write(&other, "").unwrap();
        assert!(check_output_is_not_input(&other, Some(&input)).is_ok());
    }

    #[test]
    fn dropping_a_staged_file_removes_it_and_unregisters_it() {
        let dir = tempfile::tempdir().unwrap();
        let (_, staged) = Staged::beside(&dir.path().join("x.parquet")).unwrap();
        let temp = staged.temp.as_ref().unwrap().to_path_buf();
        assert!(registry().unfinished.contains(&temp));
        drop(staged);
        assert!(!temp.exists());
        assert!(!registry().unfinished.contains(&temp));
    }
}
