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
//! A subquery's, a view's or a `WITH` clause's columns are computed before
//! a filter, a join or a limit outside it reads them, and DataFusion
//! computes a query's columns before its `ORDER BY ... LIMIT`: there a
//! value that does not convert still fails the query. (Lifting the raise
//! above such nodes was tried: DataFusion 55's rule that pushes cheap
//! expressions toward the scans then dropped the raise in some plans,
//! which read the value and its failure as one struct.)
//!
//! Filters, join conditions and sort keys convert every row they are given,
//! as Spark's do, and keep `variant_get`, which the scan prunes by. Only a
//! `CASE`'s results, and its conditions after the first, are computed for
//! some rows alone (`CASE WHEN v:s::string = '12' THEN v:s::int END`, a
//! guard Spark and DuckDB honour): there the conversion is written as two
//! calls too.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Case, Expr, LogicalPlan};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use vshred::get::OnFailure;

use crate::functions::{
    RAISE_VARIANT_FAILURE, VARIANT_GET_OR_FAILURE, VariantGet, can_fail, path_and_type,
};
use crate::grouping_sets::map_keeping_names;

/// The rewrite the module's documentation describes, run before
/// DataFusion moves cheap expressions toward the scans.
#[derive(Debug)]
pub struct DeferVariantFailures;

impl OptimizerRule for DeferVariantFailures {
    fn name(&self) -> &str {
        "defer_variant_failures"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::TopDown)
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
            LogicalPlan::Projection(_) | LogicalPlan::Aggregate(_) => defer_in(plan),
            LogicalPlan::Filter(_) | LogicalPlan::Join(_) | LogicalPlan::Sort(_) => {
                plan.map_expressions(|expr| expr.transform_up(defer_in_branches))
            }
            _ => Ok(Transformed::no(plan)),
        }
    }
}

/// `plan`'s conversions that may fail, written as two calls.
fn defer_in(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    map_keeping_names(plan, |expr| {
        // DataFusion's own projections of what it moves out of filters,
        // joins and sorts (its reserved prefix), which convert every row
        // they are given.
        if matches!(&expr, Expr::Alias(alias) if alias.name.starts_with("__datafusion_extracted")) {
            return Ok(Transformed::no(expr));
        }
        expr.transform_up(deferred)
    })
}

/// `expr`'s parts computed for some rows alone, if it is a `CASE`, with
/// their conversions that may fail written as two calls ([`deferred`]).
fn defer_in_branches(expr: Expr) -> Result<Transformed<Expr>> {
    let Expr::Case(Case {
        expr: operand,
        when_then_expr,
        else_expr,
    }) = expr
    else {
        return Ok(Transformed::no(expr));
    };
    let mut changed = false;
    let mut defer = |part: Box<Expr>| -> Result<Box<Expr>> {
        let part = part.transform_up(deferred)?;
        changed |= part.transformed;
        Ok(Box::new(part.data))
    };
    let when_then_expr = when_then_expr
        .into_iter()
        .enumerate()
        .map(|(i, (when, then))| {
            let when = if i == 0 { when } else { defer(when)? };
            Ok((when, defer(then)?))
        })
        .collect::<Result<_>>()?;
    let else_expr = else_expr.map(&mut defer).transpose()?;
    let case = Expr::Case(Case {
        expr: operand,
        when_then_expr,
        else_expr,
    });
    Ok(Transformed::new_transformed(case, changed))
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
