//! SQL that would read a Variant's encoding instead of its value is
//! refused, naming `variant_get` or `variant_explode`: brackets on a
//! Variant (`v['a']`, `v[0]`) and a dotted name under one (`v.a`, planned
//! by [`FieldAccess`]), and a field of it however written (`v.value`,
//! `get_field(v, 'metadata')`) or `unnest(v)` ([`VariantEncoding`], an
//! analyzer rule). Each would read the struct that
//! holds the Variant: its `metadata` and `value` bytes, or a field it does
//! not have. Other brackets, a struct's field (`s['a']`) and a list's
//! elements (`l[1]`, `l[1:2]`), are DataFusion's own.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{DFSchema, Result, TableReference, exec_err, plan_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{
    ExprPlanner, PlannerResult, RawBinaryExpr, RawFieldAccessExpr,
};
use datafusion::logical_expr::sqlparser::ast::BinaryOperator;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, GetFieldAccess, LogicalPlan, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use vshred::parquet::is_variant_field;

use crate::compare::check_every;

/// Refuses brackets and dotted names on a Variant; leaves others to
/// DataFusion.
#[derive(Debug)]
pub struct FieldAccess;

impl ExprPlanner for FieldAccess {
    fn plan_field_access(
        &self,
        expr: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        let variant = is_variant(&expr.expr, schema);
        match &expr.field_access {
            GetFieldAccess::NamedStructField { name } if variant => {
                let name = name.try_as_str().flatten().unwrap_or_default();
                refuse_field(&format!("{}['{name}']", expr.expr), name)
            }
            GetFieldAccess::ListIndex { .. } | GetFieldAccess::ListRange { .. } if variant => {
                plan_err!(
                    "{}[...]: a Variant array's element is read by variant_get(x, '$[0]') (or with a type, variant_get(x, '$[0]', 'bigint'))",
                    expr.expr
                )
            }
            _ => Ok(PlannerResult::Original(expr)),
        }
    }

    /// `v:a.b` where a statement reached DataFusion's planner without
    /// [`crate::statements`], which rewrites it ([`crate::colon`]).
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        _: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        match &expr.op {
            BinaryOperator::Custom(op) if op == ":" => plan_err!(
                "{}:...: Spark's `:` is read in statements parsed by vshred_datafusion::statements (as vshred sql and the Python module parse them), not by SessionContext::sql; variant_get(x, '$.path') reads the same",
                expr.left
            ),
            _ => Ok(PlannerResult::Original(expr)),
        }
    }

    fn plan_compound_identifier(
        &self,
        field: &Field,
        qualifier: Option<&TableReference>,
        nested_names: &[String],
    ) -> Result<PlannerResult<Vec<Expr>>> {
        // The Variant the names reach, if one: the column, or a field of
        // structs within it (`s.v.a`).
        let mut reached = field;
        let mut depth = 0;
        while !is_variant_field(reached) {
            let (DataType::Struct(fields), Some(name)) =
                (reached.data_type(), nested_names.get(depth))
            else {
                return Ok(PlannerResult::Original(vec![]));
            };
            let Some(next) = fields.iter().find(|f| f.name() == name) else {
                return Ok(PlannerResult::Original(vec![]));
            };
            reached = next;
            depth += 1;
        }
        if depth == nested_names.len() {
            return Ok(PlannerResult::Original(vec![]));
        }
        let column = Expr::Column((qualifier, field).into());
        let what = format!("{column}.{}", nested_names.join("."));
        let nested_names = &nested_names[depth..];
        // DataFusion's planner takes a planner's error here for "not
        // planned" and goes on to plan a struct's field, whose error ("Field
        // a not found in struct") says nothing of Variants: the refusal is
        // planned instead, as a call whose type is the error.
        let refusal = RefusedField {
            message: field_refusal(&what, &nested_names.join(".")),
            signature: Signature::any(1, Volatility::Immutable),
        };
        Ok(PlannerResult::Planned(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(ScalarUDF::from(refusal)), vec![column]),
        )))
    }
}

/// `v.a` on a Variant, refused where the plan is built: its return type is
/// the error.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RefusedField {
    message: String,
    signature: Signature,
}

impl ScalarUDFImpl for RefusedField {
    fn name(&self) -> &str {
        "refused_variant_field"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        plan_err!("{}", self.message)
    }

    fn invoke_with_args(&self, _: ScalarFunctionArgs) -> Result<ColumnarValue> {
        exec_err!("{}", self.message)
    }
}

/// Refuses a field of a Variant (`v.value`, `get_field(v, 'metadata')`)
/// and `unnest` of one, wherever a plan has them (registered by
/// [`crate::context`] beside [`crate::compare::VariantComparisons`]).
#[derive(Debug)]
pub struct VariantEncoding;

impl VariantEncoding {
    /// The rule's name, which DataFusion puts before its errors.
    pub const NAME: &str = "variant_encoding";
}

impl AnalyzerRule for VariantEncoding {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        check_every(&plan, refuse_unnest, refuse_get_field)?;
        Ok(plan)
    }
}

/// Refuses `unnest` of a Variant.
fn refuse_unnest(node: &LogicalPlan, _: &DFSchema) -> Result<()> {
    let LogicalPlan::Unnest(unnest) = node else {
        return Ok(());
    };
    for column in &unnest.exec_columns {
        let (_, field) = unnest.input.schema().qualified_field_from_column(column)?;
        if is_variant_field(field) {
            return plan_err!(
                "unnest of a Variant: variant_explode(x) lists its elements or fields (FROM variant_explode(...), or variant_get(x, '$', 'array<variant>') to unnest); unnest would list its encoding"
            );
        }
    }
    Ok(())
}

/// Refuses `get_field` of a Variant, which `v.value` is planned as.
fn refuse_get_field(expr: &Expr, schema: &DFSchema) -> Result<()> {
    if let Expr::ScalarFunction(f) = expr
        && f.name() == "get_field"
        && let [of, Expr::Literal(name, _), ..] = f.args.as_slice()
        && is_variant(of, schema)
    {
        let name = name.try_as_str().flatten().unwrap_or_default();
        return refuse_field(&format!("{of}.{name}"), name);
    }
    Ok(())
}

fn is_variant(expr: &Expr, schema: &DFSchema) -> bool {
    expr.to_field(schema)
        .is_ok_and(|(_, field)| is_variant_field(&field))
}

/// The error for `what`, a Variant's field `name` read as a struct's.
fn refuse_field<T>(what: &str, name: &str) -> Result<T> {
    plan_err!("{}", field_refusal(what, name))
}

fn field_refusal(what: &str, name: &str) -> String {
    format!(
        "{what}: a Variant's field is read by variant_get(x, '$.{name}') (or with a type, variant_get(x, '$.{name}', 'bigint')); this would read the Variant's own encoding"
    )
}
