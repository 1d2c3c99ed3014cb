//! The executor: runs a [`ScanPlan`] on worker threads and streams its
//! batches, turned into results there, to the caller in file order, with
//! bounded memory.

use std::num::NonZeroUsize;
use std::path::Path;

use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::ParquetRecordBatchReader;
use arrow::array::RecordBatch;

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::ParquetFile;
use crate::parquet::plan::{Decision, ScanPlan};

/// The most results a worker of [`ParquetFile::scan`] holds
/// before the consumer takes them: the batches of a row group as vshred
/// writes them (128Ki rows), with room to spare.
const MAX_AHEAD: usize = 32;

/// How a [`ScanPlan`] runs.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Rows per batch.
    pub batch_size: usize,
    /// Worker threads; `None` for one per core.
    pub threads: Option<NonZeroUsize>,
}

impl ScanOptions {
    /// Batches of `batch_size` rows, one worker thread per core.
    pub fn new(batch_size: usize) -> ScanOptions {
        ScanOptions {
            batch_size,
            threads: None,
        }
    }
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions::new(8192)
    }
}

impl ParquetFile {
    /// Runs `plan`: the row groups it reads are spread over the worker
    /// threads, each reading its own, each batch turned into a `T` by `map`
    /// there; `sink` gets the results on this thread, in file order. A
    /// worker holds up to one row group of results ahead of `sink`, so that
    /// it reads its next row group while `sink` takes the current one from
    /// another worker; at most `MAX_AHEAD` batches, which bounds memory.
    /// Stops at the first error, from `map` or `sink`.
    pub fn scan<T: Send>(
        &self,
        plan: &ScanPlan,
        options: &ScanOptions,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        mut sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        enum Message<T> {
            Batch(T),
            /// The row group is done, or failed.
            End(Result<()>),
        }
        let batch_size = options.batch_size.max(1);
        let reading = plan.paged.as_ref().unwrap_or(&self.metadata);
        let schema = self.parquet_schema();
        let row_groups: Vec<(usize, &Vec<usize>, &Option<_>)> = plan
            .row_groups()
            .iter()
            .filter_map(|p| match &p.decision {
                Decision::Read { leaves, selection } => Some((p.row_group, leaves, selection)),
                Decision::Skip(_) => None,
            })
            .collect();
        let threads = options
            .threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get);
        let workers = threads.clamp(1, row_groups.len().max(1));
        let ahead = if workers == 1 {
            2 // nobody else to wait for: only decoding overlaps writing
        } else {
            row_groups
                .iter()
                .map(|&(rg, ..)| self.metadata().row_group(rg).num_rows().max(0) as usize)
                .max()
                .unwrap_or(0)
                .div_ceil(batch_size)
                .clamp(2, MAX_AHEAD)
        };
        let read = |task: usize, send: &dyn Fn(T) -> bool| -> Result<()> {
            let (rg, leaves, selection) = row_groups[task];
            let mut reader = self.row_group_reader(
                reading,
                rg,
                batch_size,
                if leaves.len() == schema.num_columns() {
                    ProjectionMask::all()
                } else {
                    ProjectionMask::leaves(schema, leaves.iter().copied())
                },
                selection.clone(),
            )?;
            while let Some(batch) = next_batch(&self.path, &mut reader)? {
                if !send(map(batch)?) {
                    break; // sink stopped
                }
            }
            Ok(())
        };
        std::thread::scope(|scope| {
            let (receivers, handles): (Vec<_>, Vec<_>) = (0..workers)
                .map(|w| {
                    let (tx, rx) = std::sync::mpsc::sync_channel(ahead);
                    let read = &read;
                    let tasks = row_groups.len();
                    let handle = scope.spawn(move || {
                        for task in (w..tasks).step_by(workers) {
                            let ended = read(task, &|t| tx.send(Message::Batch(t)).is_ok());
                            if tx.send(Message::End(ended)).is_err() {
                                return;
                            }
                        }
                    });
                    (rx, handle)
                })
                .unzip();
            let mut outcome = Ok(());
            'row_groups: for k in 0..row_groups.len() {
                loop {
                    let step = match receivers[k % workers].recv() {
                        Ok(Message::Batch(t)) => sink(t),
                        Ok(Message::End(Ok(()))) => continue 'row_groups,
                        Ok(Message::End(Err(e))) => Err(e),
                        // The worker panicked: re-raised below.
                        Err(_) => break 'row_groups,
                    };
                    if let Err(e) = step {
                        outcome = Err(e);
                        break 'row_groups;
                    }
                }
            }
            // Unblocks the workers still sending, so that they stop.
            drop(receivers);
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
            outcome
        })
    }
}

/// Runs `f`, turning a panic into an error: the parquet crate asserts on
/// some malformed pages and indexes, and a corrupt file must not take the
/// program down.
pub(super) fn guarded<T>(path: &Path, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown failure".into());
        Error::new(ErrorKind::Parquet, format!("corrupt data: {what}")).in_file(path)
    })
}

/// The reader's next batch, with its errors and panics as our errors.
pub(super) fn next_batch(
    path: &Path,
    reader: &mut ParquetRecordBatchReader,
) -> Result<Option<RecordBatch>> {
    guarded(path, || reader.next())?
        .transpose()
        .map_err(|e| Error::parquet("reading", &e).in_file(path).with_source(e))
}
