//! Filters DataFusion pushes to the scan, as the core's [`Predicate`]s
//! that prune files, row groups and pages.
//!
//! A filter translates when it is made of `=`, `<`, `<=`, `>`, `>=`, `IN`,
//! `BETWEEN`, `IS NOT NULL`, `AND` and `OR` over `variant_get(v, 'path',
//! 'type')` (or an ordinary column) and constants. A typed path is the
//! core's [`Operand::PathAs`], compared as converted (`0.125` read as a
//! `bigint` is `0`), so statistics are converted before they are compared
//! and a bloom filter is asked only where the conversion changes no value.
//! Pruning must never drop
//! a row the filter keeps, so the translation is conservative: a value
//! that does not convert to the requested type is null in SQL, and fails
//! every comparison, as it fails the core's comparison of a value of
//! another kind; `IS NULL` is true of such a value but not of the core's
//! `is null`, so it translates only for `variant_get` as `variant`. The
//! scan returns every row of what it reads: DataFusion applies the filter
//! itself ([`TableProviderFilterPushDown::Inexact`]).
//!
//! A join's runtime filter (its dynamic filter, once the other side is
//! read) translates likewise, from the physical expression over the
//! scan's outputs ([`runtime_predicate`]).
//!
//! [`TableProviderFilterPushDown::Inexact`]: datafusion::logical_expr::TableProviderFilterPushDown::Inexact

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator, expr::InList};
use datafusion::physical_expr::expressions::{
    BinaryExpr as PhysicalBinary, CastExpr, Column as PhysicalColumn, DynamicFilterPhysicalExpr,
    InListExpr, Literal as PhysicalLiteral,
};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use vshred::parquet::Projected;
use vshred::path::VariantPath;
use vshred::predicate::{Comparison, Literal, Op, Operand, Predicate};
use vshred::shred::ShreddingSchema;
use vshred::variant::VariantDecimal;

use crate::decimal_double::DecimalToDouble;
use crate::functions::{RaiseVariantFailure, VariantGet, path_and_type};

/// A filter as a predicate on paths of one Variant column (named first,
/// `None` when it reads ordinary columns alone), if it translates.
pub fn to_predicate(expr: &Expr) -> Option<(Option<String>, Predicate)> {
    let mut column = None;
    let predicate = translate(expr, &mut column)?;
    Some((column, predicate))
}

/// The parts of `filters` that translate, as one predicate over the
/// Variant column most of them read (the core prunes by one at a time).
pub fn combine(filters: &[Expr]) -> Option<(String, Predicate)> {
    let translated: Vec<_> = filters.iter().filter_map(to_predicate).collect();
    let mut columns: Vec<&String> = translated.iter().filter_map(|(c, _)| c.as_ref()).collect();
    columns.sort();
    let chosen = columns
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| run.len())
        .map(|run| run[0].clone());
    let parts: Vec<Predicate> = translated
        .into_iter()
        .filter(|(c, _)| c.is_none() || c == &chosen)
        .map(|(_, p)| p)
        .collect();
    let predicate = match parts.len() {
        0 => return None,
        1 => parts.into_iter().next()?,
        _ => Predicate::And(parts),
    };
    // With no Variant column in it, the filter reads ordinary columns; the
    // name is then unused.
    Some((chosen.unwrap_or_default(), predicate))
}

/// A runtime filter (what a join's dynamic filter holds once its other
/// side is read: bounds and `IN` the keys) over a scan's `outputs`, as a
/// predicate on paths of one Variant column, if some of it translates.
/// Parts of an `AND` that do not translate are left out: pruning by less
/// of a filter is still sound. `false` (an empty other side) prunes
/// everything.
pub fn runtime_predicate(
    expr: &Arc<dyn PhysicalExpr>,
    outputs: &[(String, Projected)],
) -> Option<(String, Predicate)> {
    let mut column = None;
    let predicate = runtime(expr, outputs, &mut column)?;
    Some((column.unwrap_or_default(), predicate))
}

fn runtime(
    expr: &Arc<dyn PhysicalExpr>,
    outputs: &[(String, Projected)],
    column: &mut Option<String>,
) -> Option<Predicate> {
    if let Some(dynamic) = expr.downcast_ref::<DynamicFilterPhysicalExpr>() {
        return runtime(&dynamic.current().ok()?, outputs, column);
    }
    if let Some(binary) = expr.downcast_ref::<PhysicalBinary>() {
        return match binary.op() {
            Operator::And => {
                let mut parts: Vec<Predicate> = [binary.left(), binary.right()]
                    .into_iter()
                    .filter_map(|e| runtime(e, outputs, column))
                    .collect();
                match parts.len() {
                    0 => None,
                    1 => parts.pop(),
                    _ => Some(Predicate::And(parts)),
                }
            }
            Operator::Or => Some(Predicate::Or(vec![
                runtime(binary.left(), outputs, column)?,
                runtime(binary.right(), outputs, column)?,
            ])),
            op => compared(
                binary.left(),
                comparison(*op)?,
                binary.right(),
                &mut |e| runtime_operand(e, outputs, column),
                &runtime_literal,
            ),
        };
    }
    if let Some(list) = expr.downcast_ref::<InListExpr>() {
        if list.negated() {
            return None;
        }
        let operand = runtime_operand(list.expr(), outputs, column)?;
        return one_of(operand, list.list().iter().map(runtime_literal));
    }
    match expr.downcast_ref::<PhysicalLiteral>()?.value() {
        ScalarValue::Boolean(Some(false)) => Some(Predicate::Or(Vec::new())),
        _ => None,
    }
}

/// A physical constant as the core's literal, if it has one.
fn runtime_literal(expr: &Arc<dyn PhysicalExpr>) -> Option<Literal> {
    scalar(expr.downcast_ref::<PhysicalLiteral>()?.value())
}

/// `left OP right`, one side an operand and the other a literal, in
/// either order (`5 < x` is `x > 5`): of logical and physical expressions.
fn compared<E: ?Sized>(
    left: &E,
    op: Op,
    right: &E,
    operand: &mut impl FnMut(&E) -> Option<Operand>,
    literal: &impl Fn(&E) -> Option<Literal>,
) -> Option<Predicate> {
    let (operand, op, literal) = match (operand(left), literal(right)) {
        (Some(o), Some(l)) => (o, op, l),
        _ => (operand(right)?, flipped(op), literal(left)?),
    };
    Some(Predicate::Compare(Comparison {
        operand,
        op,
        literal,
    }))
}

/// `operand IN (literals)`, as the core has it: an `or` of `==`; `None`
/// when a literal does not translate.
fn one_of(
    operand: Operand,
    literals: impl IntoIterator<Item = Option<Literal>>,
) -> Option<Predicate> {
    literals
        .into_iter()
        .map(|literal| {
            Some(Predicate::Compare(Comparison {
                operand: operand.clone(),
                op: Op::Eq,
                literal: literal?,
            }))
        })
        .collect::<Option<Vec<_>>>()
        .map(Predicate::Or)
}

/// What a runtime comparison reads: an output of the scan that is a path
/// of `variant_get` or an ordinary column.
fn runtime_operand(
    expr: &Arc<dyn PhysicalExpr>,
    outputs: &[(String, Projected)],
    variant: &mut Option<String>,
) -> Option<Operand> {
    if let Some(cast) = expr.downcast_ref::<CastExpr>() {
        let operand = runtime_operand(cast.expr(), outputs, variant)?;
        return matches!(&operand, Operand::PathAs(_, t) if keeps_values(t, cast.cast_type()))
            .then_some(operand);
    }
    if let Some(call) = expr.downcast_ref::<ScalarFunctionExpr>()
        && call.fun().inner().is::<RaiseVariantFailure>()
    {
        return runtime_operand(call.args().first()?, outputs, variant);
    }
    let index = expr.downcast_ref::<PhysicalColumn>()?.index();
    match &outputs.get(index)?.1 {
        Projected::Column(name) => Some(Operand::Column(name.clone())),
        Projected::Path {
            column,
            path,
            as_type,
            ..
        } => path_operand(column, path.clone(), as_type.clone(), variant),
        Projected::Json(_) | Projected::Explode { .. } => None,
    }
}

fn translate(expr: &Expr, column: &mut Option<String>) -> Option<Predicate> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And | Operator::Or => {
                let parts = vec![translate(left, column)?, translate(right, column)?];
                Some(if *op == Operator::And {
                    Predicate::And(parts)
                } else {
                    Predicate::Or(parts)
                })
            }
            _ => compared(
                left.as_ref(),
                comparison(*op)?,
                right.as_ref(),
                &mut |e| operand(e, column),
                &literal,
            ),
        },
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => {
            let operand = operand(expr, column)?;
            let compare = |op, l: &Expr| {
                Some(Predicate::Compare(Comparison {
                    operand: operand.clone(),
                    op,
                    literal: literal(l)?,
                }))
            };
            Some(Predicate::And(vec![
                compare(Op::Ge, low)?,
                compare(Op::Le, high)?,
            ]))
        }
        Expr::InList(InList {
            expr,
            list,
            negated: false,
        }) => {
            let operand = operand(expr, column)?;
            one_of(operand, list.iter().map(literal))
        }
        Expr::IsNotNull(inner) => {
            let operand = operand(inner, column)?;
            Some(Predicate::Not(Box::new(Predicate::IsNull(operand))))
        }
        Expr::IsNull(inner) => match operand(inner, column)? {
            operand @ Operand::Path(_) => Some(Predicate::IsNull(operand)),
            _ => None,
        },
        _ => None,
    }
}

/// What a comparison reads: a path of `variant_get` (with the type asked
/// for) or an ordinary column. Every path must be of the same column.
fn operand(expr: &Expr, variant: &mut Option<String>) -> Option<Operand> {
    match expr {
        // Coercion widens a result to the constant's type.
        Expr::Cast(cast) => {
            let operand = self::operand(&cast.expr, variant)?;
            matches!(&operand, Operand::PathAs(_, t) if keeps_values(t, cast.field.data_type()))
                .then_some(operand)
        }
        // A decimal as the nearest double, as the core compares one.
        Expr::ScalarFunction(call) if call.func.inner().is::<DecimalToDouble>() => {
            let operand = self::operand(call.args.first()?, variant)?;
            matches!(
                &operand,
                Operand::PathAs(_, ShreddingSchema::Decimal { .. })
            )
            .then_some(operand)
        }
        Expr::Column(c) => Some(Operand::Column(c.name.clone())),
        // `variant_get` to a type a value may fail to convert to, as the
        // optimizer writes it.
        Expr::ScalarFunction(call) if call.func.inner().is::<RaiseVariantFailure>() => {
            operand(call.args.first()?, variant)
        }
        Expr::ScalarFunction(call) if call.func.inner().is::<VariantGet>() => {
            let [Expr::Column(c), constants @ ..] = call.args.as_slice() else {
                return None;
            };
            let constants: Vec<_> = constants
                .iter()
                .map(|e| match e {
                    Expr::Literal(value, _) => Some(value),
                    _ => None,
                })
                .collect();
            let (path, as_type) = path_and_type(call.func.name(), &constants).ok()?;
            path_operand(&c.name, path, as_type, variant)
        }
        _ => None,
    }
}

/// A path of Variant column `column` read as `as_type`, as an operand:
/// every path of a predicate must be of the same column, and our literals
/// have no dates, times, structs or lists.
fn path_operand(
    column: &str,
    path: VariantPath,
    as_type: ShreddingSchema,
    variant: &mut Option<String>,
) -> Option<Operand> {
    if matches!(
        as_type,
        ShreddingSchema::Date
            | ShreddingSchema::Time
            | ShreddingSchema::Timestamp { .. }
            | ShreddingSchema::Object(_)
            | ShreddingSchema::Array(_)
    ) {
        return None;
    }
    match variant {
        Some(name) if name != column => return None,
        _ => *variant = Some(column.to_string()),
    }
    Some(match as_type {
        ShreddingSchema::Variant => Operand::Path(path),
        // Compared as converted: `1.5` read as a bigint is 1.
        _ => Operand::PathAs(path, as_type),
    })
}

/// Whether a cast of `variant_get`'s `from` values to `to` leaves each
/// value that it does not make null (out of range) as it was, so that the
/// typed path compares for it: integers to integers and decimals, numbers
/// to doubles where DataFusion's cast rounds as the core's comparison with
/// a double does (every integer, floats), decimals to decimals of as many
/// decimal places. Not a narrowing cast a
/// query wrote (`CAST(x AS BIGINT)` of a double truncates).
fn keeps_values(from: &ShreddingSchema, to: &DataType) -> bool {
    use ShreddingSchema as S;
    let integer = matches!(from, S::Int8 | S::Int16 | S::Int32 | S::Int64);
    match to {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => integer,
        DataType::Float32 => matches!(from, S::Int8 | S::Int16 | S::Float),
        // A decimal's cast is rewritten to the nearest double
        // (`DecimalToDouble`), above.
        DataType::Float64 => matches!(from, S::Float | S::Double) || integer,
        DataType::Decimal32(_, to_scale)
        | DataType::Decimal64(_, to_scale)
        | DataType::Decimal128(_, to_scale)
        | DataType::Decimal256(_, to_scale) => match from {
            S::Decimal { scale, .. } => i16::from(*to_scale) >= i16::from(*scale),
            _ => integer && *to_scale >= 0,
        },
        _ => false,
    }
}

fn literal(expr: &Expr) -> Option<Literal> {
    match expr {
        Expr::Literal(value, _) => scalar(value),
        _ => None,
    }
}

/// A constant as the core's literal, if it has one.
fn scalar(value: &ScalarValue) -> Option<Literal> {
    let int = |n: i64| Some(Literal::Number(VariantDecimal::try_new(n as i128, 0).ok()?));
    match value {
        ScalarValue::Int8(Some(n)) => int(*n as i64),
        ScalarValue::Int16(Some(n)) => int(*n as i64),
        ScalarValue::Int32(Some(n)) => int(*n as i64),
        ScalarValue::Int64(Some(n)) => int(*n),
        ScalarValue::UInt8(Some(n)) => int(*n as i64),
        ScalarValue::UInt16(Some(n)) => int(*n as i64),
        ScalarValue::UInt32(Some(n)) => int(*n as i64),
        ScalarValue::UInt64(Some(n)) => int(i64::try_from(*n).ok()?),
        ScalarValue::Float32(Some(f)) => Some(Literal::Double(*f as f64)),
        ScalarValue::Float64(Some(f)) => Some(Literal::Double(*f)),
        ScalarValue::Decimal128(Some(n), _, scale) => Some(Literal::Number(
            VariantDecimal::try_new(*n, u8::try_from(*scale).ok()?).ok()?,
        )),
        ScalarValue::Boolean(Some(b)) => Some(Literal::Bool(*b)),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Some(Literal::String(s.clone())),
        _ => None,
    }
}

fn comparison(op: Operator) -> Option<Op> {
    Some(match op {
        Operator::Eq => Op::Eq,
        Operator::Lt => Op::Lt,
        Operator::LtEq => Op::Le,
        Operator::Gt => Op::Gt,
        Operator::GtEq => Op::Ge,
        _ => return None,
    })
}

/// `lit OP x` as `x OP' lit`.
fn flipped(op: Op) -> Op {
    match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        other => other,
    }
}
