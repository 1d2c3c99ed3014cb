//! Datasets: many Parquet files read as one, whatever their layouts.
//!
//! A dataset is a file, a directory (every `*.parquet` beneath it,
//! recursively, in path order; names starting with `_` or `.` are skipped,
//! as Spark and Hive skip `_SUCCESS` and `.crc` files) or a glob pattern
//! (`logs/day=*/*.parquet`). Rows come in path order, then in file order.
//! Hive-style `key=value` directories are not read as columns.
//!
//! Files may differ in everything the spec allows, because each is read
//! with a plan of its own ([`ParquetFile::plan_get`]): its own shredding
//! (or none), INT or FLBA decimals, a field typed int64 in one file and
//! string in another. A column some files lack reads as null in theirs,
//! the Variant column included. So every answer is what reading each file
//! alone gives, and files are opened one at a time: memory does not grow
//! with their number.

use std::path::{Path, PathBuf};

use arrow::array::{ArrayRef, RecordBatch};

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{GetRequest, ParquetFile, ReadStats, ScanOptions};
use crate::predicate::Operand;

/// The files of a dataset, in path order.
pub struct Dataset {
    files: Vec<PathBuf>,
    /// Their columns, once read from the footers.
    columns: std::sync::OnceLock<DatasetColumns>,
    /// The file of a one-file dataset, kept open once its footer is read,
    /// so that the footer is read once.
    only: std::sync::OnceLock<ParquetFile>,
}

/// What a read of a dataset read, summed over its files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetStats {
    /// Files in the dataset.
    pub files: usize,
    /// Files of which no row group was read (their footers ruled them out).
    pub files_skipped: usize,
    /// Row groups, rows and pages, summed; warnings, each once.
    pub read: ReadStats,
}

/// The columns of a dataset's files, each named once, in the order they
/// first appear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetColumns {
    /// Every top-level column.
    pub all: Vec<String>,
    /// Those that are Variant columns in some file.
    pub variants: Vec<String>,
}

impl Dataset {
    /// The files `input` names: itself if it is a file; every `*.parquet`
    /// beneath a directory, recursively, skipping names that start with
    /// `_` or `.`; or the files a glob pattern matches. In path order. An
    /// input that matches no file is an error.
    pub fn find(input: &Path) -> Result<Dataset> {
        let text = input.to_string_lossy();
        let mut files = Vec::new();
        if input.is_dir() {
            walk(input, &mut files)?;
        } else if input.exists() || !text.contains(['*', '?', '[']) {
            files.push(input.to_path_buf());
        } else {
            let paths = glob::glob(&text).map_err(|e| {
                Error::new(ErrorKind::Usage, format!("not a glob pattern: {e}")).in_file(input)
            })?;
            for path in paths {
                let path = path.map_err(|e| {
                    let at = e.path().to_path_buf();
                    Error::io(&at, e.into())
                })?;
                if path.is_dir() {
                    walk(&path, &mut files)?;
                } else {
                    files.push(path);
                }
            }
        }
        files.sort();
        files.dedup();
        if files.is_empty() {
            return Err(Error::new(
                ErrorKind::Usage,
                "no Parquet file here (a directory's files must end in .parquet)",
            )
            .in_file(input));
        }
        Ok(Dataset::from_files(files))
    }

    /// A dataset of these files, in this order.
    pub fn from_files(files: Vec<PathBuf>) -> Dataset {
        Dataset {
            files,
            columns: std::sync::OnceLock::new(),
            only: std::sync::OnceLock::new(),
        }
    }

    /// The files, in path order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Opens each file in turn, a footer at a time.
    fn each(&self, mut f: impl FnMut(&ParquetFile) -> Result<()>) -> Result<()> {
        if let [path] = self.files.as_slice() {
            let file = match self.only.get() {
                Some(file) => file,
                None => {
                    let file = ParquetFile::open(path)?;
                    self.only.get_or_init(|| file)
                }
            };
            return f(file).map_err(|e| e.in_file(path));
        }
        for path in &self.files {
            let file = ParquetFile::open(path)?;
            f(&file).map_err(|e| e.in_file(path))?;
        }
        Ok(())
    }

    /// The columns of all the files (their footers are read, once).
    pub fn columns(&self) -> Result<&DatasetColumns> {
        if let Some(columns) = self.columns.get() {
            return Ok(columns);
        }
        let mut columns = DatasetColumns::default();
        self.each(|file| {
            for name in file.column_names() {
                if !columns.all.contains(&name) {
                    columns.all.push(name);
                }
            }
            for name in file.variant_columns() {
                if !columns.variants.contains(&name) {
                    columns.variants.push(name);
                }
            }
            Ok(())
        })?;
        Ok(self.columns.get_or_init(|| columns))
    }

    /// The Variant column a command works on, as
    /// [`ParquetFile::choose_variant_column`] chooses it, over the columns
    /// of every file.
    pub fn choose_variant_column(&self, requested: Option<&str>) -> Result<String> {
        let variants = &self.columns()?.variants;
        if let Some(name) = requested {
            if variants.iter().any(|v| v == name) {
                return Ok(name.to_string());
            }
            return Err(self.no_column(name, "Variant column", variants));
        }
        match variants.as_slice() {
            [only] => Ok(only.clone()),
            _ if variants.iter().any(|c| c == "v") => Ok("v".into()),
            [] => Err(Error::new(ErrorKind::Usage, "no file has a Variant column")),
            _ => Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "choose a Variant column with --column (the files have: {})",
                    variants.join(", ")
                ),
            )),
        }
    }

    #[cold]
    fn no_column(&self, name: &str, what: &str, have: &[String]) -> Error {
        let files = match self.files.len() {
            1 => "the file".to_string(),
            n => format!("any of the {n} files"),
        };
        Error::new(
            ErrorKind::Usage,
            format!(
                "no {what} {name:?} in {files} (they have: {})",
                have.join(", ")
            ),
        )
    }

    /// Fails unless every name is a column of some file.
    fn check_columns<'n>(
        &self,
        columns: &DatasetColumns,
        names: impl IntoIterator<Item = &'n String>,
    ) -> Result<()> {
        for name in names {
            if !columns.all.contains(name) {
                return Err(self.no_column(name, "column", &columns.all));
            }
        }
        Ok(())
    }

    /// Every row of every file as one JSON object per line, with the
    /// top-level `columns` (all when `None`) in the order they first appear
    /// in the files, null where a file lacks one: what `vshred cat`
    /// prints. Each batch's lines go to `sink` as one block, in order.
    pub fn json_lines(
        &self,
        columns: Option<&[String]>,
        options: &ScanOptions,
        mut sink: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let known = self.columns()?;
        let chosen: Vec<String> = match columns {
            Some(names) => {
                self.check_columns(known, names)?;
                known
                    .all
                    .iter()
                    .filter(|c| names.contains(c))
                    .cloned()
                    .collect()
            }
            None => known.all.clone(),
        };
        self.each(|file| file.json_lines_of(&chosen, options, &mut sink))
    }

    /// A `variant_get` over every file ([`ParquetFile::get_with`]), each
    /// file with its own plan; `sink` gets each batch's result and the
    /// `with` columns beside it, in order. Names must be columns of some
    /// file; a file without one reads it as null.
    pub fn get_with(
        &self,
        request: &GetRequest,
        with: &[String],
        options: &ScanOptions,
        mut sink: impl FnMut(&ArrayRef, &RecordBatch) -> Result<()>,
    ) -> Result<DatasetStats> {
        let known = self.columns()?;
        self.check_columns(known, with)?;
        if let Some(filter) = &request.filter {
            let names = filter.operands().into_iter().filter_map(|o| match o {
                Operand::Column(name) => Some(name),
                Operand::Path(_) => None,
            });
            self.check_columns(known, names)?;
        }
        if !known.variants.contains(&request.column) {
            return Err(self.no_column(&request.column, "Variant column", &known.variants));
        }
        let mut stats = DatasetStats {
            files: self.files.len(),
            ..DatasetStats::default()
        };
        self.each(|file| {
            let read = file.get_present(request, with, options, &mut sink)?;
            if read.row_groups_read == 0 {
                stats.files_skipped += 1;
            }
            stats.read.add(read);
            Ok(())
        })?;
        Ok(stats)
    }
}

/// The `*.parquet` files beneath `dir` that [`Dataset::find`] would read,
/// in path order (none: an empty list, not an error).
pub(crate) fn parquet_files_beneath(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    Ok(files)
}

/// Adds the `*.parquet` files beneath `dir` to `files`, skipping names
/// that start with `_` or `.`. A symbolic link to a file is read; one to a
/// directory is not followed, so that a loop cannot make the walk endless.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('_') || name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if name.ends_with(".parquet") && path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}
