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

use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, AsArray, Decimal128Array, Float64Array};
use arrow::datatypes::Decimal128Type;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, DFSchema, Result, ScalarValue, plan_err};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{InList, InSubquery, SetComparison};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{
    Between, Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Subquery, TryCast, Volatility, cast,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::BinaryOperator;
use vshred::variant::nearest_double;

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

/// A decimal cast to `DOUBLE` as the double nearest its value, where
/// Arrow's cast rounds twice: the unscaled integer to a double, then its
/// quotient by a power of ten (`12345.6789` at scale 18 came to
/// `12345.678899999999`, `0.1` at scale 25 to `0.09999999999999999`), so
/// that a decimal compared with a double (which [`DecimalDoubleComparison`]
/// and [`DecimalDoubleRanges`] cast so) missed the rows Spark keeps.
/// Rewrites every such cast once the types are known (registered last by
/// [`crate::context`]).
#[derive(Debug)]
pub struct ExactDecimalDoubles;

impl AnalyzerRule for ExactDecimalDoubles {
    fn name(&self) -> &str {
        "exact_decimal_doubles"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        let rewritten =
            plan.transform_up_with_subqueries(|node| rewrite_keeping_names(node, exact_double))?;
        Ok(rewritten.data)
    }
}

fn exact_double(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let (Expr::Cast(Cast { expr: inner, field }) | Expr::TryCast(TryCast { expr: inner, field })) =
        &expr
    else {
        return Ok(Transformed::no(expr));
    };
    let decimal = matches!(
        inner.get_type(schema)?,
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal128(..)
    );
    if !decimal || field.data_type() != &DataType::Float64 {
        return Ok(Transformed::no(expr));
    }
    Ok(Transformed::yes(
        DECIMAL_TO_DOUBLE.call(vec![inner.as_ref().clone()]),
    ))
}

/// The function [`ExactDecimalDoubles`] puts in place of a cast (named so
/// that a worker finds it as the plan names it).
pub static DECIMAL_TO_DOUBLE: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::from(DecimalToDouble::default())));

#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct DecimalToDouble {
    signature: Signature,
}

impl Default for DecimalToDouble {
    fn default() -> Self {
        DecimalToDouble {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for DecimalToDouble {
    fn name(&self) -> &str {
        "decimal_to_double"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [decimals] = args.args.as_slice() else {
            return plan_err!("decimal_to_double takes one argument");
        };
        let scalar = matches!(decimals, ColumnarValue::Scalar(_));
        let array = decimals.to_array(args.number_rows)?;
        // Decimals of 9 and 18 digits widen to 38 exactly.
        let wide = arrow::compute::cast(&array, &DataType::Decimal128(38, decimal_scale(&array)?))?;
        let doubles: ArrayRef = Arc::new(nearest_doubles(wide.as_primitive::<Decimal128Type>()));
        Ok(match scalar {
            true => ColumnarValue::Scalar(ScalarValue::try_from_array(&doubles, 0)?),
            false => ColumnarValue::Array(doubles),
        })
    }
}

fn decimal_scale(array: &ArrayRef) -> Result<i8> {
    match array.data_type() {
        DataType::Decimal32(_, scale)
        | DataType::Decimal64(_, scale)
        | DataType::Decimal128(_, scale) => Ok(*scale),
        other => plan_err!("decimal_to_double takes a decimal, not {other}"),
    }
}

/// Each decimal as the double nearest its value.
fn nearest_doubles(decimals: &Decimal128Array) -> Float64Array {
    let scale = i32::from(decimals.scale());
    let mut text = String::new();
    decimals
        .iter()
        .map(|unscaled| unscaled.map(|u| nearest_double(u, scale, &mut text)))
        .collect()
}

#[cfg(test)]
mod exact_tests {
    use super::*;

    #[test]
    fn a_decimal_becomes_the_double_nearest_its_value() {
        for (unscaled, scale, text) in [
            (123_456_789i128 * 10i128.pow(14), 18, "12345.6789"),
            (10i128.pow(24), 25, "0.1"),
            (5 * 10i128.pow(23), 25, "0.05"),
            (123_456 * 10i128.pow(22), 25, "123.456"),
            (-15, 1, "-1.5"),
            (i128::MAX / 7, 37, "2.4305883351495604533098186245862353470"),
            (12, -3, "12e3"),
        ] {
            let decimals = Decimal128Array::from(vec![unscaled])
                .with_precision_and_scale(38, scale.clamp(0, 38) as i8)
                .unwrap();
            let expected: f64 = text.parse().unwrap();
            if (0..=38).contains(&scale) {
                assert_eq!(nearest_doubles(&decimals).value(0), expected, "{text}");
            }
            assert_eq!(
                nearest_double(unscaled, scale, &mut String::new()),
                expected,
                "{text}"
            );
        }
        // Arrow's cast, which this replaces, rounds twice.
        let arrow: ArrayRef = Arc::new(
            Decimal128Array::from(vec![123_456_789i128 * 10i128.pow(14)])
                .with_precision_and_scale(38, 18)
                .unwrap(),
        );
        let cast = arrow::compute::cast(&arrow, &DataType::Float64).unwrap();
        assert_ne!(
            cast.as_primitive::<arrow::datatypes::Float64Type>()
                .value(0),
            12345.6789
        );
    }
}
