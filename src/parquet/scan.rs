//! The executor: runs [`ScanPlan`]s on worker threads and streams their
//! batches, turned into results there, to the caller in order, with
//! bounded memory.
//!
//! One engine serves a file and a dataset alike ([`run_ordered`]): a
//! source hands out tasks (a row group of a file, as a plan says) one at a
//! time, in order, to whichever worker is free; each task's results go
//! down a channel of its own, and the consumer drains those channels in
//! the order the tasks were handed out. So the workers are spawned once
//! per scan, not once per file, a dataset's next file is opened and
//! planned while the last one is read, and output stays in order.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use ::parquet::arrow::ProjectionMask;
use ::parquet::arrow::arrow_reader::{ParquetRecordBatchReader, RowSelection};
use arrow::array::RecordBatch;

use crate::error::{Error, ErrorKind, Result};
use crate::parquet::ParquetFile;
use crate::parquet::plan::{Decision, RowGroupPlan, ScanPlan};

/// The most results a task holds before the consumer takes them: the
/// batches of a row group as vshred writes them (128Ki rows), with room to
/// spare.
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

    /// The worker threads for `tasks` tasks: the setting, or one per core,
    /// and no more than there are tasks.
    pub(crate) fn workers(&self, tasks: usize) -> usize {
        let threads = self.threads.map_or_else(super::cores, NonZeroUsize::get);
        threads.clamp(1, tasks.max(1))
    }

    /// How many results a task of `rows` rows may hold ahead of the
    /// consumer: its whole row group, so that its worker goes on to the
    /// next task while the consumer drains this one, within `MAX_AHEAD`.
    pub(crate) fn ahead(&self, rows: i64, workers: usize) -> usize {
        if workers == 1 {
            return 2; // nobody else to wait for: only decoding overlaps the consumer
        }
        (rows.max(0) as usize)
            .div_ceil(self.batch_size.max(1))
            .clamp(2, MAX_AHEAD)
    }
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions::new(8192)
    }
}

/// A task's results on their way to the consumer.
enum Message<T> {
    Result(T),
    /// The task is done, or failed, with its last result: a task of one
    /// result (a small file's row group) then costs the consumer one
    /// wake-up, not two.
    End(Option<T>, Result<()>),
}

/// Where workers take tasks from, one at a time.
struct Source<N, T> {
    next: N,
    /// Takes each task's channel, in the order the tasks are handed out;
    /// `None` once the tasks ran out or the consumer stopped.
    order: Option<SyncSender<Receiver<Message<T>>>>,
}

/// Runs tasks on `workers` threads and hands their results to `sink` on
/// this thread, in task order.
///
/// `next_task` is called by one worker at a time (under a lock) and gives
/// the next task with how many results it may hold ahead of `sink`, or
/// `None` at the end; `work` runs a task, handing each result to `send`,
/// which says `false` once nobody wants more. At most `workers` tasks wait
/// for the consumer besides those being worked on, so memory is bounded by
/// about twice `workers` tasks' allowance. Stops at the first error, from
/// `next_task`, `work` or `sink`; a panic in a worker is raised again here.
pub(crate) fn run_ordered<W: Send, T: Send>(
    workers: usize,
    next_task: impl FnMut() -> Result<Option<(W, usize)>> + Send,
    work: impl Fn(W, &dyn Fn(T) -> bool) -> Result<()> + Sync,
    mut sink: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let workers = workers.max(1);
    let (order, tasks) = sync_channel(workers);
    let source = Mutex::new(Source {
        next: next_task,
        order: Some(order),
    });
    std::thread::scope(|scope| {
        let worker = || {
            while let Some((task, results)) = take_task(&source) {
                // Each result is sent once the next one is made, so that
                // the last goes with the end.
                let held = std::cell::Cell::new(None);
                let ended = work(task, &|t| match held.replace(Some(t)) {
                    Some(previous) => results.send(Message::Result(previous)).is_ok(),
                    None => true,
                });
                // The consumer may be gone; the next take_task finds out.
                let _ = results.send(Message::End(held.take(), ended));
            }
        };
        let handles: Vec<_> = (0..workers)
            .map(|_| crate::threads::spawn_scoped(scope, worker))
            .collect();
        let mut outcome = Ok(());
        'tasks: for results in tasks.iter() {
            loop {
                let step = match results.recv() {
                    Ok(Message::Result(t)) => sink(t),
                    Ok(Message::End(last, ended)) => match last.map_or(Ok(()), &mut sink) {
                        Ok(()) if ended.is_ok() => continue 'tasks,
                        step => step.and(ended),
                    },
                    // Its worker panicked: raised again below.
                    Err(_) => break 'tasks,
                };
                if let Err(e) = step {
                    outcome = Err(e);
                    break 'tasks;
                }
            }
        }
        // Unblocks the workers still sending (their channels go with it),
        // so that they stop.
        drop(tasks);
        for handle in handles {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        outcome
    })
}

/// The next task from `source` and the sender of its results, whose
/// receiver is queued for the consumer; `None` when there is none or the
/// consumer stopped. A failure to make the task is queued as its result.
#[allow(clippy::type_complexity)]
fn take_task<N, W, T>(source: &Mutex<Source<N, T>>) -> Option<(W, SyncSender<Message<T>>)>
where
    N: FnMut() -> Result<Option<(W, usize)>>,
{
    // A poisoned lock: another worker panicked making a task; it is
    // raised when that worker is joined.
    let mut source = source.lock().ok()?;
    let order = source.order.clone()?;
    let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut source.next));
    let (task, ahead) = match next {
        Ok(Ok(Some(task))) => task,
        Ok(Ok(None)) => {
            source.order = None;
            return None;
        }
        Ok(Err(e)) => {
            source.order = None;
            let (results, receiver) = sync_channel(1);
            let _ = results.send(Message::End(None, Err(e)));
            let _ = order.send(receiver);
            return None;
        }
        Err(panic) => {
            source.order = None;
            drop(source);
            std::panic::resume_unwind(panic);
        }
    };
    let (results, receiver) = sync_channel(ahead.max(1));
    if order.send(receiver).is_err() {
        source.order = None;
        return None;
    }
    Some((task, results))
}

impl ParquetFile {
    /// Runs `plan`: the row groups it reads are spread over the worker
    /// threads (the module's ordered executor), each batch turned into a `T` by `map`
    /// there; `sink` gets the results on this thread, in file order. Stops
    /// at the first error, from `map` or `sink`.
    pub fn scan<T: Send>(
        &self,
        plan: &ScanPlan,
        options: &ScanOptions,
        map: impl Fn(RecordBatch) -> Result<T> + Sync,
        sink: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        let read: Vec<&RowGroupPlan> = plan
            .row_groups()
            .iter()
            .filter(|p| matches!(p.decision, Decision::Read { .. }))
            .collect();
        let workers = options.workers(read.len());
        let mut tasks = read.into_iter().map(|p| {
            let rows = self.metadata().row_group(p.row_group).num_rows();
            (p, options.ahead(rows, workers))
        });
        run_ordered(
            workers,
            move || Ok(tasks.next()),
            |task, send| self.read_row_group(plan, task, options.batch_size, &map, send),
            sink,
        )
    }

    /// Reads one row group as `plan` says, each batch turned into a `T` by
    /// `map` and handed to `send` until it says stop.
    pub(crate) fn read_row_group<T>(
        &self,
        plan: &ScanPlan,
        row_group: &RowGroupPlan,
        batch_size: usize,
        map: &impl Fn(RecordBatch) -> Result<T>,
        send: &dyn Fn(T) -> bool,
    ) -> Result<()> {
        let Some(mut reader) = self.row_group_batches(plan, row_group, batch_size)? else {
            return Ok(());
        };
        let mut rows = FileRows::of(self, row_group);
        while let Some(batch) = reader
            .next(&self.path)
            .map_err(|e| self.naming_the_column(plan, row_group, e))?
        {
            let read = batch.num_rows();
            let result = match map(batch.clone()) {
                Ok(result) => result,
                Err(mut failure) => {
                    // The rows before the one that failed go first, so
                    // that a read stops where its data went bad, not at
                    // its batch's start: `get --strict --limit 3` of rows
                    // whose fourth does not convert prints three, and
                    // needs nothing more. Those rows may fail at an
                    // earlier row (a filter's operand, read first): that
                    // one is the error, and the rows before it go.
                    let mut end = read as u64;
                    while let Some(row) = failure.row().filter(|&row| row > 0 && row < end) {
                        match map(batch.slice(0, row as usize)) {
                            Ok(before) => match send(before) {
                                true => break,
                                false => return Ok(()),
                            },
                            Err(earlier) => (end, failure) = (row, earlier),
                        }
                    }
                    return Err(rows.in_file(failure).in_file(&self.path));
                }
            };
            rows.advance(read);
            if !send(result) {
                break; // the consumer stopped
            }
        }
        Ok(())
    }

    /// `e`, an error reading `row_group` as `plan` says, naming the column
    /// whose pages it comes from: each leaf is read again alone, and the
    /// first that fails gives its own error. The parquet crate's errors
    /// name no column, and the reader reads every leaf at once. `e` as it
    /// is when no leaf fails alone.
    #[cold]
    pub(crate) fn naming_the_column(
        &self,
        plan: &ScanPlan,
        row_group: &RowGroupPlan,
        e: Error,
    ) -> Error {
        let Decision::Read { leaves, selection } = &row_group.decision else {
            return e;
        };
        if e.names_its_row_group() {
            return e;
        }
        let schema = self.parquet_schema();
        let rg = row_group.row_group;
        for &leaf in leaves {
            let column = schema.column(leaf).path().string();
            let context = || format!("reading row group {rg}, column \"{column}\"");
            let failed = self
                .row_group_reader(
                    plan.paged.as_ref().unwrap_or(&self.metadata),
                    rg,
                    ROWS_PER_CHECK,
                    ProjectionMask::leaves(schema, [leaf]),
                    selection.clone(),
                )
                .and_then(|mut reader| {
                    while reader.next_in(&self.path, &context)?.is_some() {}
                    Ok(())
                });
            if let Err(alone) = failed {
                return alone;
            }
        }
        e
    }

    /// The reader of one row group as `plan` says; `None` if it is skipped.
    pub(crate) fn row_group_batches(
        &self,
        plan: &ScanPlan,
        row_group: &RowGroupPlan,
        batch_size: usize,
    ) -> Result<Option<RowGroupBatches>> {
        let Decision::Read { leaves, selection } = &row_group.decision else {
            return Ok(None);
        };
        let schema = self.parquet_schema();
        let mask = if leaves.len() == schema.num_columns() {
            ProjectionMask::all()
        } else {
            ProjectionMask::leaves(schema, leaves.iter().copied())
        };
        self.row_group_reader(
            plan.paged.as_ref().unwrap_or(&self.metadata),
            row_group.row_group,
            batch_size.max(1),
            mask,
            selection.clone(),
        )
        .map(Some)
    }
}

/// Where the batches of a row group's reader are in their file: an error
/// about a row of a batch (as kernels over a batch name it) is moved to
/// the file's row, counting the rows of the row groups before and the
/// rows the selection skips.
pub(crate) struct FileRows {
    /// Its first row in the file.
    first: u64,
    selection: Option<RowSelection>,
    /// Rows read from the row group before the next batch.
    read: u64,
}

impl FileRows {
    /// Before the first batch of `row_group` of `file`.
    pub(crate) fn of(file: &ParquetFile, row_group: &RowGroupPlan) -> FileRows {
        let first = (0..row_group.row_group)
            .map(|i| file.metadata().row_group(i).num_rows().max(0) as u64)
            .sum();
        let selection = match &row_group.decision {
            Decision::Read { selection, .. } => selection.clone(),
            Decision::Skip(_) => None,
        };
        FileRows {
            first,
            selection,
            read: 0,
        }
    }

    /// `e`, about a row of the next batch, about the file's row instead.
    #[cold]
    pub(crate) fn in_file(&self, e: Error) -> Error {
        e.map_row(|row| self.first + self.in_row_group(self.read + row))
    }

    /// Counts a batch of `rows` rows as read.
    pub(crate) fn advance(&mut self, rows: usize) {
        self.read += rows as u64;
    }

    /// The row of the row group that is the `selected`-th (from 0) that
    /// the selection selects.
    fn in_row_group(&self, selected: u64) -> u64 {
        let Some(selection) = &self.selection else {
            return selected;
        };
        let (mut row, mut left) = (0, selected);
        for run in selection.iter() {
            let count = run.row_count as u64;
            if !run.skip {
                if left < count {
                    return row + left;
                }
                left -= count;
            }
            row += count;
        }
        row + left
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

/// The batches of one row group's reader, held to the rows the footer
/// counts: a page that holds fewer values than its header says would
/// end a column early, and the parquet crate, reading one column alone,
/// gives fewer rows without a word.
pub(crate) struct RowGroupBatches {
    reader: ParquetRecordBatchReader,
    row_group: usize,
    /// The rows the footer counts, those the selection keeps.
    expected: u64,
    read: u64,
}

impl RowGroupBatches {
    /// `reader`'s batches of row group `row_group`, which are to hold
    /// `expected` rows.
    pub(super) fn new(
        reader: ParquetRecordBatchReader,
        row_group: usize,
        expected: u64,
    ) -> RowGroupBatches {
        RowGroupBatches {
            reader,
            row_group,
            expected,
            read: 0,
        }
    }

    /// The next batch, with its errors and panics as our errors, naming
    /// the row group (the parquet crate's errors name neither it nor the
    /// column).
    pub(crate) fn next(&mut self, path: &Path) -> Result<Option<RecordBatch>> {
        let row_group = self.row_group;
        self.next_in(path, &|| format!("reading row group {row_group}"))
    }

    /// [`next`](Self::next), its errors beginning with what `context` says.
    fn next_in(
        &mut self,
        path: &Path,
        context: &dyn Fn() -> String,
    ) -> Result<Option<RecordBatch>> {
        let batch = guarded(path, || self.reader.next())
            .map_err(|e| {
                let message = format!("{}: {}", context(), e.message());
                Error::new(ErrorKind::Parquet, message).in_file(path)
            })?
            .transpose()
            .map_err(|e| Error::parquet(&context(), &e).in_file(path).with_source(e))?;
        match &batch {
            Some(batch) => self.read += batch.num_rows() as u64,
            None if self.read != self.expected => {
                let message = format!(
                    "{}: {} rows where the footer counts {}: a page holds another count of values than its row group",
                    context(),
                    self.read,
                    self.expected
                );
                return Err(Error::new(ErrorKind::Parquet, message).in_file(path));
            }
            None => {}
        }
        Ok(batch)
    }
}

/// Rows read at a time when each leaf of a row group is read again alone
/// ([`ParquetFile::naming_the_column`]).
const ROWS_PER_CHECK: usize = 8192;
