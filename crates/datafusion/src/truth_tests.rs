//! A truth test (`x IS TRUE`, `IS FALSE`, `IS NOT TRUE`, `IS NOT FALSE`)
//! inside an aggregate, as DataFusion 55 can plan it twice. Of a nullable
//! boolean, written in two aggregates (`sum(CASE WHEN v:b::boolean IS
//! TRUE THEN 1 ELSE 0 END)` beside `count(*) FILTER (WHERE v:b::boolean IS
//! TRUE)`), its common-subexpression pass computes it once below the
//! aggregate, as a column the logical plan holds never null and the
//! physical plan may hold null (the test runs as `IS NOT DISTINCT FROM
//! true`, whose nullability is its operands'), and the query fails to plan
//! with an internal error (apache/datafusion#24096, fixed after 55).
//!
//! In an aggregate's expressions each test is written as the `coalesce`
//! it is (`x IS TRUE` is `coalesce(x, false)`), never null in either plan.
//! Elsewhere, where the scan prunes by them, they stay.

use datafusion::common::Result;
use datafusion::common::tree_node::Transformed;
use datafusion::config::ConfigOptions;
use datafusion::functions::core::expr_fn::coalesce;
use datafusion::logical_expr::{Expr, LogicalPlan, lit, not};
use datafusion::optimizer::AnalyzerRule;

use crate::grouping_sets::rewrite_keeping_names;

/// Writes the truth tests of aggregates as `coalesce` (registered by
/// [`crate::context`]).
#[derive(Debug)]
pub struct AggregateTruthTests;

impl AnalyzerRule for AggregateTruthTests {
    fn name(&self) -> &str {
        "aggregate_truth_tests"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let rewritten = plan.transform_up_with_subqueries(|node| {
            if !matches!(node, LogicalPlan::Aggregate(_)) {
                return Ok(Transformed::no(node));
            }
            // The aggregate's columns keep their names.
            rewrite_keeping_names(node, |expr, _| as_coalesce(expr))
        })?;
        Ok(rewritten.data)
    }
}

fn as_coalesce(expr: Expr) -> Result<Transformed<Expr>> {
    let test = |x: Box<Expr>, otherwise: bool| coalesce(vec![*x, lit(otherwise)]);
    Ok(Transformed::yes(match expr {
        Expr::IsTrue(x) => test(x, false),
        Expr::IsNotFalse(x) => test(x, true),
        Expr::IsFalse(x) => test(Box::new(not(*x)), false),
        Expr::IsNotTrue(x) => not(test(x, false)),
        other => return Ok(Transformed::no(other)),
    }))
}
