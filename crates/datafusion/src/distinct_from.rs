//! `a IS DISTINCT FROM b AND c` as `(a IS DISTINCT FROM b) AND c`.
//!
//! sqlparser 0.62, which DataFusion 55 parses with, reads the right
//! operand of `IS [NOT] DISTINCT FROM` as a whole expression, so an `AND`,
//! `OR` or `XOR` after it is taken into the operand: `x IS DISTINCT FROM
//! true AND k = 'a'` is read `x IS DISTINCT FROM (true AND k = 'a')`, a
//! wrong answer with no error (or, where the operand is not a boolean, a
//! failure to plan: `Int64 AND Boolean`). SQL binds the three looser than
//! `IS`, as sqlparser does since (apache/datafusion-sqlparser-rs#2436);
//! [`DistinctFromOperands`] moves them back out of the operand. A written
//! `(b AND c)` is kept: the tree holds its parentheses.

use std::ops::ControlFlow;

use datafusion::common::DataFusionError;
use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr, Value, VisitorMut};

/// Moves `AND`, `OR` and `XOR` out of the right operand of `IS [NOT]
/// DISTINCT FROM` ([`crate::statements::rewrite_expressions`]).
pub(crate) struct DistinctFromOperands;

impl VisitorMut for DistinctFromOperands {
    type Break = Box<DataFusionError>;

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if let Expr::IsDistinctFrom(_, right) | Expr::IsNotDistinctFrom(_, right) = expr
            && matches!(right.as_ref(), Expr::BinaryOp { op, .. } if looser_than_is(op))
        {
            *expr = match std::mem::replace(expr, Expr::value(Value::Null)) {
                Expr::IsDistinctFrom(left, right) => {
                    hoist(*right, |b| Expr::IsDistinctFrom(left, Box::new(b)))
                }
                Expr::IsNotDistinctFrom(left, right) => {
                    hoist(*right, |b| Expr::IsNotDistinctFrom(left, Box::new(b)))
                }
                _ => unreachable!("matched above"),
            };
        }
        ControlFlow::Continue(())
    }
}

fn looser_than_is(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::And | BinaryOperator::Or | BinaryOperator::Xor
    )
}

/// `operand` with its leftmost operand under `AND`, `OR` and `XOR`, `b`,
/// replaced by `compare(b)`: the comparison binds tighter than they do,
/// and they keep their order among themselves.
fn hoist(operand: Expr, compare: impl FnOnce(Expr) -> Expr) -> Expr {
    match operand {
        Expr::BinaryOp { left, op, right } if looser_than_is(&op) => Expr::BinaryOp {
            left: Box::new(hoist(*left, compare)),
            op,
            right,
        },
        b => compare(b),
    }
}
