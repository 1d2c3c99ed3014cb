//! JSON Lines into a dataset: a directory of Parquet files,
//! `part-00000.parquet`, `part-00001.parquet`, ..., each cut at a number
//! of lines or of bytes, each with a layout that fits its rows.
//!
//! # Each file appears whole
//!
//! A file is written to a temporary file in the directory
//! (`.part-00003.parquet.XXXX.tmp`, a name that dataset readers skip) and
//! renamed into place once complete, by the rules of
//! [`output`](crate::output). A run that fails (a bad line, an I/O error)
//! removes the file it was writing, and the directory if it made it and
//! nothing is in it, and keeps the complete files, and its
//! error says how many there are and which (`...; 3 complete files were
//! written to out/ (part-00000.parquet to part-00002.parquet) before the
//! failure`). The complete files are counted in the registry of unfinished
//! files, in the same step as each rename, so that a signal handler that
//! removes the unfinished file can say the same
//! ([`remove_unfinished_files`](crate::output::remove_unfinished_files)).
//!
//! A directory that holds Parquet files already (any that a reader of the
//! directory would read: `*.parquet` beneath it, `_` and `.` names
//! skipped) is refused, because the new files would mix with the old ones
//! into a dataset that is neither; with [`DatasetSplit::append`] the new
//! files join them, numbered on from the highest `part-NNNNN.parquet`.
//! Numbers stop at `part-99999` (an error past it), so that path order,
//! in which datasets are read, stays the order of writing.
//!
//! # Every file agrees on the ordinary columns
//!
//! A dataset is read as one only when its files agree on what each
//! ordinary column is ([`crate::dataset::schema`]), but each file's
//! columns are inferred from its own sample: a field null in one file's
//! sample and a number in the next one's would be a Variant column in the
//! first and `int64` in the second. So a column keeps what the dataset's
//! files before made it (`AgreedColumns`; with `append`, the files
//! already in the directory too): a Variant column stays one, and an
//! ordinary column keeps its type, a value that does not fit it being a
//! bad line as in a file whose sample chose the type. Appending to
//! columns of a type `encode` does not write from JSON (it writes `int64`,
//! `double`, `boolean` and `string` columns) is refused before anything
//! is written.
//!
//! # Where a file ends
//!
//! - [`max_file_rows`](DatasetSplit::max_file_rows): after N lines of
//!   input (bad lines skipped with `skip_bad_lines` count among them).
//! - [`max_file_bytes`](DatasetSplit::max_file_bytes): after the first
//!   batch with which the file reaches B bytes, counting the bytes written
//!   and the parquet crate's estimate of the row group in progress (held in
//!   memory until it is full). So a file may pass B by up to one batch
//!   ([`batch_rows`](super::EncodeOptions::batch_rows) lines; a file's
//!   first batch is its sample) and its footer. Where a file ends depends
//!   on the data alone: batches that were encoded while the writer reached
//!   the limit are encoded again for the next file.
//! - Both: whichever comes first.
//!
//! One file is written at a time, as [`encode`](super::encode) writes one,
//! so memory stays what `encode` needs.
//!
//! # The layout across files
//!
//! The first lines of each file ([`sample_rows`](super::EncodeOptions::sample_rows),
//! or all of them when a file has fewer) are its sample, read before the
//! file is written, as `encode` reads its own. The first file's layout is
//! inferred from its sample, as `encode` infers it. Each later file keeps
//! the layout in use while it *fits* the file's sample, and otherwise gets
//! a layout inferred from that sample, kept in turn while it fits. The
//! layout in use fits when:
//!
//! 1. every line of the sample encodes with it: with `variant_fields`, a
//!    new top-level field, or one whose type no longer suits its ordinary
//!    column, does not; and
//! 2. the share of the sample's values that it stores in typed columns is
//!    less than [`REINFER_GAIN`] below the share that a layout inferred
//!    from the sample stores.
//!
//! The typed share is the one `vshred report` prints and
//! [`PartReport::typed_share`] gives (non-null values of `typed_value`
//! leaves against those of `value` leaves), counted on the sample shredded
//! by each layout as the written file's statistics would count them
//! ([`TypedValues::of_variant_arrays`]). A field that becomes
//! common (the fresh layout gives it a column; the one in use leaves it in
//! the residual) and a field whose type changes (its values go to `value`)
//! both lower the share of the layout in use. A field that disappears does
//! not: its columns are null, which costs a few bytes a page and its
//! entries in the footer, and the schema stays stable for readers; it goes
//! when the layout is re-inferred for another reason, or when more than
//! [`UNUSED_LEAVES`] typed columns, and more than half of them, would hold
//! none of the sample's values. When a fresh inference gives the layout in
//! use again, nothing is measured.
//!
//! Each file's own first lines are its sample, rather than the last lines
//! of the file before, so that the layout follows the data within the
//! file where it changes, from the rows that Spark's per-file inference
//! looks at too; everything is decided from the data alone, so a run
//! makes the same files on any machine.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use arrow::array::AsArray;
use arrow::datatypes::{DataType, Field};

use super::lines::{LineTallies, Lines, Source};
use super::pipeline::{FileLimit, every_line_bad, write_lines};
use super::plan::{LeftUnshredded, MeasuredLayouts, leaf_encodings, plan_columns};
use super::rows::{RowEncoder, StartingNames};
use super::{DEFAULT_COLUMN, EncodeOptions, LineCounts, sample_size, write_options};
use crate::dataset::Dataset;
use crate::dataset::hive::HiveColumns;
use crate::dataset::schema::{ColumnType, normalized};
use crate::error::{Error, ErrorKind, Result};
use crate::output::{Claim, DatasetFiles, Output, Taken};
use crate::parquet::{ColumnSpec, ParquetWriter, TypedValues, WriteSummary, open_output};
use crate::shred::ShreddingSchema;

/// How much more of a file's sample (as a share of its values, 0.05 = 5
/// points) a layout inferred from it must store in typed columns than the
/// layout in use, for the file to take it. Below that the new layout gains
/// readers little and costs them another schema to merge; and samples of
/// the same data differ by much less, so sampling noise does not re-infer
/// (four files of events, whose fields vary from row to row, keep one
/// layout: `crates/cli/tests/dataset_write.rs`).
pub const REINFER_GAIN: f64 = 0.05;

/// How many typed columns of the layout in use, and more than half of
/// them, may hold none of a file's sample before the file takes a layout
/// inferred from it (their fields gone): each costs its entries in every
/// row group's footer, not only a few bytes a page. 200 fields that
/// stopped made each later file of 1,000 small rows 93 kB, 9 kB alone.
pub const UNUSED_LEAVES: u64 = 16;

/// How JSON Lines are split into the files of a dataset.
#[derive(Clone, Debug, Default)]
pub struct DatasetSplit {
    /// Most lines of input per file.
    pub max_file_rows: Option<u64>,
    /// Bytes from which a file ends, at the end of a batch (see the
    /// [module docs](self)).
    pub max_file_bytes: Option<u64>,
    /// Add files to a directory that holds Parquet files already, instead
    /// of refusing it.
    pub append: bool,
}

/// Which layout a file of a dataset has.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LayoutChoice {
    /// Inferred from its sample: the first file.
    First,
    /// The layout of the file before, which fits its sample.
    Kept,
    /// Inferred from its sample, because the layout in use did not fit it:
    /// the typed shares on the sample of the layout in use (`None`: a line
    /// does not encode with it) and of the new one.
    Reinferred {
        /// The layout in use.
        kept: Option<f64>,
        /// The new one.
        fresh: f64,
    },
    /// Inferred from its sample, because most typed columns of the layout
    /// in use would hold none of its values (their fields are gone).
    Unused {
        /// Typed columns of the layout in use that hold none.
        empty: u64,
        /// Its typed columns.
        of: u64,
    },
}

/// One file of a dataset, as written.
#[derive(Clone, Debug)]
pub struct PartReport {
    /// Where it is.
    pub path: PathBuf,
    /// Its columns, with the shredding of Variant columns.
    pub columns: Vec<ColumnSpec>,
    /// How its layout was chosen.
    pub layout: LayoutChoice,
    /// Bloom filter paths that its layout (re-inferred) does not shred,
    /// left out of this file.
    pub bloom_filters_left_out: Vec<String>,
    /// The Variant columns `auto` left unshredded in the layout inferred
    /// for this file (none where it kept the layout before).
    pub left_unshredded: Vec<LeftUnshredded>,
    /// Rows, row groups, bytes, and where the Variant values went.
    pub written: WriteSummary,
}

impl PartReport {
    /// The share of its Variant values stored in typed columns.
    pub fn typed_share(&self) -> Option<f64> {
        self.written.typed_values.map(|v| v.share())
    }
}

/// What [`encode_dataset`] did.
#[derive(Clone, Debug)]
pub struct DatasetReport {
    /// The files written, in order: none when an input of no rows was
    /// appended.
    pub files: Vec<PartReport>,
    /// Bad lines skipped and inexact numbers, over all files.
    pub lines: LineCounts,
    /// Names given as [`EncodeOptions::variant_fields`] that no line of
    /// the first file's sample has.
    pub unsampled_variant_fields: Vec<String>,
    /// Fields of a layout given that no line of the first file's sample
    /// has, as `COLUMN.path`.
    pub unsampled_layout_fields: Vec<String>,
}

impl DatasetReport {
    /// Whether the files' numbers run without a gap: false when another
    /// writer of the directory (a concurrent `append`) took numbers between
    /// them, so that "the first to the last" may hold others' files too.
    pub fn numbered_without_gaps(&self) -> bool {
        let numbers: Vec<Option<u64>> = self
            .files
            .iter()
            .map(|f| part_number(&f.path.file_name()?.to_string_lossy()))
            .collect();
        numbers
            .windows(2)
            .all(|w| matches!(w, [Some(a), Some(b)] if a + 1 == *b))
    }
}

/// The highest part number: five digits, because readers take files in
/// path order and `part-100000` would come before `part-99999`.
const LAST_PART: u64 = 99_999;

/// Encodes JSON Lines from `input` into files `part-NNNNN.parquet` in
/// `dir` (made if missing), split by `split`, by the rules in the [module
/// docs](self). `progress` is called with the input bytes consumed so far.
pub fn encode_dataset(
    input: &mut dyn BufRead,
    dir: &Path,
    options: &EncodeOptions,
    split: &DatasetSplit,
    progress: &mut dyn FnMut(u64),
) -> Result<DatasetReport> {
    if split.max_file_rows == Some(0) || split.max_file_bytes == Some(0) {
        return Err(Error::new(
            ErrorKind::Usage,
            "a file of a dataset must be allowed at least 1 row and 1 byte",
        ));
    }
    refuse_other_keys(dir)?;
    let (first_number, made) = prepare_dir(dir, split.append)?;
    let complete = DatasetFiles::register(dir);
    write_parts(
        input,
        dir,
        first_number,
        options,
        split,
        &complete,
        progress,
    )
    .inspect(|report| {
        if made && report.files.is_empty() {
            let _ = std::fs::remove_dir(dir);
        }
    })
    .map_err(|e| {
        if made {
            // Only if empty: a directory this run made and wrote nothing
            // into goes, as one file's output does.
            let _ = std::fs::remove_dir(dir);
        }
        e.with_note(&format!("{} before the failure", complete.complete()))
    })
}

/// Refuses to write a dataset's files into `dir` under other `key=value`
/// directories than the files beside it (`day=5/region=eu/` beside
/// `day=1/`), or under such directories beside files of none
/// (`logs/day=1/` where `logs/part-00000.parquet` is): the dataset would
/// not read as one.
fn refuse_other_keys(dir: &Path) -> Result<()> {
    let Some(root) = crate::dataset::hive::partition_root(dir) else {
        return Ok(());
    };
    refuse_keys_beside_loose_files(dir, root)?;
    // None there yet, or a dataset that does not read as one already.
    let Ok(Some(dataset)) = Dataset::of_partitions(root) else {
        return Ok(());
    };
    let Some(theirs) = dataset.hive_columns() else {
        return Ok(());
    };
    let theirs: Vec<&str> = theirs.columns().iter().map(|(k, _)| k.as_str()).collect();
    let ours = crate::dataset::hive::keys_of(dir);
    if theirs == ours {
        return Ok(());
    }
    // Named as the error's file: the output, not the input being read.
    Err(Error::new(
        ErrorKind::Usage,
        format!(
            "its files would be under the keys {}, and the key=value directories beside it in {} are under {}: a dataset's files must be under the same keys to be read as one",
            ours.join(", "),
            root.display(),
            theirs.join(", ")
        ),
    )
    .in_file(dir))
}

/// Refuses to begin `key=value` directories in `root` (`dir` among them)
/// where Parquet files lie beneath `root` outside such directories
/// (`logs/part-00000.parquet`, `logs/old/p.parquet`): they would read with
/// null keys, and Spark reads the directories and skips them without a
/// word, as an append beside such directories is refused for. The working
/// directory is not looked in: its files are rarely a dataset's.
fn refuse_keys_beside_loose_files(dir: &Path, root: &Path) -> Result<()> {
    let here = std::env::current_dir().and_then(|d| d.canonicalize()).ok();
    if root.as_os_str().is_empty() || root.canonicalize().ok() == here {
        return Ok(());
    }
    let Ok(files) = crate::dataset::parquet_files_beneath(root) else {
        return Ok(());
    };
    let outside_keys = |file: &&PathBuf| {
        let top = file
            .strip_prefix(root)
            .ok()
            .and_then(|f| f.components().next());
        !top.is_some_and(|c| crate::dataset::hive::is_key_value(&c.as_os_str().to_string_lossy()))
    };
    let Some(loose) = files.iter().find(outside_keys) else {
        return Ok(());
    };
    Err(Error::new(
        ErrorKind::Usage,
        format!(
            "{} holds Parquet files outside key=value directories (such as {}): its files would read with no key, and Spark skips them beside key=value directories; write the partitions to a directory of their own",
            root.display(),
            loose.display()
        ),
    )
    .in_file(dir))
}

/// Refuses to write a column into `dir` whose name a `key=value` directory
/// above it gives too (`day` under `logs/day=2024-03-01/`): a reader of the
/// dataset would have two columns of that name, and refuses it.
pub(super) fn refuse_columns_named_by_directories(
    dir: &Path,
    columns: &[ColumnSpec],
) -> Result<()> {
    let keys = crate::dataset::hive::keys_of(dir);
    let Some(column) = columns
        .iter()
        .map(|c| c.field().name().clone())
        .find(|name| keys.contains(name))
    else {
        return Ok(());
    };
    Err(Error::new(
        ErrorKind::Usage,
        format!(
            "the column \"{column}\" would be named by the directory {column}=... above it too, and a dataset with two columns of one name does not read (a key=value directory's key is a column of every file under it); leave the field inside the Variant column (not in --variant-field) or write to a directory without that key"
        ),
    ))
}

/// Writes the files, numbered from `number`, each counted in `complete`
/// once in place.
fn write_parts(
    input: &mut dyn BufRead,
    dir: &Path,
    mut number: u64,
    options: &EncodeOptions,
    split: &DatasetSplit,
    complete: &DatasetFiles,
    progress: &mut dyn FnMut(u64),
) -> Result<DatasetReport> {
    let limit = FileLimit {
        rows: split.max_file_rows,
        bytes: split.max_file_bytes,
    };
    let sample_rows = split.max_file_rows.map_or(sample_size(options), |rows| {
        sample_size(options).min(usize::try_from(rows).unwrap_or(usize::MAX))
    });
    let mut agreed = AgreedColumns::of_dataset_in(dir)?;
    agreed
        .refuse_whole_rows_beside_columns(options)
        .map_err(|e| e.in_file(dir))?;
    let mut source = Source::new(input);
    let mut tallies = LineTallies::of(options);
    let mut files: Vec<PartReport> = Vec::new();
    let (mut unsampled, mut unsampled_layout_fields) = (Vec::new(), Vec::new());
    let mut priced = Vec::new();
    let mut measured = MeasuredLayouts::default();
    loop {
        let mut sample = Lines::default();
        source.fill_sample(&mut sample, sample_rows)?;
        // Empty input still makes one (empty) file, as `encode` does,
        // unless appended to files that are there; input whose every line
        // is bad makes none.
        if sample.is_empty() && (!files.is_empty() || tallies.bad_lines() > 0 || split.append) {
            break;
        }
        // The bad lines of this sample, counted as it is planned, are the
        // ones the file's encoders skip without counting them again.
        tallies.sampled.clear();
        // The file holds the sample alone where it ends the input or
        // reaches the file's row limit.
        let whole = limit.rows == Some(sample.len() as u64) || source.ended()?;
        let plan = plan_columns(&sample, whole, options, &mut tallies, &mut measured)?;
        let fresh = plan.columns.clone();
        let (columns, layout) = match files.last() {
            None => {
                unsampled = plan.unsampled;
                unsampled_layout_fields = plan.unsampled_layout_fields;
                (plan.columns, LayoutChoice::First)
            }
            Some(last) => choose_layout(&last.columns, plan.columns, &sample, &tallies, options)?,
        };
        // The encodings priced on the sample that chose the layout written:
        // this one's, or for a layout kept, that of the file that chose it.
        if columns == fresh {
            priced = leaf_encodings(&plan.priced);
        }
        // Said of the file that chose the layout, not of each that keeps it.
        let left_unshredded = match columns == fresh && layout != LayoutChoice::Kept {
            true => plan.left_unshredded,
            false => Vec::new(),
        };
        // A file that brings a column the dataset lacks is written under
        // the directory's lock, the columns agreed again once it is held:
        // another writer may have brought the same column, of another
        // type, since they were read.
        let new_columns = columns.iter().any(|c| !agreed.has(c.field().name()));
        let columns_lock = match new_columns {
            true => {
                let lock = lock_columns(dir)?;
                let theirs = agreed.read_new(dir)?;
                // A new dataset's directory that another writer wrote
                // into while this one waited for the lock.
                if let (false, true, Some(file)) = (split.append, files.is_empty(), theirs.first())
                {
                    let name = file.strip_prefix(dir).unwrap_or(file);
                    return Err(another_writer(dir, &name.to_string_lossy(), &Taken::File));
                }
                Some(lock)
            }
            false => None,
        };
        let columns = agreed
            .keep(columns, &options.variant_fields)
            .map_err(|e| e.in_file(dir))?;
        refuse_columns_named_by_directories(dir, &columns).map_err(|e| e.in_file(dir))?;
        let mut left_out = Vec::new();
        let first = layout == LayoutChoice::First;
        let mut write = write_options(&columns, options, (!first).then_some(&mut left_out))?;
        write.leaf_encodings = priced.clone();
        // The next number no other writer of the directory has taken.
        let (path, claim) = loop {
            if number > LAST_PART {
                return Err(no_number_left(dir));
            }
            let name = format!("part-{number:05}.parquet");
            match Claim::take(dir, &name)? {
                Ok(claim) => break (dir.join(name), claim),
                // A new dataset's first name taken: another writer began
                // one in the same directory, whose files would mix with
                // these. (Later, only an `append` can have taken one.)
                Err(taken) if !split.append && files.is_empty() => {
                    return Err(another_writer(dir, &name, &taken));
                }
                Err(_) => number += 1,
            }
        };
        let mut output = open_output(Output::from(&path))?;
        output.completion.count_in(complete);
        let writer = ParquetWriter::new(output, &columns, &write)?;
        let Some(written) = write_lines(
            &mut source,
            sample,
            &columns,
            writer,
            options,
            limit,
            &mut tallies,
            progress,
        )?
        else {
            // Every line of the file was bad: it is not written, and its
            // number goes to the next.
            continue;
        };
        // The file is in place under its name.
        drop(claim);
        drop(columns_lock);
        agreed.add(&path, &columns);
        files.push(PartReport {
            path,
            columns,
            layout,
            bloom_filters_left_out: left_out,
            left_unshredded,
            written,
        });
        number += 1;
    }
    if files.is_empty() && !(split.append && tallies.bad_lines() == 0) {
        return Err(every_line_bad(&tallies));
    }
    Ok(DatasetReport {
        files,
        lines: tallies.counts(),
        unsampled_variant_fields: unsampled,
        unsampled_layout_fields,
    })
}

/// Holds the lock of `dir` (an advisory lock on the directory itself)
/// until dropped: other writers of the dataset that bring new columns
/// wait for it. A process that ends releases it.
fn lock_columns(dir: &Path) -> Result<std::fs::File> {
    let handle = std::fs::File::open(dir).map_err(|e| Error::io(dir, e))?;
    handle.lock().map_err(|e| Error::io(dir, e))?;
    Ok(handle)
}

/// Waits for the lock of `dir`, where a writer (a `COPY` through the
/// DataFusion crate) has written a new dataset's files aside and is about
/// to put them in place, and fails if a file that a reader of `dir` reads
/// is there: another writer's, put there since this one began, whose
/// files and these would mix. The lock (an advisory lock on the directory
/// itself) is held until dropped; a run of `encode` beginning a dataset in
/// `dir` waits for it too.
pub fn lock_new_dataset(dir: &Path) -> Result<std::fs::File> {
    let lock = lock_columns(dir)?;
    if let Some(file) = crate::dataset::parquet_files_beneath(dir)?.first() {
        let name = file.strip_prefix(dir).unwrap_or(file);
        return Err(another_writer(dir, &name.to_string_lossy(), &Taken::File));
    }
    Ok(lock)
}

/// What each top-level column of the dataset is, from the files written
/// so far (see the [module docs](self)).
#[derive(Default)]
struct AgreedColumns {
    columns: Vec<(String, ColumnType)>,
    /// The files whose columns are in: read, or written by this run.
    known: std::collections::HashSet<PathBuf>,
}

impl AgreedColumns {
    /// Whether the dataset has a column `name`.
    fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|(n, _)| n == name)
    }

    /// The columns of the Parquet files in `dir`, if any.
    fn of_dataset_in(dir: &Path) -> Result<AgreedColumns> {
        let mut agreed = AgreedColumns::default();
        agreed.read_new(dir)?;
        Ok(agreed)
    }

    /// Adds the columns of the files in `dir` not known yet, those other
    /// writers completed since, and returns those files. Each file's
    /// footer is read once a run.
    fn read_new(&mut self, dir: &Path) -> Result<Vec<PathBuf>> {
        let files: Vec<PathBuf> = crate::dataset::parquet_files_beneath(dir)?
            .into_iter()
            .filter(|f| !self.known.contains(f))
            .collect();
        if files.is_empty() {
            return Ok(files);
        }
        // Named as the output, not the input being read.
        let dataset = Dataset::from_files(files.clone());
        let columns = dataset.columns().map_err(|e| e.in_file(dir))?;
        columns.all_agree().map_err(|e| e.in_file(dir))?;
        for (name, column_type) in columns.all.iter().zip(&columns.types) {
            self.agree(name, column_type.clone());
        }
        self.known.extend(files.iter().cloned());
        Ok(files)
    }

    /// Takes `column_type` for `name` where the dataset has no type for it
    /// yet (not the column, or only nulls).
    fn agree(&mut self, name: &str, column_type: ColumnType) {
        match self.columns.iter_mut().find(|(n, _)| n == name) {
            Some((_, agreed @ ColumnType::Plain(DataType::Null))) => *agreed = column_type,
            Some(_) => {}
            None => self.columns.push((name.to_string(), column_type)),
        }
    }

    /// Refuses to write whole rows as one Variant column (no Variant
    /// fields named) into a dataset whose files hold other columns beside
    /// it: they were written with Variant fields, and the column would
    /// hold a field there and whole rows here.
    fn refuse_whole_rows_beside_columns(&self, options: &EncodeOptions) -> Result<()> {
        let beside = self.columns.iter().any(|(name, _)| name != DEFAULT_COLUMN);
        if !options.variant_fields.is_empty() || !beside {
            return Ok(());
        }
        let names = |of: &dyn Fn(&ColumnType) -> bool| {
            self.columns
                .iter()
                .filter(|(_, t)| of(t))
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let variants = names(&|t| *t == ColumnType::Variant);
        Err(Error::new(
            ErrorKind::Incompatible,
            format!(
                "the dataset's files hold the columns {} (Variant: {}): they were written with Variant fields, and without them each row would be one Variant column {DEFAULT_COLUMN:?} here (give the Variant fields they were written with: --variant-field, variant_fields)",
                names(&|_| true),
                if variants.is_empty() {
                    "none"
                } else {
                    &variants
                }
            ),
        ))
    }

    /// `columns`, each as the dataset has it; `variant_fields`, the
    /// columns asked for as Variant columns, are refused where the dataset
    /// has an ordinary column.
    fn keep(&self, columns: Vec<ColumnSpec>, variant_fields: &[String]) -> Result<Vec<ColumnSpec>> {
        columns
            .into_iter()
            .map(|column| {
                let name = column.field().name().clone();
                let Some((_, agreed)) = self.columns.iter().find(|(n, _)| *n == name) else {
                    return Ok(column);
                };
                Ok(match (agreed, column_type(&column)) {
                    (agreed, own) if *agreed == own => column,
                    // Shredded as the sample's values are typed: they are
                    // all of that type.
                    (ColumnType::Variant, _) => ColumnSpec::Variant {
                        schema: match column.field().data_type() {
                            DataType::Int64 => ShreddingSchema::Int64,
                            DataType::Boolean => ShreddingSchema::Boolean,
                            DataType::Utf8 => ShreddingSchema::String,
                            // JSON numbers with a fraction are decimals.
                            _ => ShreddingSchema::Variant,
                        },
                        name,
                    },
                    (ColumnType::Plain(t), ColumnType::Variant) if variant_fields.contains(&name) => {
                        return Err(Error::new(
                            ErrorKind::Incompatible,
                            format!(
                                "column {name:?} is {t} in the dataset, and as a Variant field it would be a Variant column in this file, which would leave the files unreadable as one (write to another directory)"
                            ),
                        ));
                    }
                    (ColumnType::Plain(DataType::Null), _) => column,
                    (
                        ColumnType::Plain(
                            t @ (DataType::Int64 | DataType::Float64 | DataType::Boolean | DataType::Utf8),
                        ),
                        _,
                    ) => ColumnSpec::Plain(Field::new(name, t.clone(), true)),
                    (ColumnType::Plain(t), _) => {
                        return Err(Error::new(
                            ErrorKind::Incompatible,
                            format!(
                                "column {name:?} is {t} in the dataset, which encode does not write from JSON (it writes int64, double, boolean, string and Variant columns)"
                            ),
                        ));
                    }
                })
            })
            .collect()
    }

    /// Adds the columns of a file written, those the dataset lacked or had
    /// only as nulls.
    fn add(&mut self, file: &Path, columns: &[ColumnSpec]) {
        for column in columns {
            self.agree(column.field().name(), column_type(column));
        }
        self.known.insert(file.to_path_buf());
    }
}

/// What `column` is, as files are compared.
fn column_type(column: &ColumnSpec) -> ColumnType {
    match column {
        ColumnSpec::Variant { .. } => ColumnType::Variant,
        ColumnSpec::Plain(field) => ColumnType::Plain(normalized(field.data_type())),
    }
}

/// Makes `dir` if missing, refuses it if it holds Parquet files already
/// (unless appending), and returns the number of its first new file and
/// whether it made `dir`.
fn prepare_dir(dir: &Path, append: bool) -> Result<(u64, bool)> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::new(
                ErrorKind::Usage,
                "is not a directory (a dataset is written to a directory, made if missing)",
            )
            .in_file(dir));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            return Ok((0, true));
        }
        Err(e) => return Err(Error::io(dir, e)),
    }
    let existing = crate::dataset::parquet_files_beneath(dir)?;
    let Some(example) = existing.first() else {
        return Ok((0, false));
    };
    if !append {
        let plural = if existing.len() == 1 { "" } else { "s" };
        return Err(Error::new(
            ErrorKind::DatasetExists,
            format!(
                "holds a dataset already ({} Parquet file{plural}, such as {}): new files would mix with it; choose another directory",
                existing.len(),
                example.display()
            ),
        )
        .in_file(dir));
    }
    // New files go in `dir` itself, beside the key=value directories of a
    // partitioned dataset: they would read null there, and Spark skips
    // such files without a word.
    if let Some(hive) = HiveColumns::find(dir, &existing)? {
        let keys: Vec<&str> = hive.columns().iter().map(|(k, _)| k.as_str()).collect();
        return Err(Error::new(
            ErrorKind::Usage,
            format!(
                "holds a dataset under {}=... directories (such as {}): append to the directory of a partition (.../{}=VALUE/), where its files belong",
                keys.join("=.../"),
                example.display(),
                keys.join("=.../")
            ),
        )
        .in_file(dir));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut next = 0;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if let Some(n) = part_number(&entry.file_name().to_string_lossy()) {
            next = next.max(n + 1);
        }
    }
    // Said before any work, not once a file is written.
    if next > LAST_PART {
        return Err(no_number_left(dir));
    }
    Ok((next, false))
}

/// The error of a dataset whose files' numbers have reached the highest.
fn no_number_left(dir: &Path) -> Error {
    Error::new(
        ErrorKind::Usage,
        format!(
            "no part number is left for a new file: its files are numbered up to part-{LAST_PART}, the highest (five digits, so that path order is the order they were written in); let each file hold more rows or bytes, or write to another directory"
        ),
    )
    .in_file(dir)
}

/// The error of a writer beginning a new dataset in `dir` that finds
/// `name` there `taken` by another writer: written, or being written.
fn another_writer(dir: &Path, name: &str, taken: &Taken) -> Error {
    let (verb, left) = match taken {
        Taken::File => ("wrote", String::new()),
        Taken::Claim(claim) => (
            "is writing",
            format!(
                " (if none is running, remove {}: a run killed outright left it)",
                claim.display()
            ),
        ),
    };
    Error::new(
        ErrorKind::WriterConflict,
        format!(
            "another run {verb} {name} here while this one began a new dataset: their files would mix with these{left}; choose another directory"
        ),
    )
    .in_file(dir)
}

/// `N` of a file named `part-N.parquet` (digits only).
fn part_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The layout of the next file: `kept` (the last file's) if it fits the
/// sample, else `fresh`, inferred from it (the [rule](self)).
fn choose_layout(
    kept: &[ColumnSpec],
    fresh: Vec<ColumnSpec>,
    sample: &Lines,
    tallies: &LineTallies,
    options: &EncodeOptions,
) -> Result<(Vec<ColumnSpec>, LayoutChoice)> {
    if fresh == kept {
        return Ok((fresh, LayoutChoice::Kept));
    }
    let kept_values = typed_values_on(kept, sample, tallies, options)?;
    let fresh_values = typed_values_on(&fresh, sample, tallies, options)?;
    let kept_share = kept_values.map(|v| v.share());
    let fresh_share = fresh_values.map(|v| v.share());
    Ok(match (kept_share, fresh_share) {
        (Some(_), Some(_))
            if kept_values.is_some_and(|v| {
                v.empty_typed_leaves > UNUSED_LEAVES && 2 * v.empty_typed_leaves > v.typed_leaves
            }) =>
        {
            let kept_values = kept_values.unwrap_or_default();
            (
                fresh,
                LayoutChoice::Unused {
                    empty: kept_values.empty_typed_leaves,
                    of: kept_values.typed_leaves,
                },
            )
        }
        (Some(k), Some(f)) if f - k < REINFER_GAIN => (kept.to_vec(), LayoutChoice::Kept),
        // A line that neither layout encodes is a bad line: the file
        // reports it, whichever layout it has.
        (_, None) => (kept.to_vec(), LayoutChoice::Kept),
        (k, Some(f)) => (fresh, LayoutChoice::Reinferred { kept: k, fresh: f }),
    })
}

/// Where the values of the sample written with `columns` are stored;
/// `None` when a line of it (other than those planning found bad) does
/// not encode with them.
fn typed_values_on(
    columns: &[ColumnSpec],
    sample: &Lines,
    tallies: &LineTallies,
    options: &EncodeOptions,
) -> Result<Option<TypedValues>> {
    let mut encoder = RowEncoder::new(columns, options, &StartingNames::default());
    for (line, text) in sample.iter() {
        if tallies.sampled.contains(&line.number) {
            continue;
        }
        if encoder.encode_line(text).is_err() {
            return Ok(None);
        }
    }
    let arrays = encoder.finish();
    let variants = columns
        .iter()
        .zip(&arrays)
        .filter(|(column, _)| matches!(column, ColumnSpec::Variant { .. }))
        .filter_map(|(_, array)| array.as_struct_opt());
    Ok(Some(TypedValues::of_variant_arrays(variants)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_numbers_are_read_from_part_names_only() {
        assert_eq!(part_number("part-00000.parquet"), Some(0));
        assert_eq!(part_number("part-00042.parquet"), Some(42));
        assert_eq!(part_number("part-123456.parquet"), Some(123456));
        assert_eq!(part_number("part-.parquet"), None);
        assert_eq!(part_number("part-0001a.parquet"), None);
        assert_eq!(part_number("part-00001.parquet.tmp"), None);
        assert_eq!(part_number("other.parquet"), None);
    }
}
