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
//!   `:` is taken apart into its operands and operators, in the order
//!   written, and put together again with `:` and `::` binding first and
//!   the operators as sqlparser ranks them (`1 + ((v:x::int) * 2)`). A
//!   parenthesized operand, `(a || b):x`, is left as written.

use std::iter::Peekable;
use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err, plan_err};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastFormat, CastKind, DataType, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, JsonPath, JsonPathElem, ObjectName,
    UnaryOperator, Value, VisitorMut,
};
use vshred::path::{PathSegment, VariantPath};

/// Rewrites every `x:path` as `variant_get(x, '$.path')`
/// ([`crate::statements::rewrite_expressions`]).
pub(crate) struct Colons;

impl VisitorMut for Colons {
    type Break = Box<DataFusionError>;

    /// Before an expression's parts are visited, so that an expression of
    /// operators is seen whole, from its top.
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if holds_colon(expr) {
            let mut items = Vec::new();
            flatten(std::mem::replace(expr, placeholder()), &mut items);
            *expr = rebuild(&mut items.into_iter().peekable(), 0);
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

/// What binds tighter than any operator: `:path` and `::type`, whose
/// rank sqlparser gives `::`.
const POSTFIX: u8 = 50;

/// An expression of operators, one part at a time in the order written.
enum Item {
    /// What no operator here takes apart (a name, a call, `(...)`).
    Operand(Expr),
    /// `-`, `+`, `~`, and the rank of what they take.
    Prefix(UnaryOperator, u8),
    /// A binary operator and its rank.
    Infix(Infix, u8),
    /// `:path` or `::type`.
    Postfix(Postfix),
}

enum Infix {
    Binary(BinaryOperator),
    AtTimeZone,
}

enum Postfix {
    Path(JsonPath),
    Cast {
        data_type: DataType,
        array: bool,
        format: Option<CastFormat>,
    },
}

/// The rank sqlparser gives a binary operator that may stand under a `:`
/// (`:` ranks 21; those ranked below it are never under one).
fn rank(op: &BinaryOperator) -> Option<u8> {
    use BinaryOperator as Op;
    Some(match op {
        Op::BitwiseOr => 21,
        Op::BitwiseXor | Op::PGBitwiseXor | Op::PGBitwiseShiftLeft | Op::PGBitwiseShiftRight => 22,
        Op::BitwiseAnd => 23,
        Op::Xor => 24,
        Op::Plus | Op::Minus => 30,
        Op::Multiply
        | Op::Divide
        | Op::Modulo
        | Op::StringConcat
        | Op::DuckIntegerDivide
        | Op::MyIntegerDivide => 40,
        _ => return None,
    })
}

/// The rank of what a prefix operator takes, as sqlparser parses it.
fn prefix_rank(op: &UnaryOperator) -> Option<u8> {
    match op {
        UnaryOperator::Minus | UnaryOperator::Plus => Some(40),
        UnaryOperator::BitwiseNot => Some(30),
        _ => None,
    }
}

/// Whether `expr` is an operator this module takes apart, and holds a
/// `:` among its operators.
fn holds_colon(expr: &Expr) -> bool {
    match expr {
        Expr::JsonAccess { .. } => true,
        Expr::BinaryOp { left, op, right } if rank(op).is_some() => {
            holds_colon(left) || holds_colon(right)
        }
        Expr::UnaryOp { op, expr } if prefix_rank(op).is_some() => holds_colon(expr),
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => holds_colon(timestamp) || holds_colon(time_zone),
        Expr::Cast {
            kind: CastKind::DoubleColon,
            expr,
            ..
        } => holds_colon(expr),
        _ => false,
    }
}

/// The parts of `expr`, in the order written, onto `items`.
fn flatten(expr: Expr, items: &mut Vec<Item>) {
    match expr {
        Expr::BinaryOp { left, op, right } if rank(&op).is_some() => {
            let ranked = rank(&op).unwrap_or_default();
            flatten(*left, items);
            items.push(Item::Infix(Infix::Binary(op), ranked));
            flatten(*right, items);
        }
        Expr::UnaryOp { op, expr } if prefix_rank(&op).is_some() => {
            let ranked = prefix_rank(&op).unwrap_or_default();
            items.push(Item::Prefix(op, ranked));
            flatten(*expr, items);
        }
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => {
            flatten(*timestamp, items);
            // sqlparser's rank of `AT TIME ZONE`.
            items.push(Item::Infix(Infix::AtTimeZone, 41));
            flatten(*time_zone, items);
        }
        Expr::JsonAccess { value, path } => {
            flatten(*value, items);
            items.push(Item::Postfix(Postfix::Path(path)));
        }
        Expr::Cast {
            kind: CastKind::DoubleColon,
            expr,
            data_type,
            array,
            format,
        } => {
            flatten(*expr, items);
            items.push(Item::Postfix(Postfix::Cast {
                data_type,
                array,
                format,
            }));
        }
        operand => items.push(Item::Operand(operand)),
    }
}

/// The expression of `items` whose operators rank above `above`, by
/// precedence climbing: `:` and `::` bind first, then the operators by
/// rank, those of one rank from the left.
fn rebuild(items: &mut Peekable<std::vec::IntoIter<Item>>, above: u8) -> Expr {
    let mut built = match items.next() {
        Some(Item::Prefix(op, ranked)) => Expr::UnaryOp {
            op,
            expr: Box::new(rebuild(items, ranked)),
        },
        Some(Item::Operand(operand)) => operand,
        // An expression taken apart starts with an operand or a prefix,
        // and each operator is followed by one.
        _ => unreachable!("an operator where an operand was"),
    };
    loop {
        match items.peek() {
            Some(Item::Postfix(_)) if POSTFIX > above => {
                let Some(Item::Postfix(postfix)) = items.next() else {
                    unreachable!("peeked");
                };
                built = match postfix {
                    Postfix::Path(path) => Expr::JsonAccess {
                        value: Box::new(built),
                        path,
                    },
                    Postfix::Cast {
                        data_type,
                        array,
                        format,
                    } => Expr::Cast {
                        kind: CastKind::DoubleColon,
                        expr: Box::new(built),
                        data_type,
                        array,
                        format,
                    },
                };
            }
            Some(Item::Infix(_, ranked)) if *ranked > above => {
                let Some(Item::Infix(infix, ranked)) = items.next() else {
                    unreachable!("peeked");
                };
                let right = Box::new(rebuild(items, ranked));
                built = match infix {
                    Infix::Binary(op) => Expr::BinaryOp {
                        left: Box::new(built),
                        op,
                        right,
                    },
                    Infix::AtTimeZone => Expr::AtTimeZone {
                        timestamp: Box::new(built),
                        time_zone: right,
                    },
                };
            }
            _ => return built,
        }
    }
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

/// What a node is left as while it is taken apart.
fn placeholder() -> Expr {
    Expr::value(Value::Null)
}
