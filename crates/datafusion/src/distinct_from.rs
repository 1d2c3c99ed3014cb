//! `a IS DISTINCT FROM b AND c` as `(a IS DISTINCT FROM b) AND c`.
//!
//! sqlparser 0.62, which DataFusion 55 parses with, reads the right
//! operand of `IS [NOT] DISTINCT FROM` as a whole expression, so what
//! follows it is taken into the operand: `x IS DISTINCT FROM true AND k =
//! 'a'` is read `x IS DISTINCT FROM (true AND k = 'a')`, and `k = 'b' AND x
//! IS DISTINCT FROM 5 OR x = 1` is read `k = 'b' AND (x IS DISTINCT FROM
//! (5 OR x = 1))`: a wrong answer with no error (or, where the operand is
//! not a boolean, a failure to plan: `Int64 AND Boolean`). SQL ranks `IS`
//! above `NOT`, `AND` and `OR`, as sqlparser does since
//! (apache/datafusion-sqlparser-rs#2436). `DistinctFromOperands` reads
//! such an expression again in the order written, with those ranks
//! ([`crate::operators`]). A written `(b AND c)` is kept: the tree holds
//! its parentheses.

use std::ops::ControlFlow;

use datafusion::common::DataFusionError;
use datafusion::sql::sqlparser::ast::{Expr, VisitorMut};

use crate::operators::{IS, Reach, holds, operator_rank, placeholder, regroup};

/// Reads again an expression of operators that holds an `IS [NOT]
/// DISTINCT FROM` whose right operand took in operators ranked no higher
/// than `IS` ([`crate::statements::rewrite_expressions`]).
pub(crate) struct DistinctFromOperands;

impl VisitorMut for DistinctFromOperands {
    type Break = Box<DataFusionError>;

    /// Before an expression's parts are visited, so that an expression of
    /// operators is seen whole, from its top.
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        if holds(expr, Reach::All, &took_in_looser) {
            *expr = regroup(std::mem::replace(expr, placeholder()), Reach::All);
        }
        ControlFlow::Continue(())
    }
}

/// Whether `expr` is an `IS [NOT] DISTINCT FROM` whose right operand's
/// operator ranks no higher than `IS`.
fn took_in_looser(expr: &Expr) -> bool {
    match expr {
        Expr::IsDistinctFrom(_, right) | Expr::IsNotDistinctFrom(_, right) => {
            operator_rank(right, Reach::All).is_some_and(|r| r <= IS)
        }
        _ => false,
    }
}
