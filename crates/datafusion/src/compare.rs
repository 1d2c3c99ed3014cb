//! Comparisons of Variant values are refused while planning, as Spark
//! refuses them (`does not support ordering on type "VARIANT"`), with an
//! error that says what to compare instead.
//!
//! A Variant column is a struct of two binaries, and DataFusion compares
//! structs field by field: `=`, `<`, `IN`, ... would compare the bytes,
//! which differ for equal values (`{"a":1,"b":2}` and `{"b":2,"a":1}` list
//! their names in other orders in the metadata, a file's row lists names
//! the value does not use, `1` and `1.0` are other encodings), and answer
//! wrongly without a word. Comparing by value instead (the core's
//! [`vshred::variant::compare`]) would leave the engine at odds with
//! itself: `GROUP BY`, `DISTINCT`, set operations and hash joins hash the
//! struct's bytes, so `x = y` could hold of two values kept in two groups.
//! Refused, a query compares what it means: a typed value
//! (`variant_get(x, '$.a', 'bigint') = 1`, `CAST(x AS STRING)`), which
//! also prunes the files read, or `to_json(x)`.
//!
//! Grouping, sorting and deduplicating go by the same bytes, so they are
//! refused too (Spark refuses them as well), with the way out: group or
//! sort by a typed value or by `to_json(x)`.
//!
//! A struct, list or map that holds a Variant is compared field by field
//! and element by element, so by the Variant's bytes as well: it is
//! refused as a Variant is (`named_struct('x', x)`, `array_agg(x)`).
//!
//! [`VariantComparisonPlanner`] refuses a comparison operator of a
//! Variant as the SQL is planned, where a Variant compared with another
//! type would fail first, naming struct types; the rule below refuses
//! the rest, and plans not made from SQL.
//!
//! [`VariantComparisons`] looks at every plan and subquery ahead of
//! DataFusion's type coercion (whose casts may hide that a struct is a
//! Variant) and refuses each form that compares two values where one is
//! a Variant: the comparison
//! operators and `IS [NOT] DISTINCT FROM`, `IN` lists and subqueries,
//! `= ANY (...)`, `BETWEEN`, `CASE x WHEN`, `nullif`, `greatest`, `least`,
//! and a join's `USING` columns (a join's `ON` is an `=`); and each plan
//! that groups or deduplicates rows by a Variant: `GROUP BY` (grouping
//! sets, `ROLLUP` and `CUBE` too), `DISTINCT`, `DISTINCT ON`, `UNION`
//! (a recursive one too), `INTERSECT` and `EXCEPT` (joins on every
//! column), or sorts by one: `ORDER BY`, a window's `PARTITION BY` and
//! `ORDER BY`, an aggregate's `ORDER BY`; and the aggregates that order
//! or deduplicate their arguments: `min`, `max`, `approx_distinct` and
//! any `DISTINCT` one. Plans that only carry Variants along (`UNION
//! ALL`, a join or `GROUP BY` on typed keys, `any_value(v)`,
//! `first_value(v)`) are left alone.

use std::fmt::Display;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, NullEquality, Result, plan_err};
use datafusion::logical_expr::expr::{AggregateFunction, InList, InSubquery, SetComparison};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    Between, BinaryExpr, Case, Distinct, Expr, ExprSchemable, JoinType, LogicalPlan, Operator,
    Subquery,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::BinaryOperator;
use vshred::parquet::is_variant_field;

/// Refuses comparisons of Variant values (registered by
/// [`crate::context`], ahead of DataFusion's type coercion).
#[derive(Debug)]
pub struct VariantComparisons;

impl VariantComparisons {
    /// The rule's name, which DataFusion puts before its errors.
    pub const NAME: &str = "variant_comparisons";
}

impl AnalyzerRule for VariantComparisons {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        check_every(&plan, check_plan, check)?;
        Ok(plan)
    }
}

/// Calls `on_node` on every node of `plan` (its subqueries' too) and
/// `on_expr` on every expression in it, each with the schema of the node's
/// inputs: how vshred's analyzer rules look for what they refuse.
pub(crate) fn check_every(
    plan: &LogicalPlan,
    on_node: impl Fn(&LogicalPlan, &DFSchema) -> Result<()>,
    on_expr: impl Fn(&Expr, &DFSchema) -> Result<()>,
) -> Result<()> {
    plan.apply_with_subqueries(|node| {
        let schema = merge_schema(&node.inputs());
        on_node(node, &schema)?;
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                on_expr(e, &schema)?;
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    Ok(())
}

/// Refuses, as [`VariantComparisons`] does, a comparison operator with a
/// Variant operand while the SQL is planned: a Variant compared with a
/// value of another type (`parse_json('1') = 1`) in a `SELECT` list is
/// typed there, before any analyzer rule runs, and refused naming two
/// struct types (registered by [`crate::context`]).
#[derive(Debug)]
pub struct VariantComparisonPlanner;

impl ExprPlanner for VariantComparisonPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        // Named as the analyzer rule names them (`<>` is `!=`).
        let op = match expr.op {
            BinaryOperator::Eq => Operator::Eq,
            BinaryOperator::NotEq => Operator::NotEq,
            BinaryOperator::Lt => Operator::Lt,
            BinaryOperator::LtEq => Operator::LtEq,
            BinaryOperator::Gt => Operator::Gt,
            BinaryOperator::GtEq => Operator::GtEq,
            BinaryOperator::Spaceship => Operator::IsNotDistinctFrom,
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let null_test = is_null_test(&op, &expr.left, &expr.right);
        for operand in [&expr.left, &expr.right] {
            if is_variant(operand, schema) && !null_test {
                refuse(&op.to_string(), operand)?;
            }
        }
        Ok(PlannerResult::Original(expr))
    }
}

/// An error if `node` joins on, groups by, sorts by or deduplicates a
/// Variant.
fn check_plan(node: &LogicalPlan, schema: &DFSchema) -> Result<()> {
    match node {
        LogicalPlan::Join(join) => {
            // Before the optimizer takes `ON a = b` apart, a join's keys
            // are its `USING` columns or, matching rows with nulls equal,
            // a set operation's every column.
            match (join.join_type, join.null_equality) {
                (JoinType::LeftSemi, NullEquality::NullEqualsNull) => {
                    return deduplicated("INTERSECT", join.left.schema());
                }
                (JoinType::LeftAnti, NullEquality::NullEqualsNull) => {
                    return deduplicated("EXCEPT", join.left.schema());
                }
                _ => {}
            }
            for (left, right) in &join.on {
                if is_variant(left, schema) || is_variant(right, schema) {
                    refuse("JOIN USING", left)?;
                }
            }
            Ok(())
        }
        LogicalPlan::Aggregate(aggregate) => {
            let keys = aggregate.group_expr.iter().flat_map(|key| match key {
                Expr::GroupingSet(set) => set.distinct_expr(),
                key => vec![key],
            });
            grouped("GROUP BY", keys, schema)
        }
        LogicalPlan::Distinct(Distinct::All(input)) => {
            let form = match input.as_ref() {
                LogicalPlan::Union(_) => "UNION",
                _ => "DISTINCT",
            };
            deduplicated(form, input.schema())
        }
        LogicalPlan::Sort(sort) => {
            grouped("ORDER BY", sort.expr.iter().map(|sort| &sort.expr), schema)
        }
        LogicalPlan::Distinct(Distinct::On(on)) => {
            grouped("DISTINCT ON", &on.on_expr, schema)?;
            let order_by = on.sort_expr.iter().flatten().map(|sort| &sort.expr);
            grouped("ORDER BY", order_by, schema)
        }
        LogicalPlan::RecursiveQuery(query) if query.is_distinct => {
            deduplicated("UNION", query.static_term.schema())
        }
        _ => Ok(()),
    }
}

/// An error if one of `keys`, which `form` groups or sorts rows by, is a
/// Variant.
fn grouped<'a>(
    form: &str,
    keys: impl IntoIterator<Item = &'a Expr>,
    schema: &DFSchema,
) -> Result<()> {
    match keys.into_iter().find(|key| is_variant(key, schema)) {
        Some(variant) => refuse_grouping(form, variant),
        None => Ok(()),
    }
}

/// An error if one of the columns of `rows`, which `form` deduplicates
/// or matches, is a Variant.
fn deduplicated(form: &str, rows: &DFSchema) -> Result<()> {
    match rows.iter().find(|(_, field)| holds_variant(field)) {
        Some((_, column)) => refuse_grouping(form, column.name()),
        None => Ok(()),
    }
}

/// An error if `expr` compares a Variant, or aggregates or windows over
/// one in an order or deduplicated.
fn check(expr: &Expr, schema: &DFSchema) -> Result<()> {
    let (form, operands): (String, Vec<&Expr>) = match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_null_test(op, left, right) => {
            return Ok(());
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(op) => {
            (op.to_string(), vec![left, right])
        }
        Expr::InList(InList { expr, list, .. }) => (
            "IN".into(),
            [expr.as_ref()].into_iter().chain(list).collect(),
        ),
        Expr::Between(Between {
            expr, low, high, ..
        }) => ("BETWEEN".into(), vec![expr, low, high]),
        Expr::Case(Case {
            expr: Some(expr),
            when_then_expr,
            ..
        }) => (
            "CASE ... WHEN".into(),
            [expr.as_ref()]
                .into_iter()
                .chain(when_then_expr.iter().map(|(when, _)| when.as_ref()))
                .collect(),
        ),
        Expr::InSubquery(InSubquery { expr, subquery, .. }) => {
            return check_subquery("IN", expr, subquery, schema);
        }
        Expr::SetComparison(SetComparison {
            expr, subquery, op, ..
        }) => return check_subquery(&format!("{op} ANY or ALL"), expr, subquery, schema),
        Expr::ScalarFunction(f) if COMPARING_FUNCTIONS.contains(&f.name()) => {
            (f.name().into(), f.args.iter().collect())
        }
        // A map's keys are compared with each other when it is made (to
        // refuse duplicates), and with a key looked up (in a map read from
        // a file); its values are not compared.
        Expr::ScalarFunction(f) if f.name() == "map" => {
            (f.name().into(), f.args.iter().take(1).collect())
        }
        Expr::ScalarFunction(f) if f.name() == "map_extract" => {
            (f.name().into(), f.args.iter().skip(1).collect())
        }
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            let name = func.name();
            let order_by = params.order_by.iter().map(|sort| &sort.expr);
            grouped(&format!("ORDER BY in {name}"), order_by, schema)?;
            return check_aggregate(name, &params.args, params.distinct, schema);
        }
        Expr::WindowFunction(window) => {
            let params = &window.params;
            grouped("PARTITION BY", &params.partition_by, schema)?;
            let order_by = params.order_by.iter().map(|sort| &sort.expr);
            grouped("OVER (ORDER BY ...)", order_by, schema)?;
            return check_aggregate(window.fun.name(), &params.args, params.distinct, schema);
        }
        _ => return Ok(()),
    };
    match operands.into_iter().find(|e| is_variant(e, schema)) {
        Some(variant) => refuse(&form, variant),
        None => Ok(()),
    }
}

/// The scalar functions that compare their arguments, or the elements of
/// lists (or a map's keys) with each other or with a value: by bytes,
/// when they are Variants.
const COMPARING_FUNCTIONS: [&str; 21] = [
    "nullif",
    "greatest",
    "least",
    "array_has",
    "array_has_all",
    "array_has_any",
    "array_position",
    "array_positions",
    "array_remove",
    "array_remove_n",
    "array_remove_all",
    "array_replace",
    "array_replace_n",
    "array_replace_all",
    "array_distinct",
    "array_union",
    "array_intersect",
    "array_except",
    "array_sort",
    "array_min",
    "array_max",
];

/// The aggregates that order their arguments (`min`, `max`) or count
/// the distinct ones: by bytes, as `GROUP BY` would.
const ORDERING_AGGREGATES: [&str; 3] = ["min", "max", "approx_distinct"];

/// An error if the aggregate (or window function) `name` of `args`
/// orders or deduplicates a Variant: `count(DISTINCT x)`, `min(x)`, ...
fn check_aggregate(name: &str, args: &[Expr], distinct: bool, schema: &DFSchema) -> Result<()> {
    if distinct {
        grouped(&format!("{name}(DISTINCT ...)"), args, schema)?;
    }
    if ORDERING_AGGREGATES.contains(&name) {
        grouped(name, args, schema)?;
    }
    Ok(())
}

/// An error if `expr`, or the column of `subquery` it is compared with,
/// is a Variant.
fn check_subquery(form: &str, expr: &Expr, subquery: &Subquery, schema: &DFSchema) -> Result<()> {
    if is_variant(expr, schema) {
        return refuse(form, expr);
    }
    match subquery.subquery.schema().fields().first() {
        Some(column) if holds_variant(column) => refuse(form, column.name()),
        _ => Ok(()),
    }
}

/// The operators that compare two values.
fn is_comparison(op: &Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// Whether `left op right` tests for null (`x IS DISTINCT FROM NULL`,
/// `NULL <=> x`), not a comparison of values.
fn is_null_test(op: &Operator, left: &Expr, right: &Expr) -> bool {
    let is_null = |expr: &Expr| matches!(expr, Expr::Literal(value, _) if value.is_null());
    matches!(op, Operator::IsDistinctFrom | Operator::IsNotDistinctFrom)
        && (is_null(left) || is_null(right))
}

/// Whether `expr` is a Variant or holds one (a struct's field, a list's
/// elements, a map's values), which DataFusion compares field by field
/// and element by element, so by the Variant's bytes too; one whose type
/// cannot be worked out here is left to the planner, which reports it.
fn is_variant(expr: &Expr, schema: &DFSchema) -> bool {
    expr.to_field(schema)
        .is_ok_and(|(_, field)| holds_variant(&field))
}

/// Whether `field` is a Variant or one of its nested fields is.
pub(crate) fn holds_variant(field: &Field) -> bool {
    is_variant_field(field) || type_holds_variant(field.data_type())
}

fn type_holds_variant(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => fields.iter().any(|field| holds_variant(field)),
        DataType::List(element)
        | DataType::LargeList(element)
        | DataType::ListView(element)
        | DataType::LargeListView(element)
        | DataType::FixedSizeList(element, _)
        | DataType::Map(element, _) => holds_variant(element),
        DataType::Union(fields, _) => fields.iter().any(|(_, field)| holds_variant(field)),
        DataType::Dictionary(_, values) => type_holds_variant(values),
        DataType::RunEndEncoded(_, values) => holds_variant(values),
        _ => false,
    }
}

/// The error for `form` (`GROUP BY`, `DISTINCT`, `UNION`, ...) of `variant`.
#[cold]
fn refuse_grouping(form: &str, variant: impl Display) -> Result<()> {
    plan_err!(
        "cannot group or sort Variant values: {form} of {variant} would go by their bytes, not their values (Spark refuses it too); group, sort or deduplicate a typed value, variant_get(x, '$.path', 'bigint'), or the text, to_json(x)"
    )
}

/// The error for `form` (`=`, `IN`, ...) of `variant`.
#[cold]
fn refuse(form: &str, variant: impl Display) -> Result<()> {
    plan_err!(
        "cannot compare Variant values: {form} of {variant} would compare their bytes, not their values (Spark refuses it too); compare a typed value, variant_get(x, '$.path', 'bigint') = 1 or CAST(x AS STRING) = 'a', or the text, to_json(x)"
    )
}
