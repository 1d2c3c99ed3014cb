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
//!   below `+`, `*` and `||`, so that `1 + v:x::int` is parsed as
//!   `((1 + v):x)::int`; the operand the path was meant for is put back
//!   under it (`1 + (v:x::int)`). A parenthesized operand,
//!   `(a || b):x`, is left as written.

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err};
use datafusion::sql::parser::{CopyToSource, Statement};
use datafusion::sql::sqlparser::ast::{
    CastKind, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList,
    FunctionArguments, Ident, JsonPath, JsonPathElem, ObjectName, Value, VisitMut, VisitorMut,
};
use vshred::path::{PathSegment, VariantPath};

/// Rewrites every `x:path` in `statement` as `variant_get(x, '$.path')`.
pub(crate) fn rewrite(statement: &mut Statement) -> Result<()> {
    let mut visitor = Colons;
    let found = match statement {
        Statement::Statement(statement) => statement.visit(&mut visitor),
        Statement::CopyTo(copy) => match &mut copy.source {
            CopyToSource::Query(query) => query.visit(&mut visitor),
            CopyToSource::Relation(_) => ControlFlow::Continue(()),
        },
        Statement::Explain(explain) => return rewrite(&mut explain.statement),
        Statement::CreateExternalTable(_) | Statement::Reset(_) => ControlFlow::Continue(()),
    };
    match found {
        ControlFlow::Break(e) => Err(*e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Colons;

impl VisitorMut for Colons {
    type Break = Box<DataFusionError>;

    /// Before an expression's parts are visited, so that a chain of
    /// operators over a `:` is seen whole.
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if let Some(captured) = captured_operand(expr) {
            // `((1 + v):x)::int`: `1 + ((v):x)::int`, whose right side
            // is visited next (and rotated again if it is `2 * v`).
            let operator = std::mem::replace(captured, placeholder());
            match operator {
                Expr::BinaryOp { left, op, right } => {
                    *captured = *right;
                    let chain = std::mem::replace(expr, placeholder());
                    *expr = Expr::BinaryOp {
                        left,
                        op,
                        right: Box::new(chain),
                    };
                }
                Expr::UnaryOp { op, expr: operand } => {
                    *captured = *operand;
                    let chain = std::mem::replace(expr, placeholder());
                    *expr = Expr::UnaryOp {
                        op,
                        expr: Box::new(chain),
                    };
                }
                other => *captured = other,
            }
            return ControlFlow::Continue(());
        }
        if let Expr::JsonAccess { .. } = expr {
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
                if let Err(e) = push_segments(path, &mut segments) {
                    return ControlFlow::Break(Box::new(e));
                }
            }
            *expr = variant_get(value, VariantPath::new(segments));
        }
        ControlFlow::Continue(())
    }
}

/// The operand of the innermost `:` of a chain of `:` and `::` that
/// starts at `expr`, where sqlparser's ranking put an operator there (a
/// binary or unary operator, which binds less tightly than `:` in Spark).
fn captured_operand(expr: &mut Expr) -> Option<&mut Expr> {
    let mut at = expr;
    let mut under_colon = false;
    loop {
        match at {
            Expr::Cast {
                kind: CastKind::DoubleColon,
                expr,
                ..
            } => at = expr,
            Expr::JsonAccess { value, .. } => {
                under_colon = true;
                at = value;
            }
            Expr::BinaryOp { .. } | Expr::UnaryOp { .. } if under_colon => return Some(at),
            _ => return None,
        }
    }
}

/// The steps of one `:` path, taken from the tree.
fn push_segments(path: &JsonPath, segments: &mut Vec<PathSegment>) -> Result<()> {
    for element in &path.path {
        let segment = match element {
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
            Value::SingleQuotedString(name) | Value::DoubleQuotedString(name) => {
                Ok(PathSegment::Field(name.clone()))
            }
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
        }) => Ok(PathSegment::Field(value.clone())),
        _ => Err(refused()),
    }
}

/// `variant_get(value, 'path')`.
fn variant_get(value: Expr, path: VariantPath) -> Expr {
    let path = Expr::value(Value::SingleQuotedString(path.to_string()));
    let args = [value, path]
        .into_iter()
        .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
        .collect();
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new("variant_get")]),
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

/// What a node is left as while it is taken apart.
fn placeholder() -> Expr {
    Expr::value(Value::Null)
}
