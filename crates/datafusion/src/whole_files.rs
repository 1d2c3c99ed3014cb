//! A `COPY` that fails leaves nothing behind, whichever writer writes it.
//!
//! DataFusion's Parquet sink, which writes a `COPY` without Variant
//! columns, closes each file when its rows end and only then learns
//! whether the query ended well: a query that failed late (a value that
//! does not convert, a division by zero) left the rows before the failure
//! at the target, in place of the file that was there. [`WholeFiles`] runs
//! that sink unchanged, over a store that takes its writes as it makes
//! them but completes none until the sink has returned well ([`Deferred`]);
//! otherwise it aborts them. Each write is an upload the store completes
//! at once (a local file is written aside and renamed into place), so a
//! failed `COPY` leaves every path as it was, as the Variant sink
//! ([`VariantParquetSink`](crate::copy::VariantParquetSink)) does. A local
//! store makes a file's directories when its upload starts: those a failed
//! `COPY` made, and left empty, are removed ([`MadeDirs`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::common::Result;
use datafusion::common::runtime::SpawnedTask;
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::file_format::write::demux::DemuxedStreamReceiver;
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::{DataSink, DataSinkExec};
use datafusion::execution::TaskContext;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, SendableRecordBatchStream,
};
use futures::stream::BoxStream;

/// DataFusion's Parquet sink, its files completed only when it ends well.
#[derive(Debug)]
pub struct WholeFiles {
    /// The writer DataFusion planned (over no input: only its sink is
    /// used), a [`DataSinkExec`] of a [`ParquetSink`].
    planned: Arc<dyn ExecutionPlan>,
}

impl WholeFiles {
    /// `planned`, a writer plan of DataFusion's Parquet format, with its
    /// sink in a [`WholeFiles`] and `input` as its input; any other plan
    /// as it is.
    pub fn around(
        planned: Arc<dyn ExecutionPlan>,
        input: Arc<dyn ExecutionPlan>,
    ) -> Arc<dyn ExecutionPlan> {
        let Some(exec) = planned.downcast_ref::<DataSinkExec>() else {
            return planned;
        };
        if !exec.sink().is::<ParquetSink>() {
            return planned;
        }
        let sort_order = exec.sort_order().clone();
        let sink = Arc::new(WholeFiles { planned });
        Arc::new(DataSinkExec::new(input, sink, sort_order))
    }

    fn parquet(&self) -> &ParquetSink {
        let exec = self.planned.downcast_ref::<DataSinkExec>();
        // Checked in `around`.
        let sink = exec.and_then(|e| (e.sink() as &dyn std::any::Any).downcast_ref());
        sink.expect("a DataSinkExec of a ParquetSink")
    }
}

impl DisplayAs for WholeFiles {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.parquet().fmt_as(t, f)
    }
}

#[async_trait]
impl DataSink for WholeFiles {
    fn metrics(&self) -> Option<MetricsSet> {
        self.parquet().metrics()
    }

    fn schema(&self) -> &SchemaRef {
        self.parquet().schema()
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        FileSink::write_all(self, data, context).await
    }
}

#[async_trait]
impl FileSink for WholeFiles {
    fn config(&self) -> &FileSinkConfig {
        self.parquet().config()
    }

    async fn spawn_writer_tasks_and_join(
        &self,
        context: &Arc<TaskContext>,
        demux_task: SpawnedTask<Result<()>>,
        file_stream_rx: DemuxedStreamReceiver,
        object_store: Arc<dyn ObjectStore>,
    ) -> Result<u64> {
        let made = MadeDirs::before(self.config());
        let deferred = Arc::new(Deferred::new(object_store));
        let written = self
            .parquet()
            .spawn_writer_tasks_and_join(context, demux_task, file_stream_rx, deferred.clone())
            .await;
        match written {
            Ok(rows) => {
                deferred.complete().await?;
                Ok(rows)
            }
            Err(e) => {
                deferred.abort().await;
                made.remove_if_empty();
                Err(e)
            }
        }
    }
}

/// The local target paths of a `COPY` that are not there before it: a
/// directory the store makes for them is the `COPY`'s own.
pub struct MadeDirs(Vec<PathBuf>);

impl MadeDirs {
    /// The targets of `config` missing now.
    pub fn before(config: &FileSinkConfig) -> MadeDirs {
        let missing = config
            .table_paths
            .iter()
            .filter(|target| target.scheme() == "file")
            .filter_map(|target| target.get_url().to_file_path().ok())
            .filter(|path| !path.exists())
            .collect();
        MadeDirs(missing)
    }

    /// Removes the directories made since, with those beneath them, where
    /// they hold no file: a failed `COPY` leaves nothing behind.
    pub fn remove_if_empty(&self) {
        fn remove(dir: &std::path::Path) {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        remove(&entry.path());
                    }
                }
                // Refused while anything is in it.
                let _ = std::fs::remove_dir(dir);
            }
        }
        for path in &self.0 {
            if path.is_dir() {
                remove(path);
            }
        }
    }
}

/// An object store whose writes appear only once [`complete`](Self::complete)d.
#[derive(Debug)]
pub(crate) struct Deferred {
    store: Arc<dyn ObjectStore>,
    writes: Arc<Mutex<Vec<Write>>>,
}

/// A write held back: an upload of parts, kept from its start so that one
/// the sink drops unfinished is aborted here, not left to be cleaned up
/// after; or a whole object that must not replace one (held in memory).
#[derive(Debug)]
enum Write {
    Put(Path, PutPayload, PutOptions),
    Upload {
        upload: Box<dyn MultipartUpload>,
        finished: bool,
    },
}

fn lock(writes: &Mutex<Vec<Write>>) -> std::sync::MutexGuard<'_, Vec<Write>> {
    writes.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Deferred {
    pub(crate) fn new(store: Arc<dyn ObjectStore>) -> Deferred {
        Deferred {
            store,
            writes: Arc::default(),
        }
    }

    fn take(&self) -> Vec<Write> {
        std::mem::take(&mut lock(&self.writes))
    }

    /// Makes the writes held back appear.
    pub(crate) async fn complete(&self) -> datafusion::object_store::Result<()> {
        let mut writes = self.take().into_iter();
        while let Some(write) = writes.next() {
            let done = match write {
                Write::Put(path, payload, options) => {
                    self.store.put_opts(&path, payload, options).await.map(drop)
                }
                Write::Upload {
                    mut upload,
                    finished: true,
                } => upload.complete().await.map(drop),
                Write::Upload { mut upload, .. } => upload.abort().await,
            };
            if let Err(e) = done {
                Deferred::abort_all(writes).await;
                return Err(e);
            }
        }
        Ok(())
    }

    /// Drops the writes held back; the uploads' parts are removed.
    pub(crate) async fn abort(&self) {
        Deferred::abort_all(self.take().into_iter()).await;
    }

    async fn abort_all(writes: impl Iterator<Item = Write>) {
        for write in writes {
            if let Write::Upload { mut upload, .. } = write {
                // The error that ended the writing is the one to report.
                let _ = upload.abort().await;
            }
        }
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
        // may not replace what is there, which only a put can say.
        if !matches!(opts.mode, PutMode::Overwrite) {
            lock(&self.writes).push(Write::Put(location.clone(), payload, opts));
            return Ok(held());
        }
        let PutOptions {
            tags,
            attributes,
            extensions,
            ..
        } = opts;
        let options = PutMultipartOptions {
            tags,
            attributes,
            extensions,
        };
        let mut upload = self.put_multipart_opts(location, options).await?;
        upload.put_part(payload).await?;
        upload.complete().await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> datafusion::object_store::Result<Box<dyn MultipartUpload>> {
        let upload = self.store.put_multipart_opts(location, opts).await?;
        let mut writes = lock(&self.writes);
        writes.push(Write::Upload {
            upload,
            finished: false,
        });
        Ok(Box::new(DeferredUpload {
            writes: self.writes.clone(),
            index: writes.len() - 1,
        }))
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

/// An upload whose parts go to the store at once and whose completion its
/// [`Deferred`] store holds back: the upload itself is kept there.
#[derive(Debug)]
struct DeferredUpload {
    writes: Arc<Mutex<Vec<Write>>>,
    index: usize,
}

impl DeferredUpload {
    /// Runs `f` on the upload, unless it is finished or the store has let
    /// it go.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Box<dyn MultipartUpload>, &mut bool) -> T,
    ) -> datafusion::object_store::Result<T> {
        match lock(&self.writes).get_mut(self.index) {
            Some(Write::Upload { upload, finished }) if !*finished => Ok(f(upload, finished)),
            _ => Err(datafusion::object_store::Error::Generic {
                store: "Deferred",
                source: "a write to an upload that has ended".into(),
            }),
        }
    }
}

#[async_trait]
impl MultipartUpload for DeferredUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        match self.with(|upload, _| upload.put_part(data)) {
            Ok(part) => part,
            Err(e) => Box::pin(futures::future::ready(Err(e))),
        }
    }

    async fn complete(&mut self) -> datafusion::object_store::Result<PutResult> {
        self.with(|_, finished| *finished = true)?;
        Ok(held())
    }

    /// Left to the store, which aborts every upload of a failed write.
    async fn abort(&mut self) -> datafusion::object_store::Result<()> {
        Ok(())
    }
}
