//! A value that does not convert fails only a row the query keeps.
//!
//! DataFusion moves `variant_get` of a column toward the scan, which reads
//! the path's leaves alone ([`crate::scan`]): below the query's filters,
//! joins and limits, where a conversion that fails would fail rows the
//! query leaves out, which Spark and DuckDB never convert. So, in what a
//! query returns (its projections and aggregates), `variant_get` to a type
//! a value can fail to convert to is written as two calls
//! ([`DeferVariantFailures`]): `variant_get_or_failure`, which moves and
//! keeps each failure as data beside the value, and
//! `raise_variant_failure`, which stays where the conversion was asked for
//! and fails a row that reaches it.
//!
//! A projection is not always above what drops rows: a subquery's, a
//! view's or a `WITH` clause's columns are computed before the filter, the
//! join or the limit outside it reads them, and DataFusion computes a
//! query's columns before its `ORDER BY ... LIMIT`. So a
//! `raise_variant_failure` is lifted above a filter, a limit, a sort, an
//! alias or a join that does not read its column, node by node, until it
//! meets one that does or the top.
//!
//! Filters and join keys convert every row they are given, as Spark's do,
//! and keep `variant_get`.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result, ScalarValue};
use datafusion::logical_expr::expr::{Alias, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Expr, JoinType, LogicalPlan, Projection};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use vshred::get::OnFailure;

use crate::functions::{
    RAISE_VARIANT_FAILURE, RaiseVariantFailure, VARIANT_GET_OR_FAILURE, VariantGet, can_fail,
    path_and_type,
};

/// The rewrite the module's documentation describes, run before
/// DataFusion moves cheap expressions toward the scans.
#[derive(Debug)]
pub struct DeferVariantFailures;

impl OptimizerRule for DeferVariantFailures {
    fn name(&self) -> &str {
        "defer_variant_failures"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        match plan {
            LogicalPlan::Projection(_) => defer_in(plan)?.transform_data(raise_from_input),
            LogicalPlan::Aggregate(_) => defer_in(plan),
            LogicalPlan::Filter(_)
            | LogicalPlan::Limit(_)
            | LogicalPlan::Sort(_)
            | LogicalPlan::SubqueryAlias(_)
            | LogicalPlan::Join(_) => lift_over(plan),
            _ => Ok(Transformed::no(plan)),
        }
    }
}

/// `plan`'s conversions that may fail, written as two calls.
fn defer_in(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let names = NamePreserver::new(&plan);
    plan.map_expressions(|expr| {
        // DataFusion's own projections of what it moves out of filters,
        // joins and sorts (its reserved prefix), which convert every row
        // they are given.
        if matches!(&expr, Expr::Alias(alias) if alias.name.starts_with("__datafusion_extracted")) {
            return Ok(Transformed::no(expr));
        }
        let name = names.save(&expr);
        Ok(expr
            .transform_up(deferred)?
            .update_data(|e| name.restore(e)))
    })
}

/// `expr` as the module's documentation describes, if it is a
/// `variant_get` whose conversion may fail.
fn deferred(expr: Expr) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = &expr else {
        return Ok(Transformed::no(expr));
    };
    let Some(get) = call.func.inner().downcast_ref::<VariantGet>() else {
        return Ok(Transformed::no(expr));
    };
    let constants: Vec<Option<&ScalarValue>> = call
        .args
        .iter()
        .skip(1)
        .map(|e| match e {
            Expr::Literal(value, _) => Some(value),
            _ => None,
        })
        .collect();
    let defer = get.on_failure() == OnFailure::Error
        && path_and_type(call.func.name(), &constants).is_ok_and(|(_, t)| can_fail(&t));
    if !defer {
        return Ok(Transformed::no(expr));
    }
    Ok(Transformed::yes(RAISE_VARIANT_FAILURE.call(vec![
        VARIANT_GET_OR_FAILURE.call(call.args.clone()),
    ])))
}

/// The input of `node` at `index` with its projection's raised columns
/// lifted above it: `Projection(raise(x) AS x, ...)` under a node that
/// does not read `x` becomes a projection of the node's output over the
/// node over `Projection(x_or_failure AS x, ...)`.
fn lift_over(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let inputs: Vec<LogicalPlan> = node.inputs().into_iter().cloned().collect();
    // The columns of `node`'s output that come from each input: for a
    // semi or anti join, one side's alone.
    let passes = |i: usize| match &node {
        LogicalPlan::Join(join) => match join.join_type {
            JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => i == 0,
            JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => i == 1,
            _ => true,
        },
        _ => true,
    };
    let read: Vec<Column> = node
        .expressions()
        .iter()
        .flat_map(|e| e.column_refs().into_iter().cloned().collect::<Vec<_>>())
        .collect();
    let mut lifted = Vec::new();
    let mut new_inputs = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        match raised_columns(input, &read).filter(|_| passes(i)) {
            Some((below, columns)) => {
                new_inputs.push(below);
                lifted.extend(columns);
            }
            None => new_inputs.push(input.clone()),
        }
    }
    if lifted.is_empty() {
        return Ok(Transformed::no(node));
    }
    // An alias names its input's columns anew.
    if let LogicalPlan::SubqueryAlias(alias) = &node {
        for column in &mut lifted {
            column.relation = Some(alias.alias.clone());
        }
    }
    let expressions = node.expressions();
    let below = node.with_new_exprs(expressions, new_inputs)?;
    // Above: the node's output, each lifted column raised.
    let schema = below.schema().clone();
    let above = schema
        .iter()
        .map(|(qualifier, field)| {
            let column = Column::from((qualifier, field));
            let raised = lifted.contains(&column);
            let column = Expr::Column(column);
            match raised {
                true => Expr::Alias(Alias::new(
                    RAISE_VARIANT_FAILURE.call(vec![column]),
                    qualifier.cloned(),
                    field.name(),
                )),
                false => column,
            }
        })
        .collect();
    Ok(Transformed::yes(LogicalPlan::Projection(
        Projection::try_new(above, Arc::new(below))?,
    )))
}

/// A projection whose input projection raises columns, with the raise
/// moved into its own expressions (nothing between them drops a row), so
/// that it can be lifted on.
fn raise_from_input(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Projection(projection) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let Some((below, columns)) = raised_columns(&projection.input, &[]) else {
        return Ok(Transformed::no(plan));
    };
    let names = NamePreserver::new(&plan);
    let exprs = projection
        .expr
        .iter()
        .map(|expr| {
            let name = names.save(expr);
            let raised = expr.clone().transform_up(|e| match &e {
                Expr::Column(c) if columns.contains(c) => {
                    Ok(Transformed::yes(RAISE_VARIANT_FAILURE.call(vec![e])))
                }
                _ => Ok(Transformed::no(e)),
            })?;
            Ok(name.restore(raised.data))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Transformed::yes(LogicalPlan::Projection(
        Projection::try_new(exprs, Arc::new(below))?,
    )))
}

/// `plan` without the raise of its top-level `raise_variant_failure(x) AS
/// name` expressions whose columns are not among `read`, and the columns
/// they name, if it is a projection with some.
fn raised_columns(plan: &LogicalPlan, read: &[Column]) -> Option<(LogicalPlan, Vec<Column>)> {
    let LogicalPlan::Projection(projection) = plan else {
        return None;
    };
    let mut columns = Vec::new();
    let exprs: Vec<Expr> = projection
        .expr
        .iter()
        .zip(projection.schema.iter())
        .map(|(expr, (qualifier, field))| match expr {
            Expr::Alias(Alias {
                expr: raised,
                relation,
                name,
                ..
            }) => match raised.as_ref() {
                Expr::ScalarFunction(ScalarFunction { func, args })
                    if func.inner().is::<RaiseVariantFailure>()
                        && args.len() == 1
                        && !read.contains(&Column::from((qualifier, field))) =>
                {
                    let column = Column::from((qualifier, field));
                    columns.push(column.clone());
                    match &args[0] {
                        // No alias of a column to itself, which DataFusion's
                        // rules take for a second column of that name.
                        Expr::Column(c) if *c == column => args[0].clone(),
                        _ => {
                            Expr::Alias(Alias::new(args[0].clone(), relation.clone(), name.clone()))
                        }
                    }
                }
                _ => expr.clone(),
            },
            _ => expr.clone(),
        })
        .collect();
    if columns.is_empty() {
        return None;
    }
    let below = Projection::try_new(exprs, projection.input.clone()).ok()?;
    Some((LogicalPlan::Projection(below), columns))
}
