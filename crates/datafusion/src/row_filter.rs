//! The filter above a scan, run by the scan on its rows between the outputs
//! the filter reads and the others (late materialization).
//!
//! In `SELECT to_json(v) FROM t WHERE v:user.id::bigint = 1039` the scan
//! computes both outputs, and the filter above keeps a few rows: rendering
//! every row of the row groups the filter could not prune was nearly all
//! the query's time (0.79 s, against 0.07 s for the filter's `count(*)`, on
//! 1M event rows). [`RowFiltersIntoScans`] hands the filter to the scan,
//! which computes the outputs the filter reads, runs it, and computes the
//! others for the rows it keeps ([`vshred::parquet::RowFilter`]).
//!
//! The filter stays above the scan, where every row the scan kept passes
//! it again: a scan that runs no filter (rebuilt by a later rule) gives the
//! same answer, and a filter that fails in the scan keeps every row there,
//! to fail above as it always did, with the same message. So only the
//! parts of a filter (its `AND`s) that answer the same each time they run
//! are handed over (not `random()`), and only where an output the filter
//! does not read rebuilds a Variant or renders one as JSON, which is where
//! the time goes.

use std::sync::Arc;

use arrow::array::{AsArray, BooleanArray, RecordBatch};
use arrow::datatypes::Field;
use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{Column, DynamicFilterPhysicalExpr, Literal};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::utils::{conjunction, split_conjunction};
use datafusion::physical_expr_common::physical_expr::is_volatile;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use vshred::parquet::{Projected, RowFilter, is_variant_field};
use vshred::shred::ShreddingSchema;

use crate::scan::VariantScanExec;

/// Hands the filter above a [`VariantScanExec`] (directly, or over
/// repartitions and projections that pass the columns it reads through)
/// to the scan, as the module's documentation says (registered by
/// [`crate::context`] last, once the plan's filters, projections and
/// partitions are where they stay).
#[derive(Debug, Default)]
pub struct RowFiltersIntoScans;

impl PhysicalOptimizerRule for RowFiltersIntoScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(filter) = node.downcast_ref::<FilterExec>() else {
                return Ok(Transformed::no(node));
            };
            // The conjuncts that answer the same each time they run.
            let steady: Vec<Arc<dyn PhysicalExpr>> = split_conjunction(filter.predicate())
                .into_iter()
                .filter(|c| answers_the_same(c))
                .cloned()
                .collect();
            let mut predicate = conjunction(steady);
            // Down to the scan, the nodes between from the top.
            let mut between = Vec::new();
            let mut below = filter.input().clone();
            loop {
                if let Some(projection) = below.downcast_ref::<ProjectionExec>() {
                    predicate = match through(&predicate, projection) {
                        Some(predicate) => predicate,
                        None => return Ok(Transformed::no(node)),
                    };
                } else if below.downcast_ref::<RepartitionExec>().is_none() {
                    break;
                }
                between.push(below.clone());
                below = below.children()[0].clone();
            }
            let Some(scan) = below.downcast_ref::<VariantScanExec>() else {
                return Ok(Transformed::no(node));
            };
            if scan.row_filter().is_some() || !worth_handing_over(&predicate, scan) {
                return Ok(Transformed::no(node));
            }
            let mut input: Arc<dyn ExecutionPlan> =
                Arc::new(scan.with_row_filter(Some(predicate))?);
            for node in between.iter().rev() {
                input = replace_child(node, input)?;
            }
            Ok(Transformed::yes(replace_child(&node, input)?))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "row_filters_into_variant_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

fn replace_child(
    node: &Arc<dyn ExecutionPlan>,
    child: Arc<dyn ExecutionPlan>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let recompute = ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute);
    node.clone().replace_children(vec![child], recompute)
}

/// `predicate`, over `projection`'s outputs, over its input's: if each
/// column it reads is a column of the input, passed through.
fn through(
    predicate: &Arc<dyn PhysicalExpr>,
    projection: &ProjectionExec,
) -> Option<Arc<dyn PhysicalExpr>> {
    let exprs = projection.expr();
    let passed = collect_columns(predicate).iter().all(|c| {
        exprs
            .get(c.index())
            .is_some_and(|p| p.expr.downcast_ref::<Column>().is_some())
    });
    if !passed {
        return None;
    }
    projection.projection_expr().unproject_expr(predicate).ok()
}

/// Whether `expr` answers the same each time it runs: no `random()`, no
/// join's dynamic filter (which tightens as the join reads).
fn answers_the_same(expr: &Arc<dyn PhysicalExpr>) -> bool {
    let mut changing = is_volatile(expr);
    expr.apply(|e| {
        changing |= e.downcast_ref::<DynamicFilterPhysicalExpr>().is_some();
        Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
    })
    .expect("the closure does not fail");
    !changing
}

/// Whether `predicate` filters anything and `scan` has an output it does
/// not read that rebuilds a Variant or renders one.
fn worth_handing_over(predicate: &Arc<dyn PhysicalExpr>, scan: &VariantScanExec) -> bool {
    if predicate.downcast_ref::<Literal>().is_some() {
        return false;
    }
    let reads = reads(predicate);
    let schema = scan.schema();
    scan.projection()
        .outputs
        .iter()
        .enumerate()
        .any(|(i, (_, output))| {
            reads.binary_search(&i).is_err() && rebuilds_or_renders(output, schema.field(i))
        })
}

fn rebuilds_or_renders(output: &Projected, field: &Field) -> bool {
    match output {
        Projected::Json(_) | Projected::Explode { .. } => true,
        Projected::Column(_) => is_variant_field(field),
        Projected::Path { as_type, .. } => matches!(
            as_type,
            ShreddingSchema::Variant | ShreddingSchema::Object(_) | ShreddingSchema::Array(_)
        ),
    }
}

/// The outputs `predicate` reads, by index, in increasing order.
fn reads(predicate: &Arc<dyn PhysicalExpr>) -> Vec<usize> {
    let mut reads: Vec<usize> = collect_columns(predicate)
        .iter()
        .map(Column::index)
        .collect();
    reads.sort_unstable();
    reads.dedup();
    reads
}

/// `predicate`, over a scan's outputs, as the scan's reader runs it: over
/// the outputs it reads alone. Where it fails, it keeps every row, for the
/// same filter above the scan to fail as it would have.
pub(crate) fn row_filter(predicate: &Arc<dyn PhysicalExpr>) -> RowFilter {
    let reads = reads(predicate);
    let over_reads = predicate
        .clone()
        .transform(|e| {
            Ok(match e.downcast_ref::<Column>() {
                Some(c) => {
                    let at = reads
                        .binary_search(&c.index())
                        .expect("reads holds every column");
                    Transformed::yes(Arc::new(Column::new(c.name(), at)) as Arc<dyn PhysicalExpr>)
                }
                None => Transformed::no(e),
            })
        })
        .expect("the closure does not fail")
        .data;
    let keep = move |batch: &RecordBatch| {
        let rows = batch.num_rows();
        let kept = over_reads
            .evaluate(batch)
            .and_then(|value| value.into_array(rows));
        Ok(match kept.as_ref().map(|k| k.as_boolean_opt()) {
            Ok(Some(kept)) => kept.clone(),
            _ => BooleanArray::from(vec![true; rows]),
        })
    };
    RowFilter {
        reads,
        keep: Arc::new(keep),
    }
}
