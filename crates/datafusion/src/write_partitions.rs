//! `COPY ... TO 'dir/'` written where the rows are: each partition of the
//! input goes to a file of its own in the directory, by the core's
//! [`BatchEncoder`], and [`WritePartitionsExec`] gives one row per
//! partition: its count and its file, staged.
//!
//! DataFusion's own `COPY` gathers every partition into one stream,
//! which its demuxer cuts into files: right in one process, but on a
//! cluster it brings all the rows to the machine that planned the query.
//! This node keeps the partitions apart, so each task of a distributed
//! plan writes its own share; [`CommitFilesExec`] above it (where a
//! planner puts it, as `vshred-distributed`'s does) adds up the counts.
//!
//! A file is named `{prefix}_{partition}.parquet`: the prefix must tell
//! the tasks (and the writes) apart. A partition with no rows writes no
//! file. Each file is written under a hidden name beside it
//! (`.{prefix}_{partition}.parquet.….tmp`, which readers skip) and left
//! there: [`CommitFilesExec`] renames every file into place only once
//! every partition's is written, so a `COPY` that fails anywhere, or is
//! cancelled, leaves no file of its own, where each task's file used to
//! stay once that task had finished. A write that fails or is cancelled
//! removes its own hidden file; the commit removes those of the others.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use std::path::Path;
use std::sync::Mutex;

use arrow::array::{Array, AsArray, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};
use vshred::encode::dataset::lock_new_dataset;
use vshred::encode::{BatchEncoder, BatchesWritten};
use vshred::output::{Completion, Output, UndoOnInterrupt, undo_on_interrupt};

use crate::copy::CopyOptions;
use crate::functions::external;
use crate::whole_files::{highest_missing, remove_empty_dirs};

/// Writes each partition of its input to its own file in a directory
/// (see the [module](self)).
#[derive(Debug)]
pub struct WritePartitionsExec {
    input: Arc<dyn ExecutionPlan>,
    dir: PathBuf,
    prefix: String,
    options: CopyOptions,
    properties: Arc<PlanProperties>,
}

impl WritePartitionsExec {
    /// Writes `input`'s partitions to `dir/{prefix}_{partition}.parquet`
    /// with `options`; the directory must be there ([`CommitFilesExec`]
    /// makes it).
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        dir: PathBuf,
        prefix: String,
        options: CopyOptions,
    ) -> WritePartitionsExec {
        let schema = staged_schema();
        let partitions = input.properties().partitioning.partition_count();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            datafusion::physical_plan::Partitioning::UnknownPartitioning(partitions),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        WritePartitionsExec {
            input,
            dir,
            prefix,
            options,
            properties: Arc::new(properties),
        }
    }

    /// The directory, the file names' prefix and the options.
    pub fn parts(&self) -> (&PathBuf, &str, &CopyOptions) {
        (&self.dir, &self.prefix, &self.options)
    }
}

/// What a `COPY` gives: the rows written.
pub fn counts_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

/// What [`WritePartitionsExec`] gives for each partition: the rows
/// written, and the names in the directory of the file staged and of the
/// file it is to become (null where no file was written).
fn staged_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("count", DataType::UInt64, false),
        Field::new("staged", DataType::Utf8, true),
        Field::new("file", DataType::Utf8, true),
    ]))
}

impl DisplayAs for WritePartitionsExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "WritePartitionsExec: dir={}, files={}_<partition>.parquet",
            self.dir.display(),
            self.prefix
        )
    }
}

impl ExecutionPlan for WritePartitionsExec {
    fn name(&self) -> &str {
        "WritePartitionsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (Some(input), None) = (children.pop(), children.pop()) else {
            return Err(DataFusionError::Internal(
                "WritePartitionsExec takes one input".into(),
            ));
        };
        Ok(Arc::new(WritePartitionsExec::new(
            input,
            self.dir.clone(),
            self.prefix.clone(),
            self.options.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let schema = self.input.schema();
        let path = self
            .dir
            .join(format!("{}_{partition}.parquet", self.prefix));
        let options = self.options.encode().clone();
        let written = async move {
            let name = path.display().to_string();
            let mut encoding = None;
            while let Some(batch) = input.next().await {
                let batch = batch?;
                if batch.num_rows() == 0 {
                    continue;
                }
                let (_, batches) = match &mut encoding {
                    Some(encoding) => encoding,
                    // The directory is the commit's to make: made here, it
                    // could come back after a failed COPY had removed it.
                    None => {
                        let opened =
                            BatchEncoder::new(schema.clone(), Output::Path(path.clone()), &options)
                                .map_err(|e| external(e.in_file(&name)))?;
                        encoding.insert(encode_on_thread(opened))
                    }
                };
                if batches.send(batch).await.is_err() {
                    // The encoder failed; its error is awaited below.
                    break;
                }
            }
            let (rows, staged) = match encoding {
                Some((encoded, batches)) => {
                    drop(batches);
                    let (written, completion) = encoded
                        .await
                        .map_err(|e| DataFusionError::Execution(format!("writing {name}: {e}")))?
                        .map_err(|e| external(e.in_file(&name)))?;
                    let staged = completion
                        .keep_staged()
                        .map_err(|e| external(e.in_file(&name)))?;
                    (written.summary.rows, staged)
                }
                None => (0, None),
            };
            let file_name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
            let file = staged.as_ref().and(file_name(&path));
            let staged = staged.as_deref().and_then(file_name);
            Ok(RecordBatch::try_new(
                staged_schema(),
                vec![
                    Arc::new(UInt64Array::from(vec![rows])),
                    Arc::new(StringArray::from(vec![staged])),
                    Arc::new(StringArray::from(vec![file])),
                ],
            )?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            staged_schema(),
            futures::stream::once(written),
        )))
    }
}

/// Puts the files a [`WritePartitionsExec`] staged into place once every
/// partition's is written, and gives the `COPY`'s count (see the
/// [module](self)). Its input is the write's partitions gathered into one
/// (on a cluster, across the network): it runs where the query was
/// planned, and must see the directory the tasks wrote to.
#[derive(Debug)]
pub struct CommitFilesExec {
    input: Arc<dyn ExecutionPlan>,
    dir: PathBuf,
    prefix: String,
    /// The highest of `dir` and its parents that was missing when the
    /// `COPY` was planned: removed, if empty, when it fails.
    missing: Option<PathBuf>,
    properties: Arc<PlanProperties>,
}

impl CommitFilesExec {
    /// Commits the files of `input`, one partition of the rows of a
    /// [`WritePartitionsExec`] whose files are `dir/{prefix}_*`. Called
    /// while planning: a failure removes the directories that were missing
    /// then, when left empty.
    pub fn new(input: Arc<dyn ExecutionPlan>, dir: PathBuf, prefix: String) -> CommitFilesExec {
        let missing = highest_missing(&dir);
        CommitFilesExec::with_missing(input, dir, prefix, missing)
    }

    fn with_missing(
        input: Arc<dyn ExecutionPlan>,
        dir: PathBuf,
        prefix: String,
        missing: Option<PathBuf>,
    ) -> CommitFilesExec {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(counts_schema()),
            datafusion::physical_plan::Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        CommitFilesExec {
            input,
            dir,
            prefix,
            missing,
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for CommitFilesExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "CommitFilesExec: dir={}, files={}_*.parquet",
            self.dir.display(),
            self.prefix
        )
    }
}

impl ExecutionPlan for CommitFilesExec {
    fn name(&self) -> &str {
        "CommitFilesExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (Some(input), None) = (children.pop(), children.pop()) else {
            return Err(DataFusionError::Internal(
                "CommitFilesExec takes one input".into(),
            ));
        };
        Ok(Arc::new(CommitFilesExec::with_missing(
            input,
            self.dir.clone(),
            self.prefix.clone(),
            self.missing.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let partitions = self.input.properties().partitioning.partition_count();
        if partition != 0 || partitions != 1 {
            return Err(DataFusionError::Internal(format!(
                "CommitFilesExec commits one partition of {partitions}, not partition {partition}"
            )));
        }
        // The guard first: what follows may fail, and the directory is
        // made before any task writes (they make none).
        let mut staged =
            StagedFiles::new(self.dir.clone(), self.prefix.clone(), self.missing.clone());
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| DataFusionError::Execution(format!("{}: {e}", self.dir.display())))?;
        let mut input = self.input.execute(0, context)?;
        let committed = async move {
            let mut rows = 0;
            while let Some(batch) = input.next().await {
                rows = staged
                    .add(&batch?)?
                    .checked_add(rows)
                    .ok_or_else(counts_overflow)?;
            }
            staged.commit()?;
            Ok(RecordBatch::try_new(
                counts_schema(),
                vec![Arc::new(UInt64Array::from(vec![rows]))],
            )?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            counts_schema(),
            futures::stream::once(committed),
        )))
    }
}

/// The process is being interrupted, the `COPY`'s files removed.
fn interrupted() -> DataFusionError {
    DataFusionError::Execution("the COPY was interrupted".into())
}

/// The tasks' counts add up past a `u64`: a worker's error.
fn counts_overflow() -> DataFusionError {
    DataFusionError::Execution("a COPY's counts overflow".into())
}

/// The files of a `COPY`'s tasks, staged under hidden names until all
/// are written. Dropped before [`commit`](Self::commit) (the query failed
/// or was cancelled), it removes them, and with them any other hidden
/// file of this `COPY` in the directory (a task's that finished as the
/// query failed) and the directories the tasks made, if left empty; an
/// interrupted process removes them too.
struct StagedFiles {
    shared: Arc<Staging>,
    _undo: UndoOnInterrupt,
}

/// What [`StagedFiles`] shares with the process's interrupt handler.
struct Staging {
    dir: PathBuf,
    prefix: String,
    /// See [`CommitFilesExec::missing`].
    missing: Option<PathBuf>,
    /// Each file's staged name and its own, in the directory; `None` once
    /// committed or removed.
    files: Mutex<Option<Vec<(String, String)>>>,
}

impl StagedFiles {
    fn new(dir: PathBuf, prefix: String, missing: Option<PathBuf>) -> StagedFiles {
        let shared = Arc::new(Staging {
            dir,
            prefix,
            missing,
            files: Mutex::new(Some(Vec::new())),
        });
        let undo = {
            let shared = shared.clone();
            undo_on_interrupt(move || shared.remove(SWEEPS))
        };
        StagedFiles {
            shared,
            _undo: undo,
        }
    }

    /// Takes the files of `batch`, rows of a [`WritePartitionsExec`];
    /// returns the rows they hold. The names come from the workers: each
    /// must be a name in the directory of this `COPY`'s.
    fn add(&mut self, batch: &RecordBatch) -> Result<u64> {
        let [counts, staged, files] = batch.columns() else {
            return Err(DataFusionError::Internal(format!(
                "a COPY's task gave {} columns",
                batch.num_columns()
            )));
        };
        let (Some(counts), Some(staged), Some(files)) = (
            counts.as_primitive_opt::<arrow::datatypes::UInt64Type>(),
            staged.as_string_opt::<i32>(),
            files.as_string_opt::<i32>(),
        ) else {
            return Err(DataFusionError::Internal(format!(
                "a COPY's task gave {}",
                batch.schema()
            )));
        };
        let prefix = &self.shared.prefix;
        let plain = |name: &str| !name.contains(['/', '\\']) && name != "." && name != "..";
        let mut guard = self.shared.files.lock().unwrap_or_else(|e| e.into_inner());
        // Taken: the process is being interrupted, its files removed.
        let Some(taken) = guard.as_mut() else {
            return Err(interrupted());
        };
        for row in 0..batch.num_rows() {
            if staged.is_null(row) {
                continue;
            }
            let (staged, file) = (staged.value(row), files.value(row));
            // A file's staged name starts as `.{file}.` (`Output`'s).
            let ours = plain(staged)
                && plain(file)
                && file.starts_with(&format!("{prefix}_"))
                && file.ends_with(".parquet")
                && staged.starts_with(&format!(".{file}."));
            if !ours || taken.iter().any(|(_, f)| f == file) {
                return Err(DataFusionError::Execution(format!(
                    "a task of the COPY to {} wrote {staged:?} for {file:?}, not a file of this COPY ({prefix}_*.parquet) or one written twice",
                    self.shared.dir.display()
                )));
            }
            taken.push((staged.to_string(), file.to_string()));
        }
        counts
            .values()
            .iter()
            .try_fold(0u64, |sum, &n| sum.checked_add(n))
            .ok_or_else(counts_overflow)
    }

    /// Renames every staged file into place. Should one rename fail, the
    /// files already renamed are removed with the others.
    fn commit(self) -> Result<()> {
        let mut guard = self.shared.files.lock().unwrap_or_else(|e| e.into_inner());
        let Some(files) = guard.take() else {
            return Err(interrupted());
        };
        // No rows, no file: nor the directory, as in one process (every
        // task has ended: one round).
        if files.is_empty() {
            *guard = Some(files);
            drop(guard);
            self.shared.remove(1);
            return Ok(());
        }
        // A new dataset's directory, under its writers' lock: another run
        // that began one here at the same time may have put its files in
        // since the check when the COPY was planned; their rows and these
        // would read as one dataset.
        let _lock = match lock_new_dataset(&self.shared.dir) {
            Ok(lock) => lock,
            Err(e) => {
                *guard = Some(files);
                return Err(external(e));
            }
        };
        for (at, (staged, file)) in files.iter().enumerate() {
            let dir = &self.shared.dir;
            if let Err(e) = std::fs::rename(dir.join(staged), dir.join(file)) {
                for (_, done) in &files[..at] {
                    let _ = std::fs::remove_file(dir.join(done));
                }
                *guard = Some(files[at..].to_vec());
                return Err(DataFusionError::Execution(format!(
                    "{}: {e}",
                    dir.join(file).display()
                )));
            }
        }
        Ok(())
    }
}

/// Sweeps of a failed `COPY`'s directory ([`Staging::remove`]).
const SWEEPS: usize = 4;

impl Drop for StagedFiles {
    fn drop(&mut self) {
        self.shared.remove(SWEEPS);
    }
}

impl Staging {
    /// Removes the staged files, unless committed, any other hidden file
    /// of this `COPY` in the directory, and the directories made for it
    /// that are left empty.
    ///
    /// A task still writing (its cancellation on the way) may make a
    /// hidden file after a sweep: `rounds` sweeps, 25 ms apart, end once
    /// the directory is gone (then no task can make one). In a directory
    /// that was there before, a task that ends just then may still leave
    /// its file, under its hidden name.
    fn remove(&self, rounds: usize) {
        let mut guard = self.files.lock().unwrap_or_else(|e| e.into_inner());
        // The staged files are among the hidden ones swept (`add` checked
        // their names).
        if guard.take().is_none() {
            return;
        }
        let hidden = format!(".{}_", self.prefix);
        for round in 1..=rounds {
            for entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
                if entry.file_name().to_string_lossy().starts_with(&hidden) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
            if let Some(missing) = &self.missing {
                remove_empty_dirs(missing);
            }
            let gone = self.missing.is_some() && !self.dir.exists();
            if gone || round == rounds {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }
}

/// The file `encoder` makes of the batches sent, on a blocking thread
/// (an encode keeps a core busy, which would stall the runtime's other
/// tasks), staged beside its path once the sender is dropped.
///
/// The thread stops, and the file goes, as soon as the query does: a
/// cancelled query (a failed `COPY` elsewhere in the cluster, a
/// coordinator gone) drops the receiver of the result, so the thread
/// neither finishes the file nor, if already finishing, puts it in place.
/// The receiver is first in the pair so that it drops before the sender
/// and the thread sees the query gone, not an input that ended.
fn encode_on_thread(mut encoder: BatchEncoder) -> (StagedFile, mpsc::Sender<RecordBatch>) {
    let (batches_in, mut batches) = mpsc::channel::<RecordBatch>(2);
    let (done, encoded) = oneshot::channel();
    tokio::task::spawn_blocking(move || {
        while let Some(batch) = batches.blocking_recv() {
            if let Err(e) = encoder.write(&batch) {
                let _ = done.send(Err(e));
                return;
            }
        }
        if !done.is_closed() {
            // Dropped unsent, a staged file is removed.
            let _ = done.send(encoder.finish_staged());
        }
    });
    (encoded, batches_in)
}

/// The file a blocking thread is writing, staged once written.
type StagedFile = oneshot::Receiver<vshred::Result<(BatchesWritten, Completion)>>;
