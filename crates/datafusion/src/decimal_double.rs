//! A decimal compared with a double compares as two doubles, as in Spark
//! and DuckDB. DataFusion's coercion takes both to a decimal instead
//! (`Decimal128(30, 15)` for a `DECIMAL(10,2)` and a `DOUBLE`), which
//! rounds the double to 15 places (`0.00 < 1e-20` is false, `0.00 =
//! 1e-20` true, `0.00 IN (1e-20)` true) and fails on one past 10^15 (`d <
//! 1e16`). The decimals are cast to `DOUBLE` before that coercion: in the
//! comparison operators as the SQL is read ([`DecimalDoubleComparison`],
//! while a join's equality is still an expression), in `BETWEEN`, `IN`
//! lists and `IN` and `ANY`/`ALL` subqueries by an analyzer rule ahead of
//! type coercion ([`DecimalDoubleRanges`]; the planner has no hook for
//! them).
//!
//! Values that take one type without being compared (`CASE` and
//! `coalesce` results, `UNION` columns) keep DataFusion's decimal: a
//! number with a point is a `DOUBLE` in DataFusion's SQL and a decimal in
//! Spark's and DuckDB's, so `coalesce(d, 0.0)`, a decimal there, would
//! become a double; `coalesce(d, 1e-20)` rounds the double to 0 instead.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, DFSchema, Result};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{InList, InSubquery, SetComparison};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    Between, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Subquery, cast,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::BinaryOperator;

use crate::grouping_sets::rewrite_keeping_names;

/// Casts the decimal side of a comparison with a floating-point value to
/// `DOUBLE` (registered by [`crate::context`]).
#[derive(Debug)]
pub struct DecimalDoubleComparison;

impl ExprPlanner for DecimalDoubleComparison {
    fn plan_binary_op(
        &self,
        mut expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use BinaryOperator as B;
        if matches!(
            expr.op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
        ) {
            as_doubles(&mut [&mut expr.left, &mut expr.right], schema);
        }
        Ok(PlannerResult::Original(expr))
    }
}

/// Casts the decimal operands of a `BETWEEN`, an `IN` list or an `IN` or
/// `ANY`/`ALL` subquery that also has a floating-point one to `DOUBLE`
/// (registered by [`crate::context`], ahead of DataFusion's type
/// coercion).
#[derive(Debug)]
pub struct DecimalDoubleRanges;

impl AnalyzerRule for DecimalDoubleRanges {
    fn name(&self) -> &str {
        "decimal_double_ranges"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        // A projection's columns keep their names.
        let rewritten = plan
            .transform_up_with_subqueries(|node| rewrite_keeping_names(node, ranges_as_doubles))?;
        Ok(rewritten.data)
    }
}

fn ranges_as_doubles(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    Ok(match expr {
        Expr::Between(mut between) => {
            let Between {
                expr, low, high, ..
            } = &mut between;
            let cast = as_doubles(&mut [&mut **expr, &mut **low, &mut **high], schema);
            Transformed::new_transformed(Expr::Between(between), cast)
        }
        Expr::InList(mut in_list) => {
            let InList { expr, list, .. } = &mut in_list;
            let mut operands: Vec<&mut Expr> = std::iter::once(&mut **expr).chain(list).collect();
            let cast = as_doubles(&mut operands, schema);
            Transformed::new_transformed(Expr::InList(in_list), cast)
        }
        Expr::InSubquery(mut in_subquery) => {
            let InSubquery { expr, subquery, .. } = &mut in_subquery;
            let cast = subquery_as_doubles(expr, subquery, schema)?;
            Transformed::new_transformed(Expr::InSubquery(in_subquery), cast)
        }
        Expr::SetComparison(mut set) => {
            let SetComparison { expr, subquery, .. } = &mut set;
            let cast = subquery_as_doubles(expr, subquery, schema)?;
            Transformed::new_transformed(Expr::SetComparison(set), cast)
        }
        other => Transformed::no(other),
    })
}

/// [`as_doubles`] of `expr` and the one column of `subquery` (`x IN
/// (SELECT d ...)`, `x = ANY (SELECT d ...)`): a decimal column is cast
/// in a projection over the subquery.
fn subquery_as_doubles(
    expr: &mut Expr,
    subquery: &mut Subquery,
    schema: &DFSchema,
) -> Result<bool> {
    let plan = Arc::clone(&subquery.subquery);
    let inner = plan.schema();
    let [field] = inner.fields().as_ref() else {
        return Ok(false);
    };
    let outer = expr.get_type(schema).ok();
    if !mixed(&[outer.clone(), Some(field.data_type().clone())]) {
        return Ok(false);
    }
    if outer.as_ref().is_some_and(DataType::is_decimal) {
        *expr = cast(expr.clone(), DataType::Float64);
    } else {
        let column = Expr::Column(Column::from(inner.qualified_field(0)));
        let projected = LogicalPlanBuilder::from(plan.as_ref().clone())
            .project([cast(column, DataType::Float64).alias(field.name())])?
            .build()?;
        subquery.subquery = Arc::new(projected);
    }
    Ok(true)
}

/// Where `operands`, compared with each other, hold both a decimal and a
/// floating-point value, casts the decimals to `DOUBLE`; says whether it
/// did. An operand whose type does not resolve is left to the planner's
/// own error.
fn as_doubles(operands: &mut [&mut Expr], schema: &DFSchema) -> bool {
    let types: Vec<Option<DataType>> = operands.iter().map(|e| e.get_type(schema).ok()).collect();
    if !mixed(&types) {
        return false;
    }
    for (operand, kind) in operands.iter_mut().zip(&types) {
        if kind.as_ref().is_some_and(DataType::is_decimal) {
            **operand = cast((**operand).clone(), DataType::Float64);
        }
    }
    true
}

/// Whether `types` (`None`: one that does not resolve) hold both a decimal
/// and a floating-point type.
fn mixed(types: &[Option<DataType>]) -> bool {
    let any = |kind: fn(&DataType) -> bool| types.iter().flatten().any(kind);
    any(DataType::is_decimal) && any(DataType::is_floating)
}
