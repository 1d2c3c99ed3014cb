//! Parquet files with Variant columns: the annotated schema
//! ([`schema`](VARIANT_EXTENSION_NAME)), a writer that replaces files
//! whole, and reading in three steps: an open [`ParquetFile`] (footer read
//! once), a [`ScanPlan`] worked out from the footer alone (the leaves a
//! path needs, the row groups and pages a filter rules out), and the
//! executor that runs any plan on worker threads
//! ([`ParquetFile::scan`]), streaming batches in file order.

mod arrow_hint;
mod file;
mod page_headers;
mod parallel_writer;
mod plan;
mod projection;
mod read;
mod scan;
mod schema;
mod shared_file;
mod thrift;
mod write;

/// The cores this process may use, asked of the system once: asking is
/// not free (it reads the cgroup's CPU quota), and a library user may
/// read or write many files one by one.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES
        .get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

pub use file::{Footer, Layouts, LeafSize, ParquetFile, TypedValues};
pub use plan::{Decision, ReadStats, RowGroupPlan, ScanPlan, SkipReason};
pub(crate) use projection::projection_of_batch;
pub use projection::{KeepRows, Projected, Projection, RowFilter};
pub use read::GetRequest;
pub(crate) use read::{get_of_batch, json_lines_of_batch};
pub use scan::ScanOptions;
pub(crate) use scan::{FileRows, RowGroupBatches, run_ordered};
pub use shared_file::{ByteSource, LocalFile};

pub use schema::{
    DecimalMode, VARIANT_EXTENSION_NAME, is_variant_field, typed_value_path, variant_field,
    variant_group,
};
pub use write::{
    ColumnSpec, Compression, ParquetWriter, WriteOptions, WriteSummary, parquet_schema,
};
pub(crate) use write::{InMemoryFile, encode_in_memory, open_output};

/// Whether `start`, a file's first bytes, begins as a Parquet file does:
/// `PAR1`, or `PARE` for one whose footer is encrypted.
pub fn starts_as_parquet(start: &[u8]) -> bool {
    start.starts_with(b"PAR1") || start.starts_with(b"PARE")
}

/// Whether `path` is a regular file that starts as a Parquet file does,
/// whatever its name ([`magic_of`], [`starts_as_parquet`]).
pub fn is_parquet_by_content(path: &std::path::Path) -> bool {
    magic_of(path).is_some_and(|start| starts_as_parquet(&start))
}

/// The first bytes of the regular file at `path`, up to 4: enough for
/// [`starts_as_parquet`]. `None` for what is not a regular file or cannot
/// be read: a pipe or device is never opened (opening a pipe waits for a
/// writer, and reading would take its bytes).
pub fn magic_of(path: &std::path::Path) -> Option<Vec<u8>> {
    use std::io::Read;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut start = Vec::with_capacity(4);
    std::fs::File::open(path)
        .ok()?
        .take(4)
        .read_to_end(&mut start)
        .ok()?;
    Some(start)
}
