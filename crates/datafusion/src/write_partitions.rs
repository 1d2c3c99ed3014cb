//! `COPY ... TO 'dir/'` written where the rows are: each partition of the
//! input goes to a file of its own in the directory, by the core's
//! [`BatchEncoder`], and the node gives one row per partition, its
//! count.
//!
//! DataFusion's own `COPY` gathers every partition into one stream,
//! which its demuxer cuts into files: right in one process, but on a
//! cluster it brings all the rows to the machine that planned the query.
//! This node keeps the partitions apart, so each task of a distributed
//! plan writes its own share; the counts are added above it (by a
//! planner that puts it there, as `vshred-distributed`'s does).
//!
//! A file is named `{prefix}_{partition}.parquet`: the prefix must tell
//! the tasks (and the writes) apart. A partition with no rows writes no
//! file. Each file is written to a temporary file beside it and renamed
//! only once complete and still wanted, so a failed or cancelled write
//! leaves nothing at the path.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{RecordBatch, UInt64Array};
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
use vshred::encode::{BatchEncoder, BatchesWritten};
use vshred::output::{Completion, Output};

use crate::copy::CopyOptions;
use crate::functions::external;

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
    /// (the directory made if missing) with `options`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        dir: PathBuf,
        prefix: String,
        options: CopyOptions,
    ) -> WritePartitionsExec {
        let schema = counts_schema();
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
        let (dir, options) = (self.dir.clone(), self.options.encode().clone());
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
                    None => {
                        std::fs::create_dir_all(&dir).map_err(|e| {
                            DataFusionError::Execution(format!("{}: {e}", dir.display()))
                        })?;
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
            let rows = match encoding {
                Some((encoded, batches)) => {
                    drop(batches);
                    let (written, completion) = encoded
                        .await
                        .map_err(|e| DataFusionError::Execution(format!("writing {name}: {e}")))?
                        .map_err(|e| external(e.in_file(&name)))?;
                    completion
                        .complete()
                        .map_err(|e| external(e.in_file(&name)))?;
                    written.summary.rows
                }
                None => 0,
            };
            Ok(RecordBatch::try_new(
                counts_schema(),
                vec![Arc::new(UInt64Array::from(vec![rows]))],
            )?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            counts_schema(),
            futures::stream::once(written),
        )))
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
