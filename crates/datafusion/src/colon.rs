//! Spark's extraction, `v:a.b[0]` (and `v:['a b']`, `v:a::bigint` to type
//! it), as `variant_get(v, '$.a.b[0]')`: rewritten in the statements' syntax
//! tree as they are parsed ([`crate::statements`]), so that the scan reads
//! the path's leaves alone as it does for the call.
//!
//! Two things are done there rather than in DataFusion's planner, which
//! gets `:` as an operator between `v` and the path as sqlparser prints it:
//! - The names are taken from the tree: printed, a quote in a name comes
//!   back as another name (`` `x""y` `` read `x"y`).
//! - `:` binds as tightly as `::`, as Spark has it. sqlparser ranks it
//!   below `+`, `*` and `||`, so that `1 + v:x::int * 2` is parsed as
//!   `(((1 + v):x)::int) * 2`. An expression of operators that holds a
//!   `:` is read again with `:` and `::` binding first
//!   ([`crate::operators`]): `1 + ((v:x::int) * 2)`. A parenthesized
//!   operand, `(a || b):x`, is left as written.
//! - An extraction is named as written, `v:k::INT` ([`ColonExtraction`]):
//!   the name is the only thing the tree knows that the plan does not.

use std::ops::ControlFlow;

use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DataFusionError, Result, plan_datafusion_err, plan_err};
use datafusion::logical_expr::expr::schema_name_from_exprs;
use datafusion::logical_expr::{
    ColumnarValue, Expr as DfExpr, LogicalPlan, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::sql::sqlparser::ast::{
    CastKind, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, JsonPath, JsonPathElem, ObjectName, Value, VisitorMut,
};
use vshred::path::{PathSegment, VariantPath};

use crate::grouping_sets::{grouping_args_as_keys, map_keeping_names};
use crate::operators::{Reach, holds, placeholder, regroup};

/// Rewrites every `x:path` as `variant_get(x, '$.path')`
/// ([`crate::statements::rewrite_expressions`]).
pub(crate) struct Colons;

impl VisitorMut for Colons {
    type Break = Box<DataFusionError>;

    /// Before an expression's parts are visited, so that an expression of
    /// operators is seen whole, from its top.
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        regroup_colons(expr);
        match extraction(expr) {
            Ok(Some(name)) => {
                let expr_as_written = std::mem::replace(expr, placeholder());
                *expr = call(
                    COLON_EXTRACTION,
                    [
                        expr_as_written,
                        Expr::value(Value::SingleQuotedString(name)),
                    ],
                );
            }
            Ok(None) => {}
            Err(e) => return ControlFlow::Break(Box::new(e)),
        }
        ControlFlow::Continue(())
    }
}

/// `expr` read again with `:` and `::` binding first, if it is an
/// expression of operators that holds a `:`.
fn regroup_colons(expr: &mut Expr) {
    if holds(expr, Reach::UnderColon, &|e| {
        matches!(e, Expr::JsonAccess { .. })
    }) {
        *expr = regroup(std::mem::replace(expr, placeholder()), Reach::UnderColon);
    }
}

/// The function that names an extraction: `colon_extraction(x, 'name')`
/// is `x`, named `name` ([`ColonExtraction`]).
pub const COLON_EXTRACTION: &str = "colon_extraction";

/// `x`, named as the extraction it was written as (`v:k::INT`), where
/// DataFusion would name a cast after what it casts, without the type
/// (`variant_get(t.v,Utf8("$.k"))` for `v:k::int` and `v:k::string`
/// alike, which then could not stand in one `SELECT` or one aggregate).
/// It holds the name only while the statement is planned: [`ColonNames`]
/// takes it out, the expressions around it keeping their names, before
/// any other rule looks for `variant_get`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ColonExtraction {
    signature: Signature,
}

impl Default for ColonExtraction {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for ColonExtraction {
    fn name(&self) -> &str {
        COLON_EXTRACTION
    }

    fn schema_name(&self, args: &[DfExpr]) -> Result<String> {
        match args {
            [_, DfExpr::Literal(name, _)] if let Some(Some(name)) = name.try_as_str() => {
                Ok(name.to_string())
            }
            _ => Ok(format!(
                "{COLON_EXTRACTION}({})",
                schema_name_from_exprs(args)?
            )),
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types[0].clone())
    }

    // The field itself, so that a Variant stays marked as one.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(args.arg_fields[0].clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(args.args.into_iter().next().expect("two arguments"))
    }
}

/// Takes each [`ColonExtraction`] out of the plan, leaving what it named
/// under the name it gave (registered by [`crate::context`] first).
#[derive(Debug)]
pub struct ColonNames;

impl AnalyzerRule for ColonNames {
    fn name(&self) -> &str {
        "colon_names"
    }

    fn analyze(&self, plan: LogicalPlan, _: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            map_keeping_names(node, |expr| {
                expr.transform_up(|e| match e {
                    DfExpr::ScalarFunction(call) if call.func.inner().is::<ColonExtraction>() => {
                        Ok(Transformed::yes(
                            call.args.into_iter().next().expect("two arguments"),
                        ))
                    }
                    e => Ok(Transformed::no(e)),
                })
            })?
            .transform_data(grouping_args_as_keys)
        })
        .map(|t| t.data)
    }
}

/// Takes the names out of a statement's extractions, each then named by
/// DataFusion, after the column it reads (`variant_get(c.v,Utf8("$.k"))`).
#[derive(Default)]
pub(crate) struct Unnamed {
    /// Whether there was a name to take out.
    pub(crate) found: bool,
}

impl VisitorMut for Unnamed {
    type Break = Box<DataFusionError>;

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if let Expr::Function(Function {
            name,
            args: FunctionArguments::List(list),
            ..
        }) = expr
            && name.to_string() == COLON_EXTRACTION
            && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(named))) = list.args.first_mut()
        {
            *expr = std::mem::replace(named, placeholder());
            self.found = true;
        }
        ControlFlow::Continue(())
    }
}

/// Rewrites the `x:path` under `expr`'s casts and parentheses as
/// `variant_get(x, '$.path')`, and gives the extraction's name: `x:path`
/// with the path as `variant_get` prints it, then `::TYPE` for each cast
/// (`TRY_CAST(... AS TYPE)` for a `TRY_CAST`), so that one extraction
/// written two ways (`v:a['b']::int`, `CAST((v:a.b) AS INT)`) is one
/// expression to `GROUP BY`. `None`, and `expr` left as it was, where
/// `expr` is not one.
fn extraction(expr: &mut Expr) -> Result<Option<String>> {
    Ok(match expr {
        Expr::JsonAccess { .. } => {
            let Expr::JsonAccess { value, path } = std::mem::replace(expr, placeholder()) else {
                unreachable!("matched above");
            };
            // `v:a:b` is one path, `$.a.b`.
            let mut paths = vec![path];
            let mut value = *value;
            while let Expr::JsonAccess { value: inner, path } = value {
                paths.push(path);
                value = *inner;
            }
            let mut segments = Vec::new();
            for path in paths.iter().rev() {
                push_segments(path, &mut segments)?;
            }
            let path = VariantPath::new(segments).to_string();
            let steps = path.strip_prefix("$").unwrap_or(&path);
            let name = format!("{value}:{}", steps.strip_prefix('.').unwrap_or(steps));
            *expr = call(
                "variant_get",
                [value, Expr::value(Value::SingleQuotedString(path))],
            );
            Some(name)
        }
        Expr::Nested(inner) => {
            regroup_colons(inner);
            extraction(inner)?
        }
        Expr::Cast {
            kind,
            expr: inner,
            data_type,
            format: None,
            array: false,
        } => {
            // What `CAST(... AS t)` holds is read whole, as below the top.
            regroup_colons(inner);
            extraction(inner)?.map(|name| match kind {
                CastKind::TryCast => format!("TRY_CAST({name} AS {data_type})"),
                CastKind::SafeCast => format!("SAFE_CAST({name} AS {data_type})"),
                CastKind::Cast | CastKind::DoubleColon => format!("{name}::{data_type}"),
            })
        }
        _ => None,
    })
}

/// The steps of one `:` path, taken from the tree.
fn push_segments(path: &JsonPath, segments: &mut Vec<PathSegment>) -> Result<()> {
    for element in &path.path {
        let segment = match element {
            // Spark reads `` v:`p.q` `` as the path `p.q`, not the name:
            // refused rather than read otherwise in silence.
            JsonPathElem::Dot { key, quoted: true } if key.contains(['.', '[']) => {
                return plan_err!(
                    "`{key}`: after `:`, a quoted name holding . or [ is read by Spark as a path; write ['{}'] for the one field, or the path unquoted",
                    key.replace('\'', "''")
                );
            }
            JsonPathElem::Dot { key, .. } => PathSegment::Field(key.clone()),
            JsonPathElem::Bracket { key } | JsonPathElem::ColonBracket { key } => bracket(key)?,
        };
        segments.push(segment);
    }
    Ok(())
}

/// A bracket's step: a name in quotes (`['a b']`, `["a b"]`) or an
/// element's index (`[0]`).
fn bracket(key: &Expr) -> Result<PathSegment> {
    let refused = || {
        plan_datafusion_err!(
            "[{key}]: after `:`, a bracket holds a field's name in quotes, ['a b'], or an element's index, [0]"
        )
    };
    match key {
        Expr::Value(value) => match &value.value {
            Value::SingleQuotedString(name) | Value::DoubleQuotedString(name) => field(name),
            Value::Number(digits, _) if digits.bytes().all(|b| b.is_ascii_digit()) => {
                digits.parse().map(PathSegment::Index).map_err(|_| {
                    plan_datafusion_err!("[{digits}]: an element's index is at most {}", usize::MAX)
                })
            }
            _ => Err(refused()),
        },
        // `["a b"]`, which the generic dialect reads as a quoted name.
        Expr::Identifier(Ident {
            value,
            quote_style: Some(_),
            ..
        }) => field(value),
        _ => Err(refused()),
    }
}

/// The step of a name in brackets, its escapes read as `variant_get`'s
/// path reads them (`['a\u0000']` is `$['a\u0000']`), as Spark reads its
/// string literals.
fn field(name: &str) -> Result<PathSegment> {
    vshred::path::unescape_name(name)
        .map(PathSegment::Field)
        .map_err(|e| plan_datafusion_err!("[{name:?}]: {}", e.message()))
}

/// A call of the function `name`.
fn call<const N: usize>(name: &str, args: [Expr; N]) -> Expr {
    let args = args
        .into_iter()
        .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
        .collect();
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args,
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}
