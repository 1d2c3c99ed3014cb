//! An aggregate's `ORDER BY` as DataFusion 55 runs it, rewritten where it
//! fails. A key given twice (`first_value(x ORDER BY k, k)`, or
//! `DISTINCT ON (k) ... ORDER BY k, k`, where the key must lead and is
//! easily written again) panics a task or fails with an Arrow error
//! (apache/datafusion#25398): the ordering's state counts the keys as
//! written, its accumulators without the repeats. An `ORDER BY` on an
//! aggregate whose result does not depend on it (`avg(x ORDER BY k)` with
//! a `GROUP BY`, `count`, `min`, `stddev`, ...) hands the accumulator the
//! keys as extra columns, and it panics or fails
//! (apache/datafusion#25401). Both are legal SQL that DuckDB answers.
//!
//! Ahead of planning, a repeated key is dropped (it never breaks a tie
//! the first left), and so is the `ORDER BY` of the aggregates listed in
//! `ORDER_INSENSITIVE` (it changes nothing they give). A function not
//! listed keeps its order: `percentile_cont(0.5) WITHIN GROUP (ORDER BY
//! x)` holds its argument there.

use std::sync::Arc;

use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{AggregateFunction, Sort};
use datafusion::logical_expr::{Cast, Distinct, Expr, ExprSchemable, LogicalPlan, TryCast};
use datafusion::optimizer::AnalyzerRule;

use crate::grouping_sets::rewrite_keeping_names;

/// DataFusion's aggregates whose result does not depend on the order of
/// their input (by the names DataFusion gives them, aliases resolved).
const ORDER_INSENSITIVE: &[&str] = &[
    "avg",
    "count",
    "min",
    "max",
    "median",
    "stddev",
    "stddev_pop",
    "var",
    "var_pop",
    "bit_and",
    "bit_or",
    "bit_xor",
];

/// Drops what DataFusion fails on in an aggregate's `ORDER BY` and in a
/// `DISTINCT ON`'s (registered by [`crate::context`]).
#[derive(Debug)]
pub struct AggregateOrder;

impl AnalyzerRule for AggregateOrder {
    fn name(&self) -> &str {
        "aggregate_order"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let rewritten = plan.transform_up_with_subqueries(|node| {
            let node = match node {
                LogicalPlan::Distinct(Distinct::On(mut on)) => {
                    let input = Arc::clone(on.input.schema());
                    let repeated = on
                        .sort_expr
                        .as_mut()
                        .is_some_and(|order| without_repeats(order, &input));
                    Transformed::new_transformed(LogicalPlan::Distinct(Distinct::On(on)), repeated)
                }
                other => Transformed::no(other),
            };
            // An aggregate's column keeps its name.
            node.transform_data(|node| rewrite_keeping_names(node, aggregate_order))
        })?;
        Ok(rewritten.data)
    }
}

fn aggregate_order(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::AggregateFunction(mut call) = expr else {
        return Ok(Transformed::no(expr));
    };
    let AggregateFunction { func, params } = &mut call;
    let changed = if params.order_by.is_empty() {
        false
    } else if ORDER_INSENSITIVE.contains(&func.name()) {
        params.order_by.clear();
        true
    } else {
        without_repeats(&mut params.order_by, schema)
    };
    Ok(Transformed::new_transformed(
        Expr::AggregateFunction(call),
        changed,
    ))
}

/// Drops each key of `order` whose expression an earlier one sorts by,
/// casts to the type it has aside (`CAST(k AS BIGINT)` of a `BIGINT` is
/// `k` once simplified, and a repeat then); says whether there was one.
fn without_repeats(order: &mut Vec<Sort>, schema: &DFSchema) -> bool {
    let before = order.len();
    let mut kept: Vec<Sort> = Vec::with_capacity(before);
    for key in order.drain(..) {
        let value = uncast(&key.expr, schema);
        if !kept.iter().any(|k| uncast(&k.expr, schema) == value) {
            kept.push(key);
        }
    }
    *order = kept;
    order.len() != before
}

/// `expr` without the casts around it that change nothing: to the type
/// their operand has.
fn uncast<'e>(expr: &'e Expr, schema: &DFSchema) -> &'e Expr {
    match expr {
        Expr::Cast(Cast { expr: inner, field }) | Expr::TryCast(TryCast { expr: inner, field })
            if inner
                .get_type(schema)
                .is_ok_and(|t| t == *field.data_type()) =>
        {
            uncast(inner, schema)
        }
        other => other,
    }
}
