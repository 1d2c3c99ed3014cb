//! The scan of a Variant dataset as a DataFusion execution plan.
//!
//! [`VariantScanExec`] runs a core [`Projection`] over a [`Dataset`]: each
//! output is a whole column or a `variant_get` of a path, and each file is
//! read by its own plan (a path's leaves alone, whatever the file's layout;
//! row groups and pages the pushed-down filters rule out skipped).
//!
//! The scan has one output partition, in file order, until DataFusion asks
//! for more ([`ExecutionPlan::repartitioned`], when
//! `datafusion.optimizer.repartition_file_scans` is on and the files hold
//! at least `repartition_file_min_size` bytes): then each partition reads
//! its share of the row groups ([`vshred::dataset::partition`]) on the
//! thread that polls it, as DataFusion's own Parquet scan decodes, with no
//! hand-over between threads.
//!
//! A projection directly above the scan whose expressions are columns and
//! `variant_get(column, 'path', 'type')` calls is absorbed into it
//! ([`ExecutionPlan::try_swapping_with_projection`]): DataFusion moves such
//! calls down to the scan (they are marked cheap, see
//! [`crate::functions`]), so a query touching `v` only through
//! `variant_get` never reads the whole Variant column. An expression over
//! such calls (`to_json(variant_get(v, '$.user'))`, `variant_get(v, '$.n',
//! 'int') + 1`) stays in a projection above the scan, over the calls'
//! outputs.
//!
//! A hash join's dynamic filter (the keys of its build side, as bounds and
//! an `IN` list) is kept by the scan and read when the scan starts, which
//! is when the join first asks it for rows, after its build side is read:
//! the keys then prune row groups and pages by statistics, bloom filters
//! and the column index, as a filter does ([`crate::filter::runtime_predicate`]).

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::expressions::{Column, DynamicFilterPhysicalExpr, Literal};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType, SchedulingType};
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use vshred::dataset::partition::{Partition, PartitionBatches};
use vshred::dataset::{Dataset, DatasetStats};
use vshred::get::OnFailure;
use vshred::parquet::{Projected, Projection, ScanOptions, is_variant_field};

use crate::explode::VariantExplode;
use crate::filter::runtime_predicate;
use crate::functions::{ToJson, VariantGet, external, path_and_type};
use crate::row_filter::row_filter;

/// A scan of a [`Dataset`] by a [`Projection`].
/// The dataset is shown by its number of files.
pub struct VariantScanExec {
    dataset: Arc<Dataset>,
    projection: Projection,
    /// Joins' dynamic filters pushed to the scan, read when it starts.
    runtime_filters: Vec<Arc<dyn PhysicalExpr>>,
    /// The filter above the scan, over its outputs, run on its rows before
    /// the outputs it does not read are computed ([`crate::row_filter`]).
    row_filter: Option<Arc<dyn PhysicalExpr>>,
    schema: SchemaRef,
    partitions: usize,
    /// The share of the dataset this scan's partitions read, as task `.0`
    /// of `.1` in a distributed query ([`task_share`]).
    task: (usize, usize),
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
    /// The files the partitions read from, gathered as each ends: a file
    /// none read was pruned whole.
    files_read: Arc<Mutex<FilesRead>>,
}

/// The files the ended partitions of a run planned and read from.
#[derive(Default)]
struct FilesRead {
    ended: usize,
    planned: HashSet<usize>,
    read: HashSet<usize>,
}

impl VariantScanExec {
    /// A scan producing batches of `schema`, one column per output of
    /// `projection`, in one partition.
    pub fn new(dataset: Arc<Dataset>, projection: Projection, schema: SchemaRef) -> Self {
        VariantScanExec::partitioned(dataset, projection, schema, 1)
    }

    /// A scan in `partitions` partitions reading `task`'s share (the
    /// `task.0`-th of `task.1` tasks; `(0, 1)` for all of the dataset), as
    /// [`parts`](Self::parts) gives them: how a distributed engine's codec
    /// rebuilds a scan (its runtime filters then given by
    /// [`with_runtime_filters`](Self::with_runtime_filters)).
    pub fn from_parts(
        dataset: Arc<Dataset>,
        projection: Projection,
        schema: SchemaRef,
        partitions: usize,
        task: (usize, usize),
    ) -> Result<Self> {
        if partitions == 0 || task.0 >= task.1 {
            return Err(DataFusionError::Plan(format!(
                "a scan of {partitions} partitions as task {} of {} cannot be",
                task.0, task.1
            )));
        }
        let mut scan = VariantScanExec::partitioned(dataset, projection, schema, partitions);
        scan.task = task;
        Ok(scan)
    }

    /// What the scan is made of: its dataset, projection, partitions and
    /// task share ([`from_parts`](Self::from_parts)).
    pub fn parts(&self) -> (&Arc<Dataset>, &Projection, usize, (usize, usize)) {
        (&self.dataset, &self.projection, self.partitions, self.task)
    }

    /// The dynamic filters joins pushed to the scan.
    pub fn runtime_filters(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.runtime_filters
    }

    /// The scan with `filters` as its joins' dynamic filters: how a codec
    /// gives a scan those that travelled with it.
    pub fn with_runtime_filters(mut self, filters: Vec<Arc<dyn PhysicalExpr>>) -> Self {
        self.runtime_filters = filters;
        self
    }

    /// The filter above the scan that it runs on its rows, if any.
    pub fn row_filter(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.row_filter.as_ref()
    }

    /// This scan running `filter`, the filter above it over its outputs,
    /// on its rows ([`crate::row_filter`]).
    pub fn with_row_filter(&self, filter: Option<Arc<dyn PhysicalExpr>>) -> Result<Self> {
        let mut scan = self.rebuilt(self.dataset.clone(), self.partitions, self.task)?;
        scan.row_filter = filter;
        Ok(scan)
    }

    /// This scan as task `index` of `count`, each reading its share of the
    /// row groups.
    pub fn for_task(&self, index: usize, count: usize) -> Result<Self> {
        let shares = (0..self.partitions)
            .map(|partition| task_share((index, count), self.partitions, partition))
            .collect::<Result<Vec<_>>>()?;
        // Only the files holding the task's row groups: its plan names
        // them alone, and it reads their footers alone.
        let share = self.dataset.share(&shares).map_err(external)?;
        self.rebuilt(Arc::new(share), self.partitions, (index, count))
    }

    /// This scan's outputs and filters, of `dataset` in `partitions` as
    /// `task`.
    fn rebuilt(
        &self,
        dataset: Arc<Dataset>,
        partitions: usize,
        task: (usize, usize),
    ) -> Result<Self> {
        let mut scan = VariantScanExec::from_parts(
            dataset,
            self.projection.clone(),
            self.schema.clone(),
            partitions,
            task,
        )?
        .with_runtime_filters(self.runtime_filters.clone());
        scan.row_filter = self.row_filter.clone();
        Ok(scan)
    }

    fn partitioned(
        dataset: Arc<Dataset>,
        projection: Projection,
        schema: SchemaRef,
        partitions: usize,
    ) -> Self {
        // Cooperative: its stream yields before each batch (`execute`).
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        )
        .with_scheduling_type(SchedulingType::Cooperative);
        VariantScanExec {
            dataset,
            projection,
            runtime_filters: Vec::new(),
            row_filter: None,
            schema,
            partitions,
            task: (0, 1),
            properties: Arc::new(properties),
            metrics: ExecutionPlanMetricsSet::new(),
            files_read: Arc::default(),
        }
    }

    /// This scan with other outputs, partitioned alike.
    fn with_projection(&self, projection: Projection, schema: SchemaRef) -> Self {
        let mut scan =
            VariantScanExec::partitioned(self.dataset.clone(), projection, schema, self.partitions);
        scan.task = self.task;
        scan
    }

    /// What the scan reads.
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// `expr`, which the scan cannot compute itself, over the scan's
    /// outputs once the parts of it the scan can compute
    /// ([`absorb`](Self::absorb)) are added to `outputs`, named after
    /// `alias`; `None` if it reads a column outside such a part. What is
    /// computed over a path stays above the scan, which reads the path
    /// alone: `raise_variant_failure(x)`, `to_json(variant_get(v,
    /// '$.user'))`, `abs(variant_get(v, '$.n', 'int'))`.
    fn over_outputs(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
        alias: &str,
        outputs: &mut Outputs,
    ) -> Result<Option<Arc<dyn PhysicalExpr>>> {
        let children = expr.children();
        if children.is_empty() {
            return Ok(expr.is::<Literal>().then(|| expr.clone()));
        }
        let mut over = Vec::with_capacity(children.len());
        for child in children {
            let child = match self.absorb(child) {
                Some(output) => {
                    let field = child.return_field(&self.schema)?.as_ref().clone();
                    outputs.add(alias, output, field)
                }
                None => match self.over_outputs(child, alias, outputs)? {
                    Some(child) => child,
                    None => return Ok(None),
                },
            };
            over.push(child);
        }
        Ok(Some(expr.clone().with_new_children(over)?))
    }

    /// The output of `expr` (over this scan's output), if the scan can
    /// compute it itself: a column, `variant_get` of a Variant column
    /// with a constant path and type, or `to_json` of a Variant column.
    fn absorb(&self, expr: &Arc<dyn PhysicalExpr>) -> Option<Projected> {
        let output = |expr: &Arc<dyn PhysicalExpr>| {
            let column = expr.downcast_ref::<Column>()?;
            self.projection.outputs.get(column.index()).map(|(_, o)| o)
        };
        if let Some(output) = output(expr) {
            return Some(output.clone());
        }
        let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
        let function = call.fun().inner();
        let explode = function.downcast_ref::<VariantExplode>();
        if function.is::<ToJson>() || explode.is_some() {
            // Of a Variant column; `to_json` of another runs on its values.
            let argument = call.args().first()?.downcast_ref::<Column>()?;
            if !is_variant_field(self.schema.field(argument.index())) {
                return None;
            }
            let Projected::Column(column) = output(call.args().first()?)? else {
                return None;
            };
            let column = column.clone();
            return Some(match explode {
                Some(explode) => Projected::Explode {
                    column,
                    outer: explode.outer,
                },
                None => Projected::Json(column),
            });
        }
        let get = call.fun().inner().downcast_ref::<VariantGet>()?;
        let Projected::Column(column) = output(call.args().first()?)? else {
            return None;
        };
        let constants: Vec<_> = call.args()[1..]
            .iter()
            .map(|a| a.downcast_ref::<Literal>().map(Literal::value))
            .collect();
        let (path, as_type) = path_and_type(call.name(), &constants).ok()?;
        Some(Projected::Path {
            column: column.clone(),
            path,
            as_type,
            on_failure: get.on_failure(),
        })
    }
}

/// The outputs of a scan that absorbs a projection, and their fields.
#[derive(Default)]
struct Outputs {
    outputs: Vec<(String, Projected)>,
    fields: Vec<arrow::datatypes::Field>,
}

impl Outputs {
    /// The column of `output`, added under `name` (made unique) unless an
    /// output computes it already.
    fn add(
        &mut self,
        name: &str,
        output: Projected,
        field: arrow::datatypes::Field,
    ) -> Arc<dyn PhysicalExpr> {
        if let Some(i) = self.outputs.iter().position(|(_, o)| *o == output) {
            return Arc::new(Column::new(&self.outputs[i].0, i));
        }
        let mut unique = name.to_string();
        for k in self.outputs.len().. {
            if !self.outputs.iter().any(|(n, _)| *n == unique) {
                break;
            }
            unique = format!("{name}#{k}");
        }
        let column = Arc::new(Column::new(&unique, self.outputs.len()));
        self.fields.push(field.with_name(&unique));
        self.outputs.push((unique, output));
        column
    }
}

/// The share of the dataset partition `partition` of a scan in
/// `partitions` partitions reads as task `task.0` of `task.1`:
/// `partition * task.1 + task.0` of `task.1 * partitions`. Row groups go
/// round robin over the tasks first, so that every task has some while
/// there are as many row groups as tasks (numbered `task.0 * partitions +
/// partition`, six row groups in three tasks of three partitions went 3, 3
/// and 0).
fn task_share(task: (usize, usize), partitions: usize, partition: usize) -> Result<Partition> {
    Partition::new(partition * task.1 + task.0, task.1 * partitions).map_err(external)
}

/// What a partition read, as the plan's metrics (`EXPLAIN ANALYZE` shows
/// them); once the last partition ends, the files its partitions planned
/// and those pruned whole.
fn record(scan: &ScanMetrics, batches: &PartitionBatches) {
    let metrics = &scan.metrics;
    let count = |name: &'static str, n: usize| {
        MetricBuilder::new(metrics).global_counter(name).add(n);
    };
    let stats: DatasetStats = batches.stats();
    if let Ok(mut files) = scan.files_read.lock() {
        files.planned.extend(batches.files_planned());
        files.read.extend(batches.files_read());
        files.ended += 1;
        if files.ended == scan.partitions {
            count("files", files.planned.len());
            count("files_pruned", files.planned.len() - files.read.len());
            *files = FilesRead::default();
        }
    }
    count("row_groups", stats.read.row_groups);
    count("row_groups_read", stats.read.row_groups_read);
    count(
        "row_groups_pruned_statistics",
        stats.read.skipped_by_statistics,
    );
    count(
        "row_groups_pruned_bloom_filter",
        stats.read.skipped_by_bloom_filters,
    );
    count(
        "row_groups_pruned_page_index",
        stats.read.skipped_by_page_index,
    );
    count(
        "row_groups_pruned_runtime_filter",
        stats.read.skipped_by_runtime_filter,
    );
    count(
        "row_groups_pruned_directories",
        stats.read.skipped_by_directories,
    );
    count("pages_pruned", stats.read.pages_skipped);
    count("rows_read", stats.read.rows_read as usize);
    count("bytes_read", stats.read.bytes_read as usize);
}

/// Where a partition records what it read.
#[derive(Clone)]
struct ScanMetrics {
    metrics: ExecutionPlanMetricsSet,
    files_read: Arc<Mutex<FilesRead>>,
    partitions: usize,
}

impl fmt::Debug for VariantScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        DisplayAs::fmt_as(self, DisplayFormatType::Default, f)
    }
}

impl DisplayAs for VariantScanExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "VariantScanExec: files={}, outputs=[",
            self.dataset.files().len()
        )?;
        for (i, (name, output)) in self.projection.outputs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match output {
                Projected::Column(column) if column == name => write!(f, "{name}")?,
                Projected::Column(column) => write!(f, "{column} AS {name}")?,
                Projected::Json(column) => write!(f, "to_json({column}) AS {name}")?,
                Projected::Explode { column, outer } => write!(
                    f,
                    "variant_explode{}({column}) AS {name}",
                    if *outer { "_outer" } else { "" }
                )?,
                Projected::Path {
                    column,
                    path,
                    as_type,
                    on_failure,
                } => write!(
                    f,
                    "{column}:{path}::{}{} AS {name}",
                    as_type.to_string().trim_matches('"'),
                    match on_failure {
                        OnFailure::Defer => " or failure",
                        OnFailure::Null | OnFailure::Error => "",
                    }
                )?,
            }
        }
        f.write_str("]")?;
        if self.partitions > 1 {
            write!(f, ", partitions={}", self.partitions)?;
        }
        if self.task.1 > 1 {
            write!(f, ", task={} of {}", self.task.0, self.task.1)?;
        }
        if let Some((column, filter)) = &self.projection.filter {
            write!(f, ", prune=[{column}: {filter}]")?;
        }
        if !self.runtime_filters.is_empty() {
            write!(f, ", runtime_filters={}", self.runtime_filters.len())?;
        }
        if let Some(filter) = &self.row_filter {
            write!(f, ", row_filter=[{filter}]")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for VariantScanExec {
    fn name(&self) -> &str {
        "VariantScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        // A join computes its dynamic filter only for a consumer it finds
        // here.
        for filter in &self.runtime_filters {
            if f(filter)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    /// Keeps the dynamic filters joins push (in the phase after
    /// optimization), to prune by when the scan starts; none is applied to
    /// rows, so none is reported as pushed down.
    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let dynamic: Vec<Arc<dyn PhysicalExpr>> = child_pushdown_result
            .parent_filters
            .iter()
            .map(|f| &f.filter)
            .filter(|f| f.downcast_ref::<DynamicFilterPhysicalExpr>().is_some())
            .cloned()
            .collect();
        let mut propagation = FilterPushdownPropagation::all_unsupported(child_pushdown_result);
        if phase == FilterPushdownPhase::Post && !dynamic.is_empty() {
            let mut scan = self.with_projection(self.projection.clone(), self.schema.clone());
            scan.runtime_filters = self
                .runtime_filters
                .iter()
                .cloned()
                .chain(dynamic)
                .collect();
            propagation = propagation.with_updated_node(Arc::new(scan) as Arc<dyn ExecutionPlan>);
        }
        Ok(propagation)
    }

    fn with_new_children(
        self: Arc<Self>,
        _: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    /// Starts reading when first polled: a hash join polls its probe side
    /// only once its build side is read and its dynamic filter holds the
    /// keys, which then prune as the projection's runtime filter.
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let share = task_share(self.task, self.partitions, partition)?;
        let dataset = self.dataset.clone();
        let mut projection = self.projection.clone();
        let runtime_filters = self.runtime_filters.clone();
        projection.row_filter = self.row_filter.as_ref().map(row_filter);
        let schema = self.schema.clone();
        let options = ScanOptions::new(context.session_config().batch_size());
        let scan = ScanMetrics {
            metrics: self.metrics.clone(),
            files_read: self.files_read.clone(),
            partitions: self.partitions,
        };
        // Fewer than read where the scan runs the filter above it.
        let output_rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let start = async move {
            projection.runtime_filter = runtime_filters
                .iter()
                .find_map(|f| runtime_predicate(f, &projection.outputs));
            if projection.runtime_filter.is_some() {
                MetricBuilder::new(&scan.metrics)
                    .global_counter("runtime_filters")
                    .add(1);
            }
            let batches = dataset.project_partition(&projection, &schema, &options, share);
            let batches = match batches {
                Ok(batches) => batches,
                Err(e) => return futures::stream::iter(vec![Err(external(e))]).left_stream(),
            };
            // Each batch is read when asked for, on the thread that asks,
            // after a yield to the runtime: an operator above (an
            // aggregate) takes every batch it can get in one poll, so
            // without it a task would not yield until its share ended, and
            // could not be cancelled (a worker's task whose coordinator is
            // gone), nor let the runtime's other tasks run (a worker's
            // answers to pings).
            futures::stream::unfold((batches, true), move |(batches, first)| {
                let scan = scan.clone();
                let output_rows = output_rows.clone();
                async move {
                    let mut batches = batches;
                    if !first {
                        tokio::task::yield_now().await;
                    }
                    match batches.next() {
                        Some(batch) => {
                            if let Ok(batch) = &batch {
                                output_rows.add(batch.num_rows());
                            }
                            Some((batch.map_err(external), (batches, false)))
                        }
                        None => {
                            record(&scan, &batches);
                            None
                        }
                    }
                }
            })
            .right_stream()
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(start).flatten(),
        )))
    }

    /// The rows of the files, as their footers count them: a join builds
    /// its hash table of the smaller side, and the keys of that side prune
    /// this one.
    fn statistics_from_inputs(
        &self,
        _: &[Arc<Statistics>],
        _: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        let mut statistics = Statistics::new_unknown(&self.schema);
        if let Ok(rows) = self.dataset.rows() {
            // A filter of rows keeps some of them.
            statistics.num_rows = match self.row_filter {
                Some(_) => Precision::Inexact(rows as usize),
                None => Precision::Exact(rows as usize),
            };
        }
        Ok(Arc::new(statistics))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn try_swapping_with_projection(
        &self,
        projection: &ProjectionExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let mut outputs = Outputs::default();
        // Each expression over the scan's new outputs.
        let mut above = Vec::with_capacity(projection.expr().len());
        for (i, expr) in projection.expr().iter().enumerate() {
            if let Some(output) = self.absorb(&expr.expr) {
                let field = projection.schema().field(i).clone();
                above.push(outputs.add(&expr.alias, output, field));
                continue;
            }
            match self.over_outputs(&expr.expr, &expr.alias, &mut outputs)? {
                Some(expr) => above.push(expr),
                None => return Ok(None),
            }
        }
        if outputs.outputs.is_empty() {
            return Ok(None);
        }
        let Outputs { outputs, fields } = outputs;
        // Runtime filters are over the old outputs: not carried over (the
        // filters are pushed after projections are).
        let absorbed = Projection {
            outputs,
            filter: self.projection.filter.clone(),
            ..Projection::default()
        };
        let schema = Arc::new(arrow::datatypes::Schema::new_with_metadata(
            fields,
            projection.schema().metadata().clone(),
        ));
        let scan: Arc<dyn ExecutionPlan> = Arc::new(self.with_projection(absorbed, schema));
        // Only the scan, when each expression is one of its outputs.
        let outputs_alone = above
            .iter()
            .enumerate()
            .all(|(i, e)| e.downcast_ref::<Column>().is_some_and(|c| c.index() == i))
            && above.len() == scan.schema().fields().len();
        if outputs_alone {
            return Ok(Some(scan));
        }
        let exprs = above
            .into_iter()
            .zip(projection.expr())
            .map(|(expr, p)| ProjectionExpr::new(expr, p.alias.clone()))
            .collect::<Vec<_>>();
        Ok(Some(Arc::new(ProjectionExec::try_new(exprs, scan)?)))
    }

    /// Partitions as many as DataFusion asks, up to one per row group,
    /// when the files hold `repartition_file_min_size` bytes or more (as
    /// its own Parquet scan splits files).
    fn repartitioned(
        &self,
        target_partitions: usize,
        config: &ConfigOptions,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let (Ok(size), Ok(row_groups)) = (self.dataset.size(), self.dataset.row_groups()) else {
            return Ok(None);
        };
        let partitions = target_partitions.min(row_groups);
        if partitions <= self.partitions || size < config.optimizer.repartition_file_min_size as u64
        {
            return Ok(None);
        }
        let scan = self.rebuilt(self.dataset.clone(), partitions, self.task)?;
        Ok(Some(Arc::new(scan)))
    }
}

/// Moves a projection into the [`VariantScanExec`] beneath it before
/// DataFusion distributes the plan's work. DataFusion's own projection
/// pushdown runs after that, when a projection that computes anything
/// (`raise_variant_failure`, see [`crate::defer`]) has a repartition
/// beneath it, through which it is not pushed: the scan would read every
/// leaf of the Variant instead of a path's.
#[derive(Debug, Default)]
pub struct ProjectionsIntoScans;

impl PhysicalOptimizerRule for ProjectionsIntoScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let absorbed = match node.downcast_ref::<ProjectionExec>() {
                Some(projection) => match projection.input().downcast_ref::<VariantScanExec>() {
                    Some(scan) => scan.try_swapping_with_projection(projection)?,
                    None => None,
                },
                None => None,
            };
            Ok(match absorbed {
                Some(plan) => Transformed::yes(plan),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "projections_into_variant_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
