//! `COPY (query) TO 'dir/'` written by the workers.
//!
//! In one process a `COPY` of Variant columns is DataFusion's sink node
//! over the query's partitions gathered into one stream
//! ([`vshred_datafusion::copy`]). On a cluster that gathering is a
//! network boundary: every row would travel to the coordinator to be
//! written there. [`CopyOnWorkers`], a physical optimizer rule of the
//! coordinator's session, puts a [`WritePartitionsExec`] below the
//! boundary instead: each task writes its partitions to files of its own,
//! staged under hidden names, and only their counts and names travel, to
//! be added up and the files renamed into place once every task has
//! written its own ([`CommitFilesExec`]): a `COPY` that fails on one task
//! leaves no file of any.
//!
//! It applies to a `COPY` to a local directory, not Hive-partitioned
//! (`PARTITIONED BY` keeps DataFusion's demuxer, which decides the files
//! by value) and not to one file (which one process must write). A
//! directory that holds Parquet files already is refused while planning
//! (the coordinator sees the files the workers see: one filesystem, or
//! the same mounts). Each `COPY` gets a prefix of its own, and the worker
//! adds its task's number ([`crate::codec`]), so that tasks write files of
//! their own.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::FileSink;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::limit::{GlobalLimitExec, LocalLimitExec};
use vshred_datafusion::copy::VariantParquetSink;
use vshred_datafusion::write_partitions::{CommitFilesExec, WritePartitionsExec};

/// Moves a `COPY` to a directory below the network boundary (see the
/// [module](self)).
#[derive(Debug, Default)]
pub struct CopyOnWorkers;

impl PhysicalOptimizerRule for CopyOnWorkers {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| match written_on_workers(&node)? {
            Some(written) => Ok(Transformed::yes(written)),
            None => Ok(Transformed::no(node)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "copy_on_workers"
    }

    /// The count keeps the sink's type.
    fn schema_check(&self) -> bool {
        true
    }
}

/// `node`, a `COPY` of Variant columns to a local directory, as a
/// [`WritePartitionsExec`] over its input's partitions, whose files a
/// [`CommitFilesExec`] puts in place once all are written.
fn written_on_workers(node: &Arc<dyn ExecutionPlan>) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some(copy) = node.downcast_ref::<DataSinkExec>() else {
        return Ok(None);
    };
    let sink: &dyn std::any::Any = copy.sink();
    let Some(sink) = sink.downcast_ref::<VariantParquetSink>() else {
        return Ok(None);
    };
    let config = sink.config();
    let [target] = config.table_paths.as_slice() else {
        return Ok(None);
    };
    if !config.table_partition_cols.is_empty()
        || config.file_output_mode.single_file_output(target)
        || config.object_store_url != ObjectStoreUrl::local_filesystem()
    {
        return Ok(None);
    }
    let Ok(dir) = target.get_url().to_file_path() else {
        return Ok(None);
    };
    // A query with a `LIMIT` or an `OFFSET` anywhere (a fetch, a limit
    // node) is written as one process writes it: each task would keep
    // its own first rows.
    if limited(copy.input()) {
        return Ok(None);
    }
    let mut input = copy.input().clone();
    // The gathering the sink asked for.
    if let Some(gathered) = input.downcast_ref::<CoalescePartitionsExec>() {
        input = gathered.input().clone();
    }
    let prefix = write_id();
    let write: Arc<dyn ExecutionPlan> = Arc::new(WritePartitionsExec::new(
        input,
        dir.clone(),
        prefix.clone(),
        sink.options().clone(),
    ));
    let gathered: Arc<dyn ExecutionPlan> = Arc::new(CoalescePartitionsExec::new(write));
    Ok(Some(Arc::new(CommitFilesExec::new(gathered, dir, prefix))))
}

/// Whether `plan` or a node beneath it keeps some rows only (`LIMIT`,
/// `OFFSET`, a top-k sort).
fn limited(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.fetch().is_some()
        || plan.is::<GlobalLimitExec>()
        || plan.is::<LocalLimitExec>()
        || plan.children().into_iter().any(limited)
}

/// A prefix no earlier `COPY` of this directory has used (in practice:
/// the time in nanoseconds and the process).
fn write_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}{:x}", std::process::id())
}
