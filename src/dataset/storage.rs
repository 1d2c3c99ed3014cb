//! Where a dataset's files are: the local filesystem ([`LocalFiles`]), or
//! an object store, which an integration provides (the DataFusion crate's,
//! over the stores a session has registered). A storage finds the files an
//! input names and opens each as a [`ByteSource`]; the dataset does the
//! rest alike, so a file reads the same from any storage.
//!
//! A file is named by what the storage's [`find`](Storage::find) gave: a
//! path for local files, a URL (`s3://bucket/logs/a.parquet`) in a store.
//! Errors name it so.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{ByteSource, LocalFile};

/// Where a dataset's files are.
pub trait Storage: Send + Sync {
    /// Opens the file `name` (as [`find`](Self::find) names it).
    fn open(&self, name: &Path) -> io::Result<Arc<dyn ByteSource>>;

    /// The files `input` names, in any order: itself if it is a file;
    /// every `*.parquet` beneath it if it is a directory (or a prefix of a
    /// store), skipping names that start with `_` or `.`
    /// ([`is_dataset_file`]); or the files a glob pattern matches, and
    /// those beneath the directories it matches. None is not an error
    /// here.
    fn find(&self, input: &Path) -> Result<Vec<PathBuf>>;
}

/// Whether a file at `relative` beneath a dataset's directory is one of
/// its files: a `*.parquet` file, with no name on the way (nor its own)
/// starting with `_` or `.`, as Spark and Hive skip `_SUCCESS` and `.crc`
/// files; but for a `_key=value` directory, which Spark reads too.
pub fn is_dataset_file(relative: &str) -> bool {
    relative.ends_with(".parquet")
        && relative
            .split(['/', std::path::MAIN_SEPARATOR])
            .filter(|name| !name.is_empty())
            .all(|name| !skipped(name))
}

fn skipped(name: &str) -> bool {
    underscored(name) || name.starts_with('.')
}

/// Whether `name` starts with `_` and is not a `_key=value` directory.
fn underscored(name: &str) -> bool {
    name.starts_with('_') && !name.contains('=')
}

/// The characters that make a name a glob pattern.
pub const GLOB_CHARACTERS: [char; 3] = ['*', '?', '['];

/// Whether `text` is a glob pattern rather than a name.
pub fn is_glob(text: &str) -> bool {
    text.contains(GLOB_CHARACTERS)
}

/// Files on the local filesystem, read by positional reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFiles;

impl Storage for LocalFiles {
    fn open(&self, name: &Path) -> io::Result<Arc<dyn ByteSource>> {
        Ok(Arc::new(LocalFile::new(std::fs::File::open(name)?)?))
    }

    fn find(&self, input: &Path) -> Result<Vec<PathBuf>> {
        let text = input.to_string_lossy();
        let mut files = Vec::new();
        // One look at the path: a name that is not there is an error now,
        // not once the scan opens it; a pattern is matched below.
        let found = std::fs::metadata(input);
        if found.as_ref().is_ok_and(|m| m.is_dir()) {
            if walk(input, &mut files)? {
                each_once(&mut files);
            }
        } else if found.is_ok() || !is_glob(&text) {
            found.map_err(|e| Error::io(input, e))?;
            files.push(input.to_path_buf());
        } else {
            for path in glob_matches(input)? {
                if wildcard_matched_skipped_name(input, &path) {
                    continue;
                }
                if path.is_dir() {
                    walk(&path, &mut files)?;
                } else {
                    files.push(path);
                }
            }
            // A pattern follows symbolic links to directories, so a link
            // to a directory above it (`d/up -> ..`) matches a file again
            // at each level, until the system's limit on links in a path.
            each_once(&mut files);
        }
        Ok(files)
    }
}

/// Keeps each file of `files` once, under its shortest path (the one that
/// does not go round a link to a directory above it), and a path past the
/// system's limit on links in a path not at all: a file and a link to it
/// are one file.
fn each_once(files: &mut Vec<PathBuf>) {
    let mut shortest: HashMap<PathBuf, &Path> = HashMap::with_capacity(files.len());
    for file in files.iter() {
        let found = match std::fs::canonicalize(file) {
            Ok(found) => found,
            Err(e) if is_link_loop(&e) => continue,
            // Opening it says what is wrong.
            Err(_) => file.clone(),
        };
        let kept = shortest.entry(found).or_insert(file);
        if file.components().count() < kept.components().count() {
            *kept = file;
        }
    }
    let kept: HashSet<PathBuf> = shortest.into_values().map(Path::to_path_buf).collect();
    files.retain(|f| kept.contains(f));
}

/// The paths that glob `pattern` matches. Its directories are walked from
/// its [`glob_root`], following symbolic links (as a shell's glob does)
/// but not a link to a directory the walk is already in: with
/// `d/up -> ..` and `d/again -> d` beside each other, every path through
/// them would be a match, two more at each level, and the walk would not
/// end. Only directories that a match can be under are read (another's
/// unreadable directory beside them is no error). As a shell's `*` does,
/// a wildcard does not match a leading `.` (nor a leading `_`: see
/// [`wildcard_matched_skipped_name`]); `**` matches directories, at any
/// depth, and `dir/*/` directories alone.
fn glob_matches(pattern: &Path) -> Result<Vec<PathBuf>> {
    let refused = |why: String| Error::new(ErrorKind::Usage, why).in_file(pattern);
    let compiled = |text: &str| {
        glob::Pattern::new(text).map_err(|e| refused(format!("not a glob pattern: {e}")))
    };
    let options = glob::MatchOptions {
        require_literal_separator: true,
        require_literal_leading_dot: true,
        ..glob::MatchOptions::new()
    };
    // Matched as the glob crate gives its paths: without `./`.
    let matcher = compiled(&without_leading_dot(pattern).to_string_lossy())?;
    let root = glob_root(pattern);
    // The pattern's components below its root, each matching a name.
    let mut steps = Vec::new();
    for component in pattern.strip_prefix(&root).unwrap_or(pattern).components() {
        let text = component.as_os_str().to_string_lossy();
        match text.as_ref() {
            "**" => steps.push(None),
            // The walk goes down, never back up a link it followed.
            ".." => {
                return Err(refused(
                    "a pattern's `..` after its first wildcard is not followed: name the directory it leads to".into(),
                ));
            }
            _ => steps.push(Some(compiled(&text)?)),
        }
    }
    let any_depth = steps.iter().position(Option::is_none);
    let text = pattern.to_string_lossy();
    let directories_only = text.ends_with('/') || text.ends_with("**");
    // Whether a directory's name, `depth` steps below the root, may lead
    // to a match: at or below a `**`, any name but a hidden one.
    let may_lead = |name: &str, depth: usize| match steps.get(depth - 1) {
        _ if any_depth.is_some_and(|at| at < depth) => !name.starts_with('.'),
        Some(Some(step)) => step.matches_with(name, options),
        _ => false,
    };
    let mut walk = walkdir::WalkDir::new(&root).follow_links(true).min_depth(1);
    if any_depth.is_none() {
        walk = walk.max_depth(steps.len());
    }
    let mut found = Vec::new();
    let walk = walk.into_iter().filter_entry(|entry| {
        !entry.file_type().is_dir() || may_lead(&entry.file_name().to_string_lossy(), entry.depth())
    });
    for entry in walk {
        let entry = match entry {
            Ok(entry) => entry,
            // A link to a directory the walk is in: its paths are found
            // through that directory.
            Err(e) if e.loop_ancestor().is_some() => continue,
            Err(e) => {
                let at = e.path().unwrap_or(&root).to_path_buf();
                let Some(io) = e.into_io_error() else {
                    continue;
                };
                if is_link_loop(&io) {
                    continue;
                }
                // A dangling link that matches a file is kept, for its
                // open to name it.
                if io.kind() == io::ErrorKind::NotFound {
                    let path = without_leading_dot(&at);
                    if !directories_only && matcher.matches_path_with(&path, options) {
                        found.push(path);
                    }
                    continue;
                }
                return Err(Error::io(&at, io));
            }
        };
        if directories_only && !entry.file_type().is_dir() {
            continue;
        }
        let path = without_leading_dot(entry.path());
        if matcher.matches_path_with(&path, options) {
            found.push(path);
        }
    }
    Ok(found)
}

/// Whether `e` is the system's "too many levels of symbolic links"
/// (`ELOOP`), which `io::ErrorKind` names only unstably.
fn is_link_loop(e: &io::Error) -> bool {
    let eloop = if cfg!(target_os = "linux") { 40 } else { 62 };
    e.raw_os_error() == Some(eloop)
}

/// Whether a wildcard of `pattern` matched a name of `path` that starts
/// with `_` (`dir/*/` matching `dir/_tmp/`): a name a directory's walk
/// skips is read only where the pattern spells its first character
/// (`dir/_tmp/*`, `dir/_*/`).
fn wildcard_matched_skipped_name(pattern: &Path, path: &Path) -> bool {
    let named = |path: &Path| -> Vec<String> {
        without_leading_dot(path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let first_wildcard = without_leading_dot(&glob_root(pattern))
        .components()
        .count();
    let pattern = named(pattern);
    if first_wildcard == pattern.len() {
        return false;
    }
    let spelled = pattern[first_wildcard..].iter().any(|c| c.starts_with('_'));
    !spelled
        && named(path)
            .iter()
            .skip(first_wildcard)
            .any(|c| underscored(c))
}

/// `path` without the `./` it may start with: the glob crate drops it
/// from the paths it gives, and a name compared with them must too.
pub(crate) fn without_leading_dot(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// A glob pattern's directories before its first wildcard, as written
/// (`logs/` of `logs/day=*/*.parquet`; a URL's `//` kept): where its
/// matches are found (`.` when it starts with one). A path without
/// wildcards is its own.
pub fn glob_root(pattern: &Path) -> PathBuf {
    let text = pattern.to_string_lossy();
    match text.find(GLOB_CHARACTERS) {
        Some(at) => match text[..at].rfind('/') {
            Some(slash) => PathBuf::from(&text[..=slash]),
            None => PathBuf::from("."),
        },
        None => pattern.to_path_buf(),
    }
}

pub(crate) fn parquet_files_beneath(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if walk(dir, &mut files)? {
        each_once(&mut files);
    }
    files.sort();
    Ok(files)
}

/// Adds the `*.parquet` files beneath `dir` to `files`, skipping names
/// that start with `_` or `.`; says whether one was a symbolic link. A
/// link to a file is read (one to a file that is not there is an error,
/// as it is when a pattern names it); one to a directory is not followed,
/// so that a loop cannot make the walk endless.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<bool> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut links = false;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if skipped(&name) {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            links |= walk(&path, files)?;
        } else if !is_dataset_file(&name) {
            continue;
        } else if kind.is_file() {
            files.push(path);
        } else if kind.is_symlink() {
            let target = std::fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
            if target.is_file() {
                files.push(path);
                links = true;
            }
        }
    }
    Ok(links)
}
