//! A decimal compared with a double compares as two doubles, as in Spark
//! and DuckDB. DataFusion's coercion takes both to a decimal instead
//! (`Decimal128(30, 15)` for a `DECIMAL(10,2)` and a `DOUBLE`), which
//! rounds the double to 15 places (`0.00 < 1e-20` is false, `0.00 =
//! 1e-20` true) and fails on one past 10^15 (`d < 1e16`). Planned as the
//! SQL is read, before that coercion: the comparison operators, with
//! either side a decimal and the other a `DOUBLE` or `FLOAT`.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Expr, ExprSchemable, cast};
use datafusion::sql::sqlparser::ast::BinaryOperator;

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
        if !matches!(
            expr.op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
        ) {
            return Ok(PlannerResult::Original(expr));
        }
        // A side whose type does not resolve is left to the planner's
        // own error.
        let kind = |e: &Expr| e.get_type(schema).ok();
        let (left, right) = (kind(&expr.left), kind(&expr.right));
        let decimal = |t: &Option<DataType>| t.as_ref().is_some_and(DataType::is_decimal);
        let floating = |t: &Option<DataType>| t.as_ref().is_some_and(DataType::is_floating);
        if decimal(&left) && floating(&right) {
            expr.left = cast(expr.left, DataType::Float64);
        } else if floating(&left) && decimal(&right) {
            expr.right = cast(expr.right, DataType::Float64);
        }
        Ok(PlannerResult::Original(expr))
    }
}
