//! A Variant's fields in SQL. Spark's extraction, `v:a.b[0]` (and
//! `v:['a b']`, `v:a::bigint` to type it), is planned by [`FieldAccess`]
//! as `variant_get(v, '$.a.b[0]')`, so that the scan reads the path's
//! leaves alone as it does for the call.
//!
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
use datafusion::common::{
    DFSchema, Result, ScalarValue, TableReference, exec_err, plan_datafusion_err, plan_err,
};
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
use datafusion::prelude::lit;
use vshred::parquet::is_variant_field;
use vshred::path::{PathSegment, VariantPath};

use crate::compare::check_every;
use crate::functions::VARIANT_GET;

/// Plans `v:a.b` on a Variant as `variant_get`; refuses brackets and dotted
/// names on one; leaves others to DataFusion.
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

    /// `v:a.b`, which DataFusion hands over as the operator `:` between
    /// `v` and the path as sqlparser prints it (`a.b`).
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        let (BinaryOperator::Custom(op), Expr::Literal(ScalarValue::Utf8(Some(text)), _)) =
            (&expr.op, &expr.right)
        else {
            return Ok(PlannerResult::Original(expr));
        };
        if op != ":" {
            return Ok(PlannerResult::Original(expr));
        }
        let of = &expr.left;
        if !is_variant(of, schema) {
            let of_type = of.get_type(schema)?;
            return plan_err!(
                "{of}:{text}: `:` extracts a field of a Variant, and {of} is {of_type} (parse_json({of}):{text} parses a JSON text first)"
            );
        }
        let path =
            colon_path(text).map_err(|message| plan_datafusion_err!("{of}:{text}: {message}"))?;
        // `v:a:b` is one path, `$.a.b`, whose leaves the scan reads alone.
        let (variant, path) = match of {
            Expr::ScalarFunction(get) if get.func == *VARIANT_GET => match get.args.as_slice() {
                [variant, Expr::Literal(ScalarValue::Utf8(Some(first)), _)] => {
                    let first =
                        VariantPath::parse(first).map_err(|e| plan_datafusion_err!("{e}"))?;
                    let joined = first.segments().iter().chain(path.segments()).cloned();
                    (variant.clone(), VariantPath::new(joined.collect()))
                }
                _ => (expr.left, path),
            },
            _ => (expr.left, path),
        };
        let get = VARIANT_GET.call(vec![variant, lit(path.to_string())]);
        Ok(PlannerResult::Planned(get))
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

/// The path of `v:...`, from the text sqlparser prints for it: names
/// (`a`, or `"a b"` from a quoted one, `""` for a quote in it) joined by
/// `.`, and brackets holding a quoted name (`['a b']`, `''` for a quote)
/// or an element's index (`[0]`); the first step may be a bracket.
fn colon_path(text: &str) -> std::result::Result<VariantPath, String> {
    let mut rest = text;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        if segments.is_empty() && !rest.starts_with('[') {
            rest = name(rest, &mut segments)?;
        } else if let Some(after) = rest.strip_prefix('.')
            && !segments.is_empty()
        {
            rest = name(after, &mut segments)?;
        } else if let Some(after) = rest.strip_prefix('[') {
            let (segment, after) = if after.starts_with('\'') {
                quoted(after, '\'')?
            } else {
                let end = after.find(']').unwrap_or(after.len());
                let index = after[..end].parse().map_err(|_| {
                    format!(
                        "[{}]: a bracket holds a field's name in quotes, ['a b'], or an element's index, [0]",
                        &after[..end]
                    )
                })?;
                (PathSegment::Index(index), &after[end..])
            };
            segments.push(segment);
            rest = after
                .strip_prefix(']')
                .ok_or_else(|| format!("no ] closes the bracket before {after:?}"))?;
        } else {
            return Err(format!("expected . or [ at {rest:?}"));
        }
    }
    Ok(VariantPath::new(segments))
}

/// A field's name at the start of `text`, quoted (`"a b"`) or not (`a`),
/// pushed onto `segments`; the text after it.
fn name<'a>(
    text: &'a str,
    segments: &mut Vec<PathSegment>,
) -> std::result::Result<&'a str, String> {
    if text.starts_with('"') {
        let (segment, rest) = quoted(text, '"')?;
        segments.push(segment);
        return Ok(rest);
    }
    let end = text.find(['.', '[']).unwrap_or(text.len());
    if end == 0 {
        return Err(format!("expected a field's name at {text:?}"));
    }
    segments.push(PathSegment::Field(text[..end].to_string()));
    Ok(&text[end..])
}

/// The field named by the text in `quote`s at the start of `text` (a quote
/// inside doubled); the text after it.
fn quoted(text: &str, quote: char) -> std::result::Result<(PathSegment, &str), String> {
    let mut name = String::new();
    let mut chars = text[1..].char_indices();
    while let Some((at, c)) = chars.next() {
        if c != quote {
            name.push(c);
        } else if text[1 + at + 1..].starts_with(quote) {
            name.push(quote);
            chars.next();
        } else {
            return Ok((PathSegment::Field(name), &text[1 + at + 1..]));
        }
    }
    Err(format!("no {quote} closes {text:?}"))
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
