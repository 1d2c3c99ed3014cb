//! An expression of operators read again in the order written, with the
//! ranks SQL gives them: what [`crate::colon`] and [`crate::distinct_from`]
//! mend in sqlparser's trees.
//!
//! The expression is taken apart into its operands and operators, in the
//! order written (`regroup`), and put together again by precedence
//! climbing: `:path` and `::type` bind first, then the operators by
//! sqlparser's ranks (its generic dialect's), those of one rank from the
//! left; `IS [NOT] DISTINCT FROM` ranks as `IS` does, above `NOT`, `AND`
//! and `OR`. A parenthesized operand, `(a AND b)`, is an operand: the
//! tree keeps its parentheses.

use std::iter::Peekable;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastFormat, CastKind, DataType, Expr, JsonPath, UnaryOperator, Value,
};

/// Which operators are taken apart.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Reach {
    /// Those that may stand under a `:` (ranked above `:`, 21, by
    /// sqlparser; those ranked below it are never under one).
    UnderColon,
    /// All of those this module knows, the comparisons, `IS`, `NOT`,
    /// `AND` and `OR` too.
    All,
}

/// What binds tighter than any operator: `:path` and `::type`, whose
/// rank sqlparser gives `::`.
const POSTFIX: u8 = 50;

/// sqlparser's rank of `IS`.
pub(crate) const IS: u8 = 17;

/// An expression of operators, one part at a time in the order written.
enum Item {
    /// What no operator here takes apart (a name, a call, `(...)`).
    Operand(Expr),
    /// `-`, `+`, `~`, `NOT`, and the rank of what they take.
    Prefix(UnaryOperator, u8),
    /// A binary operator and its rank.
    Infix(Infix, u8),
    /// What follows its operand, and its rank.
    Postfix(Postfix, u8),
}

enum Infix {
    Binary(BinaryOperator),
    AtTimeZone,
    DistinctFrom,
    NotDistinctFrom,
}

enum Postfix {
    Path(JsonPath),
    Cast {
        data_type: DataType,
        array: bool,
        format: Option<CastFormat>,
    },
    /// `IS NULL`, `IS NOT TRUE`, ...: the node's maker.
    Is(MakeTest),
}

/// `Expr::IsNull`, `Expr::IsNotTrue`, ...
type MakeTest = fn(Box<Expr>) -> Expr;

/// The rank sqlparser gives a binary operator this module takes apart.
pub(crate) fn rank(op: &BinaryOperator, reach: Reach) -> Option<u8> {
    use BinaryOperator as Op;
    let ranked = match op {
        Op::Or => 5,
        Op::And => 10,
        Op::Eq
        | Op::NotEq
        | Op::Lt
        | Op::LtEq
        | Op::Gt
        | Op::GtEq
        | Op::Spaceship
        | Op::PGRegexMatch
        | Op::PGRegexIMatch
        | Op::PGRegexNotMatch
        | Op::PGRegexNotIMatch
        | Op::PGLikeMatch
        | Op::PGILikeMatch
        | Op::PGNotLikeMatch
        | Op::PGNotILikeMatch => 20,
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
    };
    (reach == Reach::All || ranked > 20).then_some(ranked)
}

/// The rank of what a prefix operator takes, as sqlparser parses it.
fn prefix_rank(op: &UnaryOperator, reach: Reach) -> Option<u8> {
    match op {
        UnaryOperator::Minus | UnaryOperator::Plus => Some(40),
        UnaryOperator::BitwiseNot => Some(30),
        UnaryOperator::Not if reach == Reach::All => Some(15),
        _ => None,
    }
}

/// The rank of `expr`'s operator, if it is one taken apart.
pub(crate) fn operator_rank(expr: &Expr, reach: Reach) -> Option<u8> {
    match expr {
        Expr::BinaryOp { op, .. } => rank(op, reach),
        Expr::UnaryOp { op, .. } => prefix_rank(op, reach),
        Expr::AtTimeZone { .. } => Some(41),
        Expr::JsonAccess { .. }
        | Expr::Cast {
            kind: CastKind::DoubleColon,
            ..
        } => Some(POSTFIX),
        Expr::IsDistinctFrom(..) | Expr::IsNotDistinctFrom(..) if reach == Reach::All => Some(IS),
        e if reach == Reach::All && test_parts(e).is_some() => Some(IS),
        _ => None,
    }
}

/// Whether `expr` or an operand of its operators taken apart, down the
/// operators, is one that `found` is true of.
pub(crate) fn holds(expr: &Expr, reach: Reach, found: &dyn Fn(&Expr) -> bool) -> bool {
    if found(expr) {
        return true;
    }
    if operator_rank(expr, reach).is_none() {
        return false;
    }
    let inner = |e: &Expr| holds(e, reach, found);
    match expr {
        Expr::BinaryOp { left, right, .. }
        | Expr::IsDistinctFrom(left, right)
        | Expr::IsNotDistinctFrom(left, right) => inner(left) || inner(right),
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => inner(timestamp) || inner(time_zone),
        Expr::UnaryOp { expr, .. }
        | Expr::JsonAccess { value: expr, .. }
        | Expr::Cast { expr, .. } => inner(expr),
        e => test_parts(e).is_some_and(|(operand, _)| inner(operand)),
    }
}

/// The operand of an `IS NULL`, `IS NOT TRUE`, ... test, and the maker
/// of that test.
fn test_parts(expr: &Expr) -> Option<(&Expr, MakeTest)> {
    Some(match expr {
        Expr::IsNull(e) => (e, Expr::IsNull),
        Expr::IsNotNull(e) => (e, Expr::IsNotNull),
        Expr::IsTrue(e) => (e, Expr::IsTrue),
        Expr::IsNotTrue(e) => (e, Expr::IsNotTrue),
        Expr::IsFalse(e) => (e, Expr::IsFalse),
        Expr::IsNotFalse(e) => (e, Expr::IsNotFalse),
        Expr::IsUnknown(e) => (e, Expr::IsUnknown),
        Expr::IsNotUnknown(e) => (e, Expr::IsNotUnknown),
        _ => return None,
    })
}

/// `expr` taken apart down the operators `reach` takes, and put together
/// again as the module's documentation says.
pub(crate) fn regroup(expr: Expr, reach: Reach) -> Expr {
    let mut items = Vec::new();
    flatten(expr, reach, &mut items);
    rebuild(&mut items.into_iter().peekable(), 0)
}

/// The parts of `expr`, in the order written, onto `items`.
fn flatten(expr: Expr, reach: Reach, items: &mut Vec<Item>) {
    let Some(ranked) = operator_rank(&expr, reach) else {
        items.push(Item::Operand(expr));
        return;
    };
    let infix = |left: Expr, infix: Infix, right: Expr, items: &mut Vec<Item>| {
        flatten(left, reach, items);
        items.push(Item::Infix(infix, ranked));
        flatten(right, reach, items);
    };
    match expr {
        Expr::BinaryOp { left, op, right } => infix(*left, Infix::Binary(op), *right, items),
        Expr::IsDistinctFrom(left, right) => infix(*left, Infix::DistinctFrom, *right, items),
        Expr::IsNotDistinctFrom(left, right) => infix(*left, Infix::NotDistinctFrom, *right, items),
        Expr::AtTimeZone {
            timestamp,
            time_zone,
        } => infix(*timestamp, Infix::AtTimeZone, *time_zone, items),
        Expr::UnaryOp { op, expr } => {
            items.push(Item::Prefix(op, ranked));
            flatten(*expr, reach, items);
        }
        Expr::JsonAccess { value, path } => {
            flatten(*value, reach, items);
            items.push(Item::Postfix(Postfix::Path(path), ranked));
        }
        Expr::Cast {
            expr,
            data_type,
            array,
            format,
            ..
        } => {
            flatten(*expr, reach, items);
            let cast = Postfix::Cast {
                data_type,
                array,
                format,
            };
            items.push(Item::Postfix(cast, ranked));
        }
        test => {
            let (operand, make) = test_parts(&test).expect("operator_rank ranks no other node");
            flatten(operand.clone(), reach, items);
            items.push(Item::Postfix(Postfix::Is(make), ranked));
        }
    }
}

/// The expression of `items` whose operators rank above `above`, by
/// precedence climbing.
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
            Some(Item::Postfix(_, ranked)) if *ranked > above => {
                let Some(Item::Postfix(postfix, _)) = items.next() else {
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
                    Postfix::Is(make) => make(Box::new(built)),
                };
            }
            Some(Item::Infix(_, ranked)) if *ranked > above => {
                let Some(Item::Infix(infix, ranked)) = items.next() else {
                    unreachable!("peeked");
                };
                let left = Box::new(built);
                let right = Box::new(rebuild(items, ranked));
                built = match infix {
                    Infix::Binary(op) => Expr::BinaryOp { left, op, right },
                    Infix::AtTimeZone => Expr::AtTimeZone {
                        timestamp: left,
                        time_zone: right,
                    },
                    Infix::DistinctFrom => Expr::IsDistinctFrom(left, right),
                    Infix::NotDistinctFrom => Expr::IsNotDistinctFrom(left, right),
                };
            }
            _ => return built,
        }
    }
}

/// What a node is left as while it is taken apart.
pub(crate) fn placeholder() -> Expr {
    Expr::value(Value::Null)
}
