//! A `COPY` that fails leaves nothing behind, whichever writer writes it.
//!
//! DataFusion's sinks (Parquet without Variant columns, CSV, JSON) close
//! each file when its rows end and only then learn whether the query
//! ended well: a query that failed late (a value that does not convert, a
//! division by zero) left the rows before the failure
//! at the target, in place of the file that was there. [`WholeFiles`] runs
//! that sink unchanged, over a store that takes its writes as it makes
//! them but completes none until the sink has returned well (`Deferred`);
//! otherwise it aborts them. Each write is an upload the store completes
//! at once (a local file is written aside and renamed into place), so a
//! failed `COPY` leaves every path as it was, as the Variant sink
//! ([`VariantParquetSink`](crate::copy::VariantParquetSink)) does. A local
//! store makes a file's directories when its upload starts: those a failed
//! `COPY` made, and left empty, are removed. A `COPY` whose query is
//! cancelled (its task dropped) is undone on the runtime; on the local file
//! system, one whose process is interrupted is undone by the core's signal
//! handler (the staged files and the directories made removed), and one
//! killed outright leaves the staged files, under hidden names that
//! readers skip (`.x.parquet.vshred-12-0#1`). The files of a `COPY` that
//! ended well appear one after another: a store that then fails one (a
//! rename refused) leaves those before it in place, and removes the one
//! it refused. The session's CSV and JSON formats are DataFusion's, their
//! writers' sinks put in a [`WholeFiles`] ([`WholeFilesFactory`]).

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result};
use datafusion::common::{GetExt, Statistics};
use datafusion::datasource::file_format::csv::{CsvFormatFactory, CsvSink};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::json::{JsonFormatFactory, JsonSink};
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSource};
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::TaskContext;
use datafusion::object_store::ObjectStoreExt;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, SendableRecordBatchStream,
};
use futures::stream::BoxStream;
use vshred::encode::dataset::lock_new_dataset;
use vshred::output::{UndoOnInterrupt, undo_on_interrupt};

use crate::functions::external;

/// A sink of DataFusion's (Parquet, CSV, JSON), its files completed only
/// when it ends well.
#[derive(Debug)]
pub struct WholeFiles {
    /// The writer DataFusion planned (over no input: only its sink is
    /// used), a [`DataSinkExec`] of one of [`file_sink`]'s sinks.
    planned: Arc<dyn ExecutionPlan>,
}

/// `sink` as a [`FileSink`], if it is one of DataFusion's that write whole
/// files through a store.
fn file_sink(sink: &dyn DataSink) -> Option<&dyn FileSink> {
    let sink = sink as &dyn std::any::Any;
    let parquet = || {
        sink.downcast_ref::<ParquetSink>()
            .map(|s| s as &dyn FileSink)
    };
    let csv = || sink.downcast_ref::<CsvSink>().map(|s| s as &dyn FileSink);
    let json = || sink.downcast_ref::<JsonSink>().map(|s| s as &dyn FileSink);
    parquet().or_else(csv).or_else(json)
}

impl WholeFiles {
    /// `planned`, a writer plan of one of DataFusion's formats, with its
    /// sink in a [`WholeFiles`] and `input` as its input; any other plan
    /// as it is.
    pub fn around(
        planned: Arc<dyn ExecutionPlan>,
        input: Arc<dyn ExecutionPlan>,
    ) -> Arc<dyn ExecutionPlan> {
        let Some(exec) = planned.downcast_ref::<DataSinkExec>() else {
            return planned;
        };
        if file_sink(exec.sink()).is_none() {
            return planned;
        }
        let sort_order = exec.sort_order().clone();
        let sink = Arc::new(WholeFiles { planned });
        Arc::new(DataSinkExec::new(input, sink, sort_order))
    }

    fn sink(&self) -> &dyn FileSink {
        let exec = self.planned.downcast_ref::<DataSinkExec>();
        // Checked in `around`.
        let sink = exec.and_then(|e| file_sink(e.sink()));
        sink.expect("a DataSinkExec of a sink of whole files")
    }
}

impl DisplayAs for WholeFiles {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.sink().fmt_as(t, f)
    }
}

#[async_trait]
impl DataSink for WholeFiles {
    fn metrics(&self) -> Option<MetricsSet> {
        self.sink().metrics()
    }

    fn schema(&self) -> &SchemaRef {
        self.sink().schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let data = crate::copy::refuse_unreadable_partition_values(data, self.config());
        FileSink::write_all(self, data, context).await
    }
}

#[async_trait]
impl FileSink for WholeFiles {
    fn config(&self) -> &FileSinkConfig {
        self.sink().config()
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let writes = CopyWrites::begin(self.config(), object_store);
        let written = self
            .sink()
            .spawn_writer_tasks_and_join(context, demux_task, file_stream_rx, writes.store())
            .await;
        match written {
            Ok(rows) => {
                writes.commit().await?;
                Ok(rows)
            }
            Err(e) => {
                writes.abort().await;
                Err(e)
            }
        }
    }
}

/// How a session's format plans its writers, given DataFusion's format
/// (`inner`), which does all else.
#[async_trait]
pub trait PlanWriter: fmt::Debug + Send + Sync + 'static {
    /// The writer of `input`'s rows to `conf`'s targets.
    async fn plan_writer(
        &self,
        inner: &dyn FileFormat,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>>;
}

/// DataFusion's writer, its files completed only when it ends well: its
/// sink, in a [`WholeFiles`], over the query's rows.
#[derive(Debug)]
pub struct WholeFilesWriter;

#[async_trait]
impl PlanWriter for WholeFilesWriter {
    async fn plan_writer(
        &self,
        inner: &dyn FileFormat,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Planned over no input: its sink alone is kept, over the query's.
        let nothing = Arc::new(EmptyExec::new(input.schema()));
        let planned = inner
            .create_writer_physical_plan(nothing, state, conf, order_requirements)
            .await?;
        Ok(WholeFiles::around(planned, input))
    }
}

/// A format of DataFusion's (`inner`) whose writers `writer` plans.
#[derive(Debug)]
pub struct SessionFormat<W> {
    pub(crate) inner: Arc<dyn FileFormat>,
    pub(crate) writer: W,
}

/// DataFusion's CSV or JSON format factory, its writers' files completed
/// only when they end well ([`WholeFilesWriter`]).
#[derive(Debug)]
pub struct WholeFilesFactory(Arc<dyn FileFormatFactory>);

impl WholeFilesFactory {
    /// The formats to register in a session in place of DataFusion's.
    pub fn csv_and_json() -> [Arc<dyn FileFormatFactory>; 2] {
        [
            Arc::new(WholeFilesFactory(Arc::new(CsvFormatFactory::new()))),
            Arc::new(WholeFilesFactory(Arc::new(JsonFormatFactory::new()))),
        ]
    }
}

impl GetExt for WholeFilesFactory {
    fn get_ext(&self) -> String {
        self.0.get_ext()
    }
}

impl FileFormatFactory for WholeFilesFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> Result<Arc<dyn FileFormat>> {
        Ok(Arc::new(SessionFormat {
            inner: self.0.create(state, format_options)?,
            writer: WholeFilesWriter,
        }))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(SessionFormat {
            inner: self.0.default(),
            writer: WholeFilesWriter,
        })
    }
}

#[async_trait]
impl<W: PlanWriter> FileFormat for SessionFormat<W> {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        self.inner.get_ext_with_compression(compression)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        self.inner.infer_schema(state, store, objects).await
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        self.inner
            .infer_stats(state, store, table_schema, object)
            .await
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.create_physical_plan(state, conf).await
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.writer
            .plan_writer(self.inner.as_ref(), input, state, conf, order_requirements)
            .await
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        self.inner.file_source(table_schema)
    }
}

/// The writes of one `COPY`, held back by a [`Deferred`] store until they
/// are made to appear ([`commit`](Self::commit)) or undone
/// ([`abort`](Self::abort): the uploads aborted, the directories the
/// `COPY` made removed). Dropped before either, when its query is
/// cancelled, it is undone on the runtime.
pub(crate) struct CopyWrites {
    store: Arc<Deferred>,
    made: MadeDirs,
    /// The local directory of a `COPY` to a directory: a new dataset's,
    /// which its writes are put in only while no other writer's files are.
    new_dataset: Option<PathBuf>,
    ended: bool,
    /// For the local file system: the staged files and the directories
    /// made, removed by the core's signal handler if the process is
    /// interrupted (it exits without unwinding).
    _on_interrupt: Option<UndoOnInterrupt>,
}

impl CopyWrites {
    /// The writes of a `COPY` to the targets of `config`, through `store`.
    pub(crate) fn begin(config: &FileSinkConfig, store: Arc<dyn ObjectStore>) -> CopyWrites {
        // DataFusion's store for `file://` is the file system from `/`.
        let local = config.object_store_url.as_str().starts_with("file://");
        let made = MadeDirs::before(config);
        let staged = local.then(|| {
            Arc::new(Staged {
                made: made.clone(),
                ..Staged::default()
            })
        });
        let on_interrupt = staged.clone().map(|staged| {
            let made = made.clone();
            undo_on_interrupt(move || {
                staged.close();
                remove_staged(&lock(&staged.paths));
                made.remove_if_empty();
            })
        });
        let new_dataset = config
            .table_paths
            .first()
            .filter(|target| {
                target.scheme() == "file" && !config.file_output_mode.single_file_output(target)
            })
            .and_then(|target| target.get_url().to_file_path().ok());
        CopyWrites {
            store: Arc::new(Deferred::new(store, staged)),
            made,
            new_dataset,
            ended: false,
            _on_interrupt: on_interrupt,
        }
    }

    /// The store to write through.
    pub(crate) fn store(&self) -> Arc<dyn ObjectStore> {
        self.store.clone()
    }

    /// Makes the files appear, one after another: a store that fails one
    /// (a rename refused, say) leaves those before it in place. A new
    /// dataset's directory is checked under its writers' lock first: two
    /// runs that began one at once would otherwise both put their files
    /// there (the check when the `COPY` was planned saw it empty), every
    /// row twice; the second fails.
    pub(crate) async fn commit(mut self) -> Result<()> {
        self.ended = true;
        let held = match self.new_dataset.clone().filter(|dir| dir.is_dir()) {
            Some(dir) => {
                let locked = tokio::task::spawn_blocking(move || lock_new_dataset(&dir)).await;
                let locked = locked
                    .map_err(|e| DataFusionError::External(Box::new(e)))
                    .and_then(|locked| locked.map_err(external));
                match locked {
                    Ok(lock) => Some(lock),
                    Err(e) => {
                        self.undo().await;
                        return Err(e);
                    }
                }
            }
            None => None,
        };
        let committed = self.store.complete().await;
        drop(held);
        if committed.is_err() {
            self.made.remove_if_empty();
        }
        Ok(committed?)
    }

    /// Undoes the writes.
    pub(crate) async fn abort(mut self) {
        self.ended = true;
        self.undo().await;
    }

    async fn undo(&self) {
        self.store.abort().await;
        self.made.remove_if_empty();
    }
}

impl Drop for CopyWrites {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let (store, made) = (self.store.clone(), std::mem::take(&mut self.made));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                store.abort().await;
                made.remove_if_empty();
            });
        }
    }
}

/// Removes the files the local file system stages for uploads to `dests`
/// (`{dest}#{n}`, renamed to `dest` when complete; each `dest` a hidden
/// name, [`hidden_beside`]).
fn remove_staged(dests: &[PathBuf]) {
    for dest in dests {
        let (Some(dir), Some(name)) = (dest.parent(), dest.file_name()) else {
            continue;
        };
        let prefix = format!("{}#", name.to_string_lossy());
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let file_name = entry.file_name();
            let staged = file_name
                .to_string_lossy()
                .strip_prefix(&prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if staged {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The highest directories above a `COPY`'s local targets, and above its
/// files (a partition's `k=1/` in a target that is there), that are not
/// there before it: the store makes them for the files, and they are the
/// `COPY`'s own.
#[derive(Clone, Debug, Default)]
struct MadeDirs(Arc<Mutex<Vec<PathBuf>>>);

impl MadeDirs {
    /// Those missing now, for the targets of `config`: a directory (a path
    /// ending in `/`) or a file (made in its parent).
    fn before(config: &FileSinkConfig) -> MadeDirs {
        let missing = config
            .table_paths
            .iter()
            .filter(|target| target.scheme() == "file")
            .filter_map(|target| {
                let path = target.get_url().to_file_path().ok()?;
                match target.as_str().ends_with('/') {
                    true => highest_missing(&path),
                    false => highest_missing(path.parent()?),
                }
            })
            .collect();
        MadeDirs(Arc::new(Mutex::new(missing)))
    }

    /// Notes the directories missing above `file`, which the store is
    /// about to make for it.
    fn making(&self, file: &std::path::Path) {
        if let Some(dir) = file.parent().and_then(highest_missing) {
            lock(&self.0).push(dir);
        }
    }

    /// Removes those directories, with those beneath them, where they hold
    /// no file: a failed `COPY` leaves nothing behind.
    fn remove_if_empty(&self) {
        for path in lock(&self.0).iter() {
            remove_empty_dirs(path);
        }
    }
}

/// Removes `dir` and the directories beneath it, where they hold no file.
pub(crate) fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
            }
        }
        // Refused while anything is in it.
        let _ = std::fs::remove_dir(dir);
    }
}

/// The highest of `dir` and the directories above it that is not there.
pub(crate) fn highest_missing(dir: &std::path::Path) -> Option<PathBuf> {
    let mut dir = dir.to_path_buf();
    let mut highest = None;
    while !dir.exists() {
        let parent = dir.parent().map(PathBuf::from);
        highest = Some(dir);
        dir = parent?;
    }
    highest
}

/// The local file system's uploads for one `COPY`: their paths, and a gate
/// that every staging and every rename into place passes. The signal
/// handler closes it before it removes what is staged: the file system
/// stages the files of a `COPY`'s partitions at once, and one staged just
/// after the handler looked would outlive the process.
#[derive(Debug, Default)]
struct Staged {
    paths: Mutex<Vec<PathBuf>>,
    gate: tokio::sync::RwLock<()>,
    /// The directories the uploads make.
    made: MadeDirs,
}

impl Staged {
    /// Waits for the stagings and renames under way, and lets no other
    /// start: the process is about to exit. It waits 2 seconds at most,
    /// so that a rename that hangs (a network disk) cannot keep a signal
    /// from ending the process; the cleanup then goes on without it.
    fn close(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            match self.gate.try_write() {
                Ok(closed) => return std::mem::forget(closed),
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2))
                }
                Err(_) => return,
            }
        }
    }
}

/// An object store whose writes appear only once [`complete`](Self::complete)d.
#[derive(Debug)]
struct Deferred {
    store: Arc<dyn ObjectStore>,
    writes: Mutex<Vec<Write>>,
    /// For the local file system.
    staged: Option<Arc<Staged>>,
}

/// A write held back: an upload of parts, kept from its start so that one
/// the sink drops unfinished is aborted here, not left to be cleaned up
/// after; or a whole object held in memory, for a put that must not
/// replace what is there or a store without uploads of parts.
#[derive(Debug)]
enum Write {
    Put(Path, PutPayload, PutOptions),
    Upload(Arc<Mutex<Upload>>),
}

/// An upload, shared by the store and the sink's handle to it.
#[derive(Debug)]
struct Upload {
    /// `None` once the store has taken it.
    upload: Option<Box<dyn MultipartUpload>>,
    /// Whether the sink completed it.
    finished: bool,
    /// For the local file system: the file's hidden name while it is
    /// written, and its own ([`hidden_beside`]).
    renamed: Option<(Path, Path)>,
}

/// Where the local file system writes the file `location` until it is
/// complete: beside it, under a hidden name (`.x.parquet.vshred-12-0`),
/// so that a process killed outright leaves nothing a reader takes for a
/// file of the dataset. The store's own staging of `location` itself,
/// `x.parquet#1`, Spark reads, and fails on.
fn hidden_beside(location: &Path) -> Path {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = location.filename().unwrap_or_default();
    let hidden = format!(".{name}.vshred-{}-{n}", std::process::id());
    let parts: Vec<_> = location.parts().collect();
    let parent = parts[..parts.len().saturating_sub(1)].iter().cloned();
    Path::from_iter(parent).join(hidden)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Deferred {
    fn new(store: Arc<dyn ObjectStore>, staged: Option<Arc<Staged>>) -> Deferred {
        Deferred {
            store,
            writes: Mutex::default(),
            staged,
        }
    }

    fn take(&self) -> Vec<Write> {
        std::mem::take(&mut lock(&self.writes))
    }

    /// Makes the writes held back appear; an upload the sink did not
    /// complete is an error (its file would be missing), after the others.
    async fn complete(&self) -> datafusion::object_store::Result<()> {
        let mut writes = self.take().into_iter();
        let mut unfinished = false;
        while let Some(write) = writes.next() {
            let done = match write {
                Write::Put(path, payload, options) => {
                    self.store.put_opts(&path, payload, options).await.map(drop)
                }
                Write::Upload(slot) => {
                    let (upload, finished, renamed) = {
                        let mut slot = lock(&slot);
                        (slot.upload.take(), slot.finished, slot.renamed.take())
                    };
                    match (upload, finished) {
                        (Some(mut upload), true) => {
                            let _open = self.open_gate().await;
                            match (upload.complete().await, renamed) {
                                (Ok(_), Some((hidden, own))) => {
                                    let renamed = self.store.rename(&hidden, &own).await;
                                    if renamed.is_err() {
                                        // Refused (a file that may not be
                                        // replaced): the staged copy goes.
                                        let _ = self.store.delete(&hidden).await;
                                    }
                                    renamed
                                }
                                (done, _) => done.map(drop),
                            }
                        }
                        (Some(mut upload), false) => {
                            unfinished = true;
                            upload.abort().await
                        }
                        (None, _) => Ok(()),
                    }
                }
            };
            if let Err(e) = done {
                Deferred::abort_all(writes).await;
                return Err(e);
            }
        }
        if unfinished {
            return Err(datafusion::object_store::Error::Generic {
                store: "Deferred",
                source: "a file's upload was never completed by its writer".into(),
            });
        }
        Ok(())
    }

    /// Drops the writes held back; the uploads' parts are removed.
    async fn abort(&self) {
        Deferred::abort_all(self.take().into_iter()).await;
    }

    async fn abort_all(writes: impl Iterator<Item = Write>) {
        for write in writes {
            if let Write::Upload(slot) = write {
                let upload = lock(&slot).upload.take();
                if let Some(mut upload) = upload {
                    // The error that ended the writing is the one to report.
                    let _ = upload.abort().await;
                }
            }
        }
    }

    /// Passes the local file system's gate ([`Staged`]), held while the
    /// guard lives; waits forever once it is closed.
    async fn open_gate(&self) -> Option<tokio::sync::RwLockReadGuard<'_, ()>> {
        match &self.staged {
            Some(staged) => Some(staged.gate.read().await),
            None => None,
        }
    }

    /// Starts an upload whose completion is held back.
    async fn upload(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> datafusion::object_store::Result<DeferredUpload> {
        let _open = self.open_gate().await;
        let renamed = self
            .staged
            .is_some()
            .then(|| (hidden_beside(location), location.clone()));
        let written = renamed.as_ref().map_or(location, |(hidden, _)| hidden);
        if let Some(staged) = &self.staged {
            let file = PathBuf::from("/").join(written.as_ref());
            staged.made.making(&file);
            lock(&staged.paths).push(file);
        }
        let upload = self.store.put_multipart_opts(written, opts).await?;
        let slot = Arc::new(Mutex::new(Upload {
            upload: Some(upload),
            finished: false,
            renamed,
        }));
        lock(&self.writes).push(Write::Upload(slot.clone()));
        Ok(DeferredUpload(slot))
    }
}

impl fmt::Display for Deferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Deferred({})", self.store)
    }
}

/// What a write held back says it wrote: nothing is known yet.
fn held() -> PutResult {
    PutResult {
        e_tag: None,
        version: None,
    }
}

#[async_trait]
impl ObjectStore for Deferred {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> datafusion::object_store::Result<PutResult> {
        // A whole object is sent as an upload of one part, so that it is
        // held in the store (a local file aside), not in memory; unless it
        // must not replace what is there, which only a put can say, or the
        // store has no uploads of parts.
        if matches!(opts.mode, PutMode::Overwrite) {
            let options = PutMultipartOptions {
                tags: opts.tags.clone(),
                attributes: opts.attributes.clone(),
                extensions: opts.extensions.clone(),
            };
            match self.upload(location, options).await {
                Ok(mut upload) => {
                    upload.put_part(payload).await?;
                    return upload.complete().await;
                }
                Err(datafusion::object_store::Error::NotImplemented { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        lock(&self.writes).push(Write::Put(location.clone(), payload, opts));
        Ok(held())
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> datafusion::object_store::Result<Box<dyn MultipartUpload>> {
        Ok(Box::new(self.upload(location, opts).await?))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> datafusion::object_store::Result<GetResult> {
        self.store.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, datafusion::object_store::Result<Path>>,
    ) -> BoxStream<'static, datafusion::object_store::Result<Path>> {
        self.store.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> BoxStream<'static, datafusion::object_store::Result<ObjectMeta>> {
        self.store.list(prefix)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> datafusion::object_store::Result<ListResult> {
        self.store.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> datafusion::object_store::Result<()> {
        self.store.copy_opts(from, to, options).await
    }
}

/// The sink's handle to an upload: its parts go to the store at once, and
/// its completion waits for the [`Deferred`] store's.
#[derive(Debug)]
struct DeferredUpload(Arc<Mutex<Upload>>);

impl DeferredUpload {
    fn ended() -> datafusion::object_store::Error {
        datafusion::object_store::Error::Generic {
            store: "Deferred",
            source: "a write to an upload that has ended".into(),
        }
    }
}

#[async_trait]
impl MultipartUpload for DeferredUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let mut slot = lock(&self.0);
        let Upload {
            upload, finished, ..
        } = &mut *slot;
        match upload {
            Some(upload) if !*finished => upload.put_part(data),
            _ => Box::pin(futures::future::ready(Err(DeferredUpload::ended()))),
        }
    }

    async fn complete(&mut self) -> datafusion::object_store::Result<PutResult> {
        let mut slot = lock(&self.0);
        if slot.upload.is_none() || slot.finished {
            return Err(DeferredUpload::ended());
        }
        slot.finished = true;
        Ok(held())
    }

    /// Left to the store, which aborts every upload of a failed write.
    async fn abort(&mut self) -> datafusion::object_store::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::object_store::local::LocalFileSystem;

    /// A staged file whose rename into place is refused (here: a directory
    /// holds the name) is removed, where it stayed under its hidden name.
    #[tokio::test]
    async fn a_staged_file_refused_its_place_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("t.parquet/inside")).unwrap();
        let staged = Arc::new(Staged::default());
        let store = Deferred::new(Arc::new(LocalFileSystem::new()), Some(staged));
        let target = Path::from(dir.path().join("t.parquet").to_str().unwrap());
        let mut upload = store
            .put_multipart_opts(&target, PutMultipartOptions::default())
            .await
            .unwrap();
        upload
            .put_part(PutPayload::from_static(b"PAR1"))
            .await
            .unwrap();
        upload.complete().await.unwrap();
        assert!(store.complete().await.is_err());
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["t.parquet"]);
    }

    /// Once the signal handler has closed the gate, no upload is staged:
    /// it would be left behind when the process exits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_upload_is_staged_once_the_gate_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let staged = Arc::new(Staged::default());
        let store = Deferred::new(Arc::new(LocalFileSystem::new()), Some(staged.clone()));
        let path = |name: &str| Path::from(dir.path().join(name).to_str().unwrap());
        store
            .put_multipart_opts(&path("before.parquet"), PutMultipartOptions::default())
            .await
            .unwrap();
        let closing = staged.clone();
        tokio::task::spawn_blocking(move || closing.close())
            .await
            .unwrap();
        let after = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            store.put_multipart_opts(&path("after.parquet"), PutMultipartOptions::default()),
        )
        .await;
        assert!(after.is_err(), "an upload started after the gate closed");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        // Staged under a hidden name, which readers skip.
        let [name] = names.as_slice() else {
            panic!("{names:?}")
        };
        assert!(
            name.starts_with(".before.parquet.vshred-") && name.ends_with("#1"),
            "{name}"
        );
        assert_eq!(lock(&staged.paths).len(), 1);
    }
}
