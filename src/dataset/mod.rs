//! Datasets: many Parquet files read as one, whatever their layouts.
//!
//! A dataset is a file, a directory (every `*.parquet` beneath it,
//! recursively, in path order; names starting with `_` or `.` are skipped,
//! as Spark and Hive skip `_SUCCESS` and `.crc` files) or a glob pattern
//! (`logs/day=*/*.parquet`). Rows come in path order, then in file order.
//! Hive-style `key=value` directories beneath it are columns ([`hive`]).
//!
//! Files may differ in everything the spec allows, because each is read
//! with a plan of its own ([`ParquetFile::plan_get`]): its own shredding
//! (or none), INT or FLBA decimals, a field typed int64 in one file and
//! string in another. A column some files lack reads as null in theirs,
//! the Variant column included. So every answer is what reading each file
//! alone gives.
//!
//! A read runs in two passes over the footers, each on the worker pool.
//! The first reads every footer, to know the columns of all files before
//! the first row is given (a row has them all); it keeps the footers, up
//! to [`FOOTER_CACHE_BYTES`] ([`Dataset::with_footer_budget`]), so that
//! most datasets have each footer read once, and converts each layout's
//! schema to Arrow once ([`Layouts`]). The second is one scan on the
//! executor that [`ParquetFile::scan`] runs on: a file at a time is opened
//! and planned, in path order, and its row groups are read by whichever
//! worker is free, results in order. So the workers are spawned once, the
//! next file is planned while the last is read, and only the files being
//! read are open: memory does not grow with their number, beyond the
//! kept footers.
//!
//! A query engine reads a projection of a dataset in [`partition`]s
//! instead, each on a thread of its own and in no order between them.
//!
//! The files are local unless the dataset is found in another
//! [`storage`] ([`Dataset::find_in`]): an object store, read through the
//! same plans, a column chunk per request.

pub mod hive;
pub mod partition;
pub mod schema;
pub mod storage;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::{
    Footer, GetRequest, Layouts, ParquetFile, Projected, Projection, ReadStats, ScanOptions,
    ScanPlan, get_of_batch, json_lines_of_batch, run_ordered,
};
use crate::path::{PathSegment, VariantPath};
use crate::predicate::{Operand, Predicate};
use crate::variant::Kind;
use hive::{HiveColumns, HiveValues};
use schema::{ColumnType, DatasetSchema, Disagreement};
pub(crate) use storage::parquet_files_beneath;
use storage::{LocalFiles, Storage, glob_root, is_glob};

/// The most memory the footers kept between a dataset's passes take; the
/// footers of more files than fit are read again when their file is
/// scanned. Footers of files of a few row groups take some kilobytes, so
/// this keeps those of thousands of files.
pub const FOOTER_CACHE_BYTES: usize = 64 << 20;

/// The files of a dataset, in path order.
pub struct Dataset {
    files: Vec<PathBuf>,
    /// Where they are.
    storage: Arc<dyn Storage>,
    /// What the first pass over the footers found.
    footers: OnceLock<Footers>,
    /// The Arrow schemas of the files' layouts, each converted once.
    layouts: Layouts,
    /// The most memory the kept footers take.
    footer_budget: usize,
    /// Of a dataset's share ([`Dataset::share`]): the number, in the whole
    /// dataset, of each file's first row group.
    numbering: Option<Vec<usize>>,
    /// The columns its `key=value` directories hold.
    hive: Option<Arc<HiveColumns>>,
    /// Of a share: each file as it was where the whole dataset's footers
    /// were read, which it must be when opened again (a worker that sees
    /// other files would read other row groups, or other rows).
    expected: Option<Vec<FileIdentity>>,
    /// Where it is read, as a file's mismatch with [`Dataset::expected`]
    /// names the place: `worker 127.0.0.1:7401`; "here" unless set.
    read_on: Option<String>,
    /// Footers an earlier dataset of the same input read, by path: its
    /// first pass opens a file with its footer there unless it has changed
    /// since ([`Dataset::found_again`]).
    earlier: HashMap<PathBuf, Footer>,
}

/// What tells a file apart from another at its path, short of reading it
/// all: its size and its footer's
/// [`fingerprint`](ParquetFile::fingerprint) (which holds every column
/// chunk's offsets and statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    /// In bytes.
    pub size: u64,
    /// `None` where the footer was not read as bytes.
    pub fingerprint: Option<u64>,
}

impl FileIdentity {
    fn of(file: &ParquetFile) -> FileIdentity {
        FileIdentity {
            size: file.size(),
            fingerprint: file.fingerprint(),
        }
    }
}

/// What a dataset's first pass read of its footers.
struct Footers {
    columns: DatasetColumns,
    /// Row groups in all the files.
    row_groups: usize,
    /// The number of each file's first row group: its index among them,
    /// or in the whole dataset of a share.
    first_row_group: Vec<usize>,
    /// Each file, as its footer was read.
    identities: Vec<FileIdentity>,
    /// Each file's row groups.
    file_row_groups: Vec<usize>,
    /// The compressed bytes of all the row groups.
    bytes: u64,
    /// Rows in all the files.
    rows: u64,
    /// Each file's footer, while they fit in the budget.
    kept: Vec<Option<Footer>>,
}

impl Footers {
    /// File `i`'s first row group (its number in the whole dataset) and
    /// how many it has.
    fn row_groups_of(&self, i: usize) -> (usize, usize) {
        (self.first_row_group[i], self.file_row_groups[i])
    }
}

/// A file being scanned, with its plan.
struct PlannedFile {
    /// The values of its `key=value` directories' columns.
    hive: Option<HiveValues>,
    file: ParquetFile,
    plan: ScanPlan,
    /// Its Variant columns.
    variants: Vec<String>,
}

impl std::fmt::Debug for Dataset {
    /// Its files (what else it holds is caches).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dataset")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// What a read of a dataset read, summed over its files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetStats {
    /// Files in the dataset.
    pub files: usize,
    /// Files of which no row group was read (their footers ruled them out).
    pub files_skipped: usize,
    /// Row groups, rows and pages, summed; the warnings every file gives.
    pub read: ReadStats,
}

/// The columns of a dataset's files, each named once, in the order they
/// first appear, with the type the files agree on
/// ([`schema`'s rule](schema#which-columns-agree)) or where they disagree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetColumns {
    /// Every top-level column.
    pub all: Vec<String>,
    /// Their types, in the same order.
    pub types: Vec<ColumnType>,
    /// In how many files each appears, in the same order.
    pub files: Vec<usize>,
    /// Those that are Variant columns.
    pub variants: Vec<String>,
    /// Per column: the first file that has it with its type in `types`,
    /// for errors.
    type_files: Vec<PathBuf>,
    /// Per column: where two files disagree on its type, which fails a
    /// read of it alone.
    disagreements: Vec<Option<Disagreement>>,
    /// Each column's index in `all`: datasets may have thousands of
    /// columns and of files.
    index: HashMap<String, usize>,
}

impl DatasetColumns {
    /// Adds the columns of `hive`, which `files` hold in their
    /// directories: a column some file holds too is an error.
    pub(super) fn add_hive(&mut self, hive: &HiveColumns, files: &[PathBuf]) -> Result<()> {
        let under = files.iter().filter(|f| hive.holds(f)).count();
        for (name, hive_type) in hive.columns() {
            if let Some(&at) = self.index.get(name) {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!(
                        "the column {name:?} is both in this file and in the dataset's {name}=... directories; read the files alone, or name the directories otherwise"
                    ),
                )
                .in_file(&self.type_files[at]));
            }
            self.index.insert(name.clone(), self.all.len());
            self.all.push(name.clone());
            self.types.push(ColumnType::Plain(hive_type.data_type()));
            self.files.push(under);
            self.type_files
                .push(files.first().cloned().unwrap_or_default());
            self.disagreements.push(None);
        }
        Ok(())
    }

    /// Adds the columns of `file`: those not seen before, and the type of
    /// those seen, which agrees with it or marks the column's first
    /// disagreement. Returns the index of each of the file's columns and
    /// its type there, in the file's order.
    fn add(&mut self, file: &ParquetFile) -> Vec<(usize, ColumnType)> {
        let mut indices = Vec::new();
        for (name, column_type) in schema::column_types(file) {
            let at = match self.index.get(&name) {
                Some(&at) => {
                    match schema::agreed(&self.types[at], &column_type) {
                        Some(agreed) if agreed != self.types[at] => {
                            if agreed == ColumnType::Variant {
                                self.variants.push(name.clone());
                            }
                            self.types[at] = agreed;
                            self.type_files[at] = file.path().to_path_buf();
                        }
                        Some(_) => {}
                        None if self.disagreements[at].is_none() => {
                            self.disagreements[at] = Some(Disagreement {
                                seen: self.types[at].clone(),
                                seen_file: self.type_files[at].clone(),
                                other: column_type.clone(),
                                other_file: file.path().to_path_buf(),
                            });
                        }
                        None => {}
                    }
                    self.files[at] += 1;
                    at
                }
                None => {
                    if column_type == ColumnType::Variant {
                        self.variants.push(name.clone());
                    }
                    self.index.insert(name.clone(), self.all.len());
                    self.all.push(name);
                    self.types.push(column_type.clone());
                    self.files.push(1);
                    self.type_files.push(file.path().to_path_buf());
                    self.disagreements.push(None);
                    self.all.len() - 1
                }
            };
            indices.push((at, column_type));
        }
        indices
    }

    /// Fails when a column of `file`, opened to be read, no longer has a
    /// type the dataset's does: the file was replaced since its footer
    /// was first read (its columns would read as nulls, or not at all).
    fn still_agree(&self, file: &ParquetFile) -> Result<()> {
        for (name, column_type) in schema::column_types(file) {
            // A column the files disagree on fails its own reads.
            let Some(&at) = self.index.get(&name) else {
                continue;
            };
            if self.disagreements[at].is_some() {
                continue;
            }
            let known = &self.types[at];
            if schema::agreed(known, &column_type).as_ref() != Some(known) {
                return Err(Error::new(
                    ErrorKind::Incompatible,
                    format!(
                        "the file changed while the dataset was read: its column {name:?} is {column_type} now, where the dataset's is {known}"
                    ),
                )
                .in_file(file.path()));
            }
        }
        Ok(())
    }

    /// Where two files disagree on the type of column `name`, if they do.
    pub fn disagreement(&self, name: &str) -> Option<&Disagreement> {
        self.index
            .get(name)
            .and_then(|&at| self.disagreements[at].as_ref())
    }

    /// Fails when the files disagree on the type of column `name`.
    pub fn agree_on(&self, name: &str) -> Result<()> {
        match self.disagreement(name) {
            Some(disagreement) => Err(disagreement.error(name)),
            None => Ok(()),
        }
    }

    /// The columns the files agree on the type of, in order, where they
    /// disagree on some (`None` where they agree on every one).
    pub fn agreed(&self) -> Option<Vec<&str>> {
        let agreed: Vec<&str> = (self.all.iter().zip(&self.disagreements))
            .filter(|(_, disagreement)| disagreement.is_none())
            .map(|(name, _)| name.as_str())
            .collect();
        (agreed.len() < self.all.len()).then_some(agreed)
    }

    /// Fails when the files disagree on the type of any column.
    pub fn all_agree(&self) -> Result<()> {
        self.all.iter().try_for_each(|name| self.agree_on(name))
    }

    /// Warnings for comparisons of an ordinary column with a literal of
    /// another kind than its values (`d == 19787` on a date column): no
    /// row can pass them. Columns `skipped` (a dataset's directories'
    /// columns, warned of apart) are left out.
    fn never_matching(&self, filter: &Predicate, skipped: impl Fn(&str) -> bool) -> Vec<String> {
        let mut warnings = Vec::new();
        for comparison in filter.comparisons() {
            let Operand::Column(name) = &comparison.operand else {
                continue;
            };
            if skipped(name) {
                continue;
            }
            let Some(kind) = self.plain_type(name).as_ref().and_then(plain_kind) else {
                continue;
            };
            warnings.extend(comparison.never_passes(kind));
        }
        warnings
    }

    /// The type of ordinary column `name`, as the files agree on it or
    /// (where they disagree) as the first file has it; `None` for a
    /// Variant column and for a column no file has.
    pub fn plain_type(&self, name: &str) -> Option<DataType> {
        match self.index.get(name).map(|&at| &self.types[at]) {
            Some(ColumnType::Plain(t)) => Some(t.clone()),
            _ => None,
        }
    }
}

impl Dataset {
    /// The files `input` names: itself if it is a file; every `*.parquet`
    /// beneath a directory, recursively, skipping names that start with
    /// `_` or `.`; or the files a glob pattern matches. In path order. An
    /// input that matches no file is an error.
    pub fn find(input: &Path) -> Result<Dataset> {
        Dataset::find_in(input, Arc::new(LocalFiles))
    }

    /// The files `input` names in `storage` ([`Storage::find`]), in path
    /// order, read from there. An input that matches no file is an error.
    pub fn find_in(input: &Path, storage: Arc<dyn Storage>) -> Result<Dataset> {
        let files = storage.find(input)?;
        Dataset::of_found(input, files, storage)
    }

    /// The dataset of `files`, which `storage` found for `input`
    /// ([`Storage::find`]): for a caller that looks at them first.
    pub fn of_found(
        input: &Path,
        mut files: Vec<PathBuf>,
        storage: Arc<dyn Storage>,
    ) -> Result<Dataset> {
        files.sort();
        files.dedup();
        // Counted from the directory named, or a glob's before its first
        // wildcard.
        let hive = match files.as_slice() {
            [only] if only == input => None,
            _ => HiveColumns::find(&glob_root(input), &files)?,
        };
        if files.is_empty() {
            let why = match is_glob(&input.to_string_lossy()) && !input.exists() {
                true => {
                    "no Parquet file matches this pattern (its wildcards skip names starting with _ or .)"
                }
                false => "no Parquet file here (a directory's files must end in .parquet)",
            };
            return Err(Error::new(ErrorKind::Usage, why).in_file(input));
        }
        Ok(Dataset::from_files(files)
            .with_storage(storage)
            .with_hive_columns(hive))
    }

    /// A dataset of these local files, in this order.
    pub fn from_files(files: Vec<PathBuf>) -> Dataset {
        Dataset {
            files,
            storage: Arc::new(LocalFiles),
            footers: OnceLock::new(),
            layouts: Layouts::default(),
            footer_budget: FOOTER_CACHE_BYTES,
            numbering: None,
            hive: None,
            expected: None,
            read_on: None,
            earlier: HashMap::new(),
        }
    }

    /// The files `input` (what this dataset was found from) names now, in
    /// its storage, as [`Dataset::find_in`] finds them: for a table read
    /// again and again while its files may change. The footers this one
    /// has read are not read again where their files are as they were
    /// (their length and modification time).
    pub fn found_again(&self, input: &Path) -> Result<Dataset> {
        let mut again = Dataset::find_in(input, self.storage.clone())?;
        if let Some(footers) = self.footers.get() {
            again.earlier = (self.files.iter().zip(&footers.kept))
                .filter_map(|(path, kept)| Some((path.clone(), kept.clone()?)))
                .collect();
        }
        Ok(again)
    }

    /// The dataset with `hive`'s columns, whose values each file's
    /// `key=value` directories give ([`hive`]); [`Dataset::find`] finds
    /// them.
    pub fn with_hive_columns(mut self, hive: Option<HiveColumns>) -> Dataset {
        self.hive = hive.map(Arc::new);
        self
    }

    /// The columns its `key=value` directories hold, if any.
    pub fn hive_columns(&self) -> Option<&HiveColumns> {
        self.hive.as_deref()
    }

    /// The dataset with its files read from `storage` (which names them).
    pub fn with_storage(mut self, storage: Arc<dyn Storage>) -> Dataset {
        self.storage = storage;
        self
    }

    /// A share of a larger dataset: these files, each with the number of
    /// its first row group in that dataset ([`Dataset::share`] and
    /// [`Dataset::numbering`] give them), so that a partition of the larger
    /// one reads from this the row groups it would read from that.
    pub fn from_numbered_files(files: Vec<(PathBuf, usize)>) -> Dataset {
        let (files, numbering) = files.into_iter().unzip();
        Dataset {
            numbering: Some(numbering),
            ..Dataset::from_files(files)
        }
    }

    /// Of a dataset's share, the number of each file's first row group in
    /// the whole dataset; `None` for a whole dataset.
    pub fn numbering(&self) -> Option<&[usize]> {
        self.numbering.as_deref()
    }

    /// The dataset whose files must be these, in order, when opened
    /// ([`Dataset::share`] gives them as its footers were read): a file of
    /// another size or footer is an error naming it, not other row groups
    /// or rows read.
    pub fn with_expected_files(mut self, files: Vec<FileIdentity>) -> Dataset {
        self.expected = Some(files);
        self
    }

    /// What its files must be ([`with_expected_files`](Self::with_expected_files)).
    pub fn expected_files(&self) -> Option<&[FileIdentity]> {
        self.expected.as_deref()
    }

    /// The dataset whose files, where they are not the ones expected, are
    /// said to be so on `place` (`worker 127.0.0.1:7401`), not "here": a
    /// client of several workers learns which one sees other files.
    pub fn read_on(mut self, place: String) -> Dataset {
        self.read_on = Some(place);
        self
    }

    /// Where it is read, in a message: "here" or "on `place`".
    fn here(&self) -> String {
        match &self.read_on {
            Some(place) => format!("on {place}"),
            None => "here".into(),
        }
    }

    /// Keeps footers between the passes only while they take at most
    /// `bytes` ([`FOOTER_CACHE_BYTES`] unless set): less memory, more
    /// footers read twice.
    pub fn with_footer_budget(mut self, bytes: usize) -> Dataset {
        self.footer_budget = bytes;
        self
    }

    /// The files, in path order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The columns of all the files.
    pub fn columns(&self) -> Result<&DatasetColumns> {
        Ok(&self.footers(&ScanOptions::default())?.columns)
    }

    /// The rows of all the files, as their footers count them.
    pub fn rows(&self) -> Result<u64> {
        Ok(self.footers(&ScanOptions::default())?.rows)
    }

    /// The row groups of all the files.
    pub fn row_groups(&self) -> Result<usize> {
        Ok(self.footers(&ScanOptions::default())?.row_groups)
    }

    /// The compressed bytes of all the files' row groups.
    pub fn size(&self) -> Result<u64> {
        Ok(self.footers(&ScanOptions::default())?.bytes)
    }

    /// The first pass: every footer read, on the worker pool, the columns
    /// gathered in file order, the footers kept while they fit.
    fn footers(&self, options: &ScanOptions) -> Result<&Footers> {
        if let Some(footers) = self.footers.get() {
            return Ok(footers);
        }
        let mut footers = Footers {
            columns: DatasetColumns::default(),
            row_groups: 0,
            first_row_group: Vec::with_capacity(self.files.len()),
            file_row_groups: Vec::with_capacity(self.files.len()),
            identities: Vec::with_capacity(self.files.len()),
            bytes: 0,
            rows: 0,
            kept: Vec::with_capacity(self.files.len()),
        };
        let mut kept_bytes = 0;
        self.each_file(options, |file| {
            footers.columns.add(file);
            let file_row_groups = file.metadata().num_row_groups();
            let first = match &self.numbering {
                Some(numbering) => numbering[footers.first_row_group.len()],
                None => footers.row_groups,
            };
            footers.first_row_group.push(first);
            footers.file_row_groups.push(file_row_groups);
            footers.identities.push(FileIdentity::of(file));
            footers.row_groups += file_row_groups;
            footers.bytes += file
                .metadata()
                .row_groups()
                .iter()
                .map(|rg| rg.compressed_size().max(0) as u64)
                .sum::<u64>();
            footers.rows += file.metadata().file_metadata().num_rows().max(0) as u64;
            let footer = file.footer();
            kept_bytes += footer.memory_size();
            footers
                .kept
                .push((kept_bytes <= self.footer_budget).then_some(footer));
            Ok(())
        })?;
        if let Some(hive) = &self.hive {
            footers.columns.add_hive(hive, &self.files)?;
        }
        Ok(self.footers.get_or_init(|| footers))
    }

    /// Opens file `i`, with its kept footer if there is one, and plans it;
    /// `hive` is its directories' values ([`hive_values`](Self::hive_values)).
    fn open_planned(
        &self,
        footers: &Footers,
        i: usize,
        hive: Option<HiveValues>,
        plan: impl Fn(&ParquetFile) -> Result<ScanPlan>,
    ) -> Result<PlannedFile> {
        let path = &self.files[i];
        let file = self.open_file(i, footers.kept[i].as_ref())?;
        footers.columns.still_agree(&file)?;
        Ok(PlannedFile {
            hive,
            plan: plan(&file).map_err(|e| e.in_file(path))?,
            variants: file.variant_columns(),
            file,
        })
    }

    /// Opens file `i` (with `kept`, its footer read before, if kept),
    /// which must be the one expected, if any: of its size, checked before
    /// its footer is read, and with its footer (a file of the same size
    /// with other values has another).
    fn open_file(&self, i: usize, kept: Option<&Footer>) -> Result<ParquetFile> {
        let path = &self.files[i];
        let source = self.storage.open(path).map_err(|e| {
            // A file one worker cannot open and others can: which one.
            let error = Error::io(path, e);
            match &self.read_on {
                Some(place) => error.with_note(&format!("on {place}")),
                None => error,
            }
        })?;
        let expected = self.expected.as_ref().map(|files| files[i]);
        if let Some(expected) = expected.filter(|e| e.size != source.size()) {
            return Err(self.not_as_planned(
                i,
                format!(
                    "the file is {} bytes {} but was {} bytes where the query was planned",
                    source.size(),
                    self.here(),
                    expected.size
                ),
            ));
        }
        let file = match kept {
            Some(footer) => ParquetFile::open_with_footer(source, path, footer, &self.layouts)?,
            None => ParquetFile::open_in(source, path, &self.layouts)?,
        };
        match (expected.and_then(|e| e.fingerprint), file.fingerprint()) {
            (Some(planned), Some(here)) if planned != here => Err(self.not_as_planned(
                i,
                format!(
                    "the file's footer {} is not the one where the query was planned (the file is {} bytes in both, but holds other values or row groups)",
                    self.here(),
                    file.size()
                ),
            )),
            _ => Ok(file),
        }
    }

    /// File `i` is not the one the query was planned with, as `what` says.
    #[cold]
    fn not_as_planned(&self, i: usize, what: String) -> Error {
        Error::new(
            ErrorKind::Incompatible,
            format!("{what}: every worker must see the same files at the same paths"),
        )
        .in_file(&self.files[i])
    }

    /// Opens every file, its footer read on the worker pool, and hands
    /// each to `visit` in path order.
    fn each_file(
        &self,
        options: &ScanOptions,
        mut visit: impl FnMut(&ParquetFile) -> Result<()>,
    ) -> Result<()> {
        let mut indices = 0..self.files.len();
        run_ordered(
            options.workers(self.files.len()),
            || Ok(indices.next().map(|i| (i, 1))),
            |i, send| {
                send(self.open_file(i, self.earlier.get(&self.files[i]))?);
                Ok(())
            },
            |file| visit(&file),
        )
    }

    /// The files beneath the `key=value` directories in the local
    /// directory `root`, as one dataset: the one a directory written
    /// among them is part of ([`hive::partition_root`]). `None` when they
    /// hold no Parquet file.
    pub fn of_partitions(root: &Path) -> Result<Option<Dataset>> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(root).map_err(|e| Error::io(root, e))? {
            let entry = entry.map_err(|e| Error::io(root, e))?;
            let name = entry.file_name();
            let partition = name.to_str().is_some_and(hive::is_key_value)
                && entry.file_type().is_ok_and(|t| t.is_dir());
            if !partition {
                continue;
            }
            // Named as the user names them: `day=1/...` in the working
            // directory, not `./day=1/...`.
            let dir = match root == Path::new(".") {
                true => PathBuf::from(&name),
                false => root.join(&name),
            };
            // A directory of no Parquet file holds none of the dataset.
            if let Ok(found) = LocalFiles.find(&dir) {
                files.extend(found);
            }
        }
        if files.is_empty() {
            return Ok(None);
        }
        Dataset::of_found(root, files, Arc::new(LocalFiles)).map(Some)
    }

    /// The columns on which `files` (just written beside this dataset's,
    /// or among them) disagree with the dataset's other files: for each,
    /// the other files' type and a file with it, then the type `files`
    /// give it and the first of them with it.
    pub fn disagreements_with(&self, files: &[PathBuf]) -> Result<Vec<(String, Disagreement)>> {
        let others: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|f| !files.contains(f))
            .cloned()
            .collect();
        let of =
            |files: Vec<PathBuf>| Dataset::from_files(files).with_storage(self.storage.clone());
        let (others, written) = (of(others), of(files.to_vec()));
        let (before, after) = (others.columns()?, written.columns()?);
        let mut found = Vec::new();
        for (at, name) in after.all.iter().enumerate() {
            let Some(&was) = before.index.get(name) else {
                continue;
            };
            if schema::agreed(&before.types[was], &after.types[at]).is_none() {
                found.push((
                    name.clone(),
                    Disagreement {
                        seen: before.types[was].clone(),
                        seen_file: before.type_files[was].clone(),
                        other: after.types[at].clone(),
                        other_file: after.type_files[at].clone(),
                    },
                ));
            }
        }
        Ok(found)
    }

    /// The dataset's schema ([`DatasetSchema`]): its columns, how each file
    /// shreds its Variant columns, its leaves' sizes; from the footers
    /// alone, read on the worker pool.
    pub fn schema(&self) -> Result<DatasetSchema> {
        let mut builder = schema::Builder::default();
        self.each_file(&ScanOptions::default(), |file| builder.add(file))?;
        if let Some(hive) = &self.hive {
            builder.add_hive(hive, &self.files)?;
        }
        Ok(builder.finish())
    }

    /// The second pass: one scan over all files, each planned by `plan`
    /// when its turn comes and its batches turned into `T`s by `map` on the
    /// workers; `sink` gets them in order. A file whose directories rule
    /// out one of `filters` is not opened. Returns what was read.
    fn scan<T: Send>(
        &self,
        options: &ScanOptions,
        filters: &[&Predicate],
        plan: impl Fn(&ParquetFile) -> Result<ScanPlan> + Sync,
        map: impl Fn(&PlannedFile, RecordBatch) -> Result<T> + Sync,
        sink: impl FnMut(T) -> Result<()>,
    ) -> Result<DatasetStats> {
        let footers = self.footers(options)?;
        let workers = options.workers(footers.row_groups);
        let mut stats = DatasetStats {
            files: self.files.len(),
            ..DatasetStats::default()
        };
        let mut next_file = 0;
        let mut current: Option<(Arc<PlannedFile>, usize)> = None;
        // Each file's count of bytes read, summed once the scan is done
        // (the files themselves are closed as they are done).
        let mut read_counters = Vec::new();
        let next_task = || loop {
            if let Some((planned, next)) = &mut current {
                let row_groups = planned.plan.row_groups();
                if let Some(i) = planned.plan.next_read(*next) {
                    *next = i + 1;
                    let rows = planned
                        .file
                        .metadata()
                        .row_group(row_groups[i].row_group)
                        .num_rows();
                    return Ok(Some(((planned.clone(), i), options.ahead(rows, workers))));
                }
            }
            if next_file == self.files.len() {
                return Ok(None);
            }
            let hive = self.hive_values(next_file)?;
            if self.ruled_out_by_directories(hive.as_ref(), filters) {
                stats.files_skipped += 1;
                stats
                    .read
                    .skip_by_directories(footers.file_row_groups[next_file]);
                next_file += 1;
                continue;
            }
            let planned = self.open_planned(footers, next_file, hive, &plan)?;
            next_file += 1;
            if planned.plan.stats().row_groups_read == 0 {
                stats.files_skipped += 1;
            }
            stats.read.add(planned.plan.stats().clone());
            read_counters.push(planned.file.read_counter());
            current = Some((Arc::new(planned), 0));
        };
        run_ordered(
            workers,
            next_task,
            |(planned, i): (Arc<PlannedFile>, usize), send| {
                let file = &planned.file;
                let row_group = &planned.plan.row_groups()[i];
                let map = |batch| map(&planned, batch);
                file.read_row_group(&planned.plan, row_group, options.batch_size, &map, send)
                    .map_err(|e| e.in_file(file.path()))
            },
            sink,
        )?;
        stats.read.bytes_read = read_counters
            .iter()
            .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            .sum();
        Ok(stats)
    }

    /// The values of file `i`'s `key=value` directories, if the dataset
    /// has such columns.
    fn hive_values(&self, i: usize) -> Result<Option<HiveValues>> {
        self.hive
            .as_ref()
            .map(|hive| hive.values(&self.files[i]))
            .transpose()
    }

    /// Whether a file's directories, of `values`, rule out one of
    /// `filters`.
    fn ruled_out_by_directories(
        &self,
        values: Option<&HiveValues>,
        filters: &[&Predicate],
    ) -> bool {
        let (Some(hive), Some(values)) = (&self.hive, values) else {
            return false;
        };
        filters.iter().any(|f| values.rules_out(hive, f))
    }

    /// `batch`, of `planned`, with the columns of its `key=value`
    /// directories that `wanted` names added.
    fn with_hive_columns_of(
        &self,
        planned: &PlannedFile,
        batch: RecordBatch,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<RecordBatch> {
        let (Some(hive), Some(values)) = (&self.hive, &planned.hive) else {
            return Ok(batch);
        };
        let added = values.arrays(hive, batch.num_rows(), wanted);
        if added.is_empty() {
            return Ok(batch);
        }
        let mut fields: Vec<_> = batch.schema().fields().iter().cloned().collect();
        let mut columns = batch.columns().to_vec();
        for (name, array) in added {
            fields.push(Arc::new(arrow::datatypes::Field::new(
                name,
                array.data_type().clone(),
                true,
            )));
            columns.push(array);
        }
        let options =
            arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(
            Arc::new(arrow::datatypes::Schema::new(fields)),
            columns,
            &options,
        )
        .map_err(|e| Error::new(ErrorKind::Schema, e.to_string()))
    }

    /// The Variant column a command works on, as
    /// [`ParquetFile::choose_variant_column`] chooses it, over the columns
    /// of every file.
    pub fn choose_variant_column(&self, requested: Option<&str>) -> Result<String> {
        let columns = self.columns()?;
        let variants = &columns.variants;
        if let Some(name) = requested {
            columns.agree_on(name)?;
            if variants.iter().any(|v| v == name) {
                return Ok(name.to_string());
            }
            return Err(self.no_column(name, "Variant column", variants));
        }
        // A column that is a Variant in some file only is one to choose
        // too, whose read then fails naming the files.
        let in_some_file = columns.all.iter().filter(|c| {
            !variants.contains(c)
                && columns.disagreement(c).is_some_and(|d| {
                    d.seen == ColumnType::Variant || d.other == ColumnType::Variant
                })
        });
        let candidates: Vec<String> = variants.iter().chain(in_some_file).cloned().collect();
        let chosen = match candidates.as_slice() {
            [only] => only.clone(),
            _ if candidates.iter().any(|c| c == "v") => "v".into(),
            [] => return Err(Error::new(ErrorKind::Usage, "no file has a Variant column")),
            _ => {
                return Err(Error::new(
                    ErrorKind::AmbiguousColumn,
                    candidates.join(", "),
                ));
            }
        };
        columns.agree_on(&chosen)?;
        Ok(chosen)
    }

    #[cold]
    fn no_column(&self, name: &str, what: &str, have: &[String]) -> Error {
        let files = match self.files.len() {
            1 => "the file".to_string(),
            n => format!("any of the {n} files"),
        };
        // Directory columns are named apart: they are not in the files.
        let in_directories = |c: &String| {
            self.hive
                .as_ref()
                .is_some_and(|hive| hive.columns().iter().any(|(name, _)| name == c))
        };
        let (directories, in_files): (Vec<&String>, Vec<&String>) =
            have.iter().partition(|c| in_directories(c));
        let join = |names: &[&String]| {
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let they = match self.files.len() {
            1 => "it has",
            _ => "they have",
        };
        let mut message = match in_files.is_empty() {
            true => format!("no {what} {name:?} in {files} ({they} none"),
            false => format!("no {what} {name:?} in {files} ({they}: {}", join(&in_files)),
        };
        if !directories.is_empty() {
            message += &format!("; their key=value directories: {}", join(&directories));
        }
        message.push(')');
        Error::new(ErrorKind::Usage, message)
    }

    /// Fails unless every name is a column of some file, of a type the
    /// files agree on.
    fn check_columns<'n>(
        &self,
        columns: &DatasetColumns,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<()> {
        for name in names {
            if !columns.all.iter().any(|c| c == name) {
                return Err(self.no_column(name, "column", &columns.all));
            }
            columns.agree_on(name)?;
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
        sink: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let known = &self.footers(options)?.columns;
        let chosen: Vec<String> = match columns {
            Some(names) => {
                self.check_columns(known, names.iter().map(String::as_str))?;
                known
                    .all
                    .iter()
                    .filter(|c| names.contains(c))
                    .cloned()
                    .collect()
            }
            None => {
                known.all_agree()?;
                known.all.clone()
            }
        };
        self.scan(
            options,
            &[],
            |file| file.plan_present_columns(&chosen),
            |planned, batch| {
                let batch = self.with_hive_columns_of(planned, batch, |name| {
                    chosen.iter().any(|c| c == name)
                })?;
                json_lines_of_batch(batch, Some(&chosen), &planned.variants)
            },
            sink,
        )?;
        Ok(())
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
        let known = &self.footers(options)?.columns;
        self.check_columns(known, with.iter().map(String::as_str))?;
        if let Some(filter) = &request.filter {
            for name in filter.operands().into_iter().filter_map(Operand::column) {
                self.check_columns(known, [name]).map_err(|e| {
                    // `id == 1` where `$.id == 1` was meant.
                    match known.variants.as_slice() {
                        [variant] if !known.all.iter().any(|c| c == name) => Error::new(
                            e.kind(),
                            format!(
                                "{}; a field of the Variant column {variant:?} is named by its path: {}",
                                e.message(),
                                VariantPath::new(vec![PathSegment::Field(name.into())])
                            ),
                        ),
                        _ => e,
                    }
                })?;
            }
        }
        // By the dataset's types: a file without the column converts none.
        let request = &request.with_instant_columns(&|name| known.plain_type(name))?;
        known.agree_on(&request.column)?;
        if !known.variants.contains(&request.column) {
            return Err(self.no_column(&request.column, "Variant column", &known.variants));
        }
        let filter_columns: Vec<&str> = request
            .filter
            .iter()
            .flat_map(|f| f.operands())
            .filter_map(Operand::column)
            .collect();
        let mut stats = self.scan(
            options,
            &request.filter.iter().collect::<Vec<_>>(),
            |file| file.plan_get_present(request, with),
            |planned, batch| {
                let batch = self.with_hive_columns_of(planned, batch, |name| {
                    with.iter().any(|c| c == name) || filter_columns.contains(&name)
                })?;
                get_of_batch(request, with, &batch)
            },
            |(values, with)| sink(&values, &with),
        )?;
        if let Some(filter) = &request.filter {
            // Each file warns of its own, but one without the column does
            // not, and a warning holds only if every file gives it.
            let in_directories = |name: &str| {
                self.hive
                    .as_ref()
                    .is_some_and(|hive| hive.columns().iter().any(|(n, _)| n == name))
            };
            let mut warnings = known.never_matching(filter, in_directories);
            if let Some(hive) = &self.hive {
                warnings.extend(hive.never_matching(filter));
            }
            for warning in warnings {
                if !stats.read.warnings.contains(&warning) {
                    stats.read.warnings.push(warning);
                }
            }
        }
        Ok(stats)
    }
}

/// The kind of the values of an ordinary column of `data_type`, where a
/// filter's literal can be of it.
fn plain_kind(data_type: &DataType) -> Option<Kind> {
    Some(match data_type {
        DataType::Boolean => Kind::Boolean,
        t if t.is_numeric() => Kind::Number,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::String,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) => Kind::Instant,
        DataType::Time32(_) | DataType::Time64(_) => Kind::Time,
        _ => return None,
    })
}

impl Dataset {
    /// The schema of the batches [`project_partition`](Self::project_partition) returns: the
    /// outputs' names with the types the files agree on, a Variant column
    /// as an unshredded one (the `arrow.parquet.variant` extension type).
    /// Fails when an output names a column no file has.
    pub fn projection_schema(&self, projection: &Projection) -> Result<SchemaRef> {
        let known = self.columns()?;
        for (_, output) in &projection.outputs {
            match output {
                Projected::Column(name) => self.check_columns(known, [name.as_str()])?,
                Projected::Json(column)
                | Projected::Path { column, .. }
                | Projected::Explode { column, .. } => {
                    known.agree_on(column)?;
                    if !known.variants.contains(column) {
                        return Err(self.no_column(column, "Variant column", &known.variants));
                    }
                }
            }
        }
        Ok(projection.schema(|name| known.plain_type(name)))
    }

    /// Fails unless `schema` is one the projection's batches may take: as
    /// [`projection_schema`](Self::projection_schema) gives it, or with
    /// other names or types the outputs cast to.
    fn check_projection(&self, projection: &Projection, schema: &SchemaRef) -> Result<()> {
        // A share's files may lack a column others have: its schema is the
        // whole dataset's.
        if self.numbering.is_none() {
            self.projection_schema(projection)?;
        }
        if schema.fields().len() != projection.outputs.len() {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "a projection of {} outputs cannot fill a schema of {} columns",
                    projection.outputs.len(),
                    schema.fields().len()
                ),
            ));
        }
        Ok(())
    }
}
