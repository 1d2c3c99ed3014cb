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

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err, plan_err};
use datafusion::sql::sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident,
    JsonPath, JsonPathElem, ObjectName, Query, SelectItem, SetExpr, Value, Visit, Visitor,
    VisitorMut,
};
use vshred::path::{PathSegment, VariantPath};

use crate::operators::{Reach, holds, placeholder, regroup};

/// Rewrites every `x:path` as `variant_get(x, '$.path')`
/// ([`crate::statements::rewrite_expressions`]).
pub(crate) struct Colons;

impl VisitorMut for Colons {
    type Break = Box<DataFusionError>;

    /// Before an expression's parts are visited, so that an expression of
    /// operators is seen whole, from its top.
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if holds(expr, Reach::UnderColon, &|e| {
            matches!(e, Expr::JsonAccess { .. })
        }) {
            *expr = regroup(std::mem::replace(expr, placeholder()), Reach::UnderColon);
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

/// Names each column of a `SELECT` that holds an `x:path` (outside a
/// subquery) as it is written, before [`Colons`] rewrites it: `v:k::int`
/// is `v:k::INT`, `sum(v:n::bigint)` is `sum(v:n::BIGINT)`. DataFusion
/// would name it after the call, without a cast's type
/// (`variant_get(t.v,Utf8("$.k"))` for `v:k::int` and `v:k::string`
/// alike, which could then not stand in one `SELECT`). Only the column
/// is named, as `AS` names it: the expression, which `GROUP BY`, `ORDER
/// BY` and a window match, is the same. Spark's name, the path's last
/// name (`k`), is not taken: a DataFusion plan takes a name once, and
/// that name may be a column's of the table (`SELECT id, v:user.id`).
#[derive(Default)]
pub(crate) struct ExtractionNames {
    /// Whether a column was named.
    pub(crate) found: bool,
}

impl VisitorMut for ExtractionNames {
    type Break = Box<DataFusionError>;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<Self::Break> {
        self.found |= name_columns(&mut query.body);
        ControlFlow::Continue(())
    }
}

/// The naming [`ExtractionNames`] describes, of `body`'s `SELECT`s (a
/// query in parentheses is visited as a query of its own); whether a
/// column was named.
fn name_columns(body: &mut SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => {
            let mut named = false;
            for item in &mut select.projection {
                if let SelectItem::UnnamedExpr(expr) = item
                    && holds_extraction(expr)
                {
                    let alias = Ident::with_quote('"', expr.to_string());
                    let expr = std::mem::replace(expr, placeholder());
                    *item = SelectItem::ExprWithAlias { expr, alias };
                    named = true;
                }
            }
            named
        }
        SetExpr::SetOperation { left, right, .. } => name_columns(left) | name_columns(right),
        _ => false,
    }
}

/// Whether `expr` holds an `x:path` outside a subquery.
fn holds_extraction(expr: &Expr) -> bool {
    /// How deep in subqueries the visit is.
    struct Finder(usize);

    impl Visitor for Finder {
        type Break = ();

        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.0 += 1;
            ControlFlow::Continue(())
        }

        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.0 -= 1;
            ControlFlow::Continue(())
        }

        fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
            match expr {
                Expr::JsonAccess { .. } if self.0 == 0 => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }

    expr.visit(&mut Finder(0)).is_break()
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
