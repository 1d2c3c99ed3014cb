//! Opening what a command reads: a file or standard input, and Parquet
//! from a file, a dataset or a stream.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use arrow::array::RecordBatch;
use vshred::dataset::storage::is_glob;
use vshred::dataset::{Dataset, DatasetStats};
use vshred::parquet::{GetRequest, ParquetFile, ScanOptions, is_parquet_by_content};

use crate::failure::{Context, Failure};

pub(crate) fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

pub(crate) fn open_input(path: &Path) -> Result<Box<dyn BufRead>, Failure> {
    if is_stdin(path) {
        return Ok(Box::new(BufReader::with_capacity(1 << 20, io::stdin())));
    }
    let file = File::open(path).context(path)?;
    Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
}

/// Whether `path` is read as a stream: `-`, or a pipe, device or socket
/// given by its path (`get <(vshred encode in.jsonl -) '$.a'`).
pub(crate) fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    is_stdin(path)
        || std::fs::metadata(path).is_ok_and(|m| {
            let kind = m.file_type();
            kind.is_fifo() || kind.is_char_device() || kind.is_socket()
        })
}

/// Opens a Parquet file; a stream ([`is_stream`]) is read into a temporary
/// file unless it is a file already (Parquet is read from its footer, at
/// the end).
fn open_parquet(path: &Path) -> Result<ParquetFile, Failure> {
    if !is_stream(path) {
        return ParquetFile::open(path).context(path);
    }
    let mut stream: Box<dyn Read> = if is_stdin(path) {
        let stdin = io::stdin();
        let handle = std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned()?;
        let file = File::from(handle);
        if file.metadata()?.is_file() {
            return ParquetFile::from_file(file, path).context(path);
        }
        Box::new(stdin)
    } else {
        Box::new(File::open(path).context(path)?)
    };
    let mut copy = tempfile::tempfile()?;
    io::copy(&mut stream, &mut copy).context(path)?;
    ParquetFile::from_file(copy, path).context(path)
}

/// What a reading command reads: a Parquet file on standard input or a
/// pipe, or a dataset (a file, a directory, a glob).
pub(crate) enum ParquetInput {
    Stream(ParquetFile),
    Files(Box<Dataset>),
}

impl ParquetInput {
    pub(crate) fn open(path: &Path) -> Result<ParquetInput, Failure> {
        if is_stream(path) {
            return Ok(ParquetInput::Stream(open_parquet(path)?));
        }
        Ok(ParquetInput::Files(Box::new(
            vshred_datafusion::store::find_dataset(path)?,
        )))
    }

    pub(crate) fn choose_variant_column(&self, requested: Option<&str>) -> vshred::Result<String> {
        match self {
            ParquetInput::Stream(file) => file.choose_variant_column(requested),
            ParquetInput::Files(dataset) => dataset.choose_variant_column(requested),
        }
    }

    /// The names of the Variant columns.
    pub(crate) fn variant_columns(&self) -> vshred::Result<Vec<String>> {
        match self {
            ParquetInput::Stream(file) => Ok(file.variant_columns()),
            ParquetInput::Files(dataset) => Ok(dataset.columns()?.variants.clone()),
        }
    }

    /// The names of the top-level columns.
    pub(crate) fn columns(&self) -> vshred::Result<Vec<String>> {
        match self {
            ParquetInput::Stream(file) => Ok(file.column_names()),
            ParquetInput::Files(dataset) => Ok(dataset.columns()?.all.clone()),
        }
    }

    /// The columns the files agree on the type of, where they disagree
    /// on some.
    pub(crate) fn agreed_columns(&self) -> Option<Vec<String>> {
        match self {
            ParquetInput::Stream(_) => None,
            ParquetInput::Files(dataset) => {
                let columns = dataset.columns().ok()?;
                Some(columns.agreed()?.into_iter().map(String::from).collect())
            }
        }
    }

    pub(crate) fn json_lines(
        &self,
        columns: Option<&[String]>,
        options: &ScanOptions,
        sink: impl FnMut(Vec<u8>) -> vshred::Result<()>,
    ) -> vshred::Result<()> {
        match self {
            ParquetInput::Stream(file) => file.json_lines(columns, options, sink),
            ParquetInput::Files(dataset) => dataset.json_lines(columns, options, sink),
        }
    }

    pub(crate) fn get_with(
        &self,
        request: &GetRequest,
        with: &[String],
        options: &ScanOptions,
        sink: impl FnMut(&arrow::array::ArrayRef, &RecordBatch) -> vshred::Result<()>,
    ) -> vshred::Result<DatasetStats> {
        match self {
            ParquetInput::Stream(file) => {
                let read = file.get_with(request, with, options, sink)?;
                Ok(DatasetStats {
                    files: 1,
                    files_skipped: usize::from(read.row_groups_read == 0),
                    read,
                })
            }
            ParquetInput::Files(dataset) => dataset.get_with(request, with, options, sink),
        }
    }
}

/// Whether `input`, not a stream, names Parquet files: a directory or a
/// glob (a dataset), or a file that starts as Parquet does or is named
/// `.parquet` (a damaged one is then an error that says it is not
/// Parquet, not a JSON error at its first byte).
pub(crate) fn is_parquet_file_or_dataset(input: &Path) -> bool {
    input.is_dir()
        || (!input.exists() && is_glob(&input.to_string_lossy()))
        || is_parquet_by_content(input)
        || input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}
