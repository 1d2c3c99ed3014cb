//! `percentile_cont(x, 0.5 ORDER BY k)` as DuckDB reads it: the
//! percentile of `x`. DataFusion 55 reads an `ORDER BY` written inside the
//! arguments of `percentile_cont`, `quantile_cont`,
//! `approx_percentile_cont` and `approx_percentile_cont_with_weight` as
//! their `WITHIN GROUP (ORDER BY ...)`, its key the value, and drops the
//! first argument: when the key is not that argument, the answer is the
//! percentile of the key, with no error. Such an `ORDER BY` is dropped
//! before DataFusion reads the call, as DuckDB ignores it (a percentile
//! does not depend on the order of its input); one on the first argument
//! itself, DataFusion's way of writing `WITHIN GROUP`, stays.

use std::ops::ControlFlow;

use datafusion::common::DataFusionError;
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArgumentClause, FunctionArguments, VisitorMut,
};

/// The functions DataFusion reads an inline `ORDER BY` of as their
/// `WITHIN GROUP`.
const ORDERED_SET: &[&str] = &[
    "percentile_cont",
    "quantile_cont",
    "approx_percentile_cont",
    "approx_percentile_cont_with_weight",
];

/// Drops an inline `ORDER BY` of a percentile on a key other than its
/// first argument ([`crate::statements::rewrite_expressions`]).
pub(crate) struct QuantileOrder;

impl VisitorMut for QuantileOrder {
    type Break = Box<DataFusionError>;

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Self::Break> {
        let Expr::Function(call) = expr else {
            return ControlFlow::Continue(());
        };
        let named = call
            .name
            .0
            .last()
            .and_then(|part| part.as_ident())
            .is_some_and(|name| {
                ORDERED_SET
                    .iter()
                    .any(|f| name.value.eq_ignore_ascii_case(f))
            });
        let FunctionArguments::List(list) = &mut call.args else {
            return ControlFlow::Continue(());
        };
        if !named || list.args.len() < 2 {
            return ControlFlow::Continue(());
        }
        let first = match &list.args[0] {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        };
        list.clauses.retain(|clause| match clause {
            FunctionArgumentClause::OrderBy(keys) => {
                matches!(&keys[..], [key] if Some(&key.expr) == first.as_ref())
            }
            _ => true,
        });
        ControlFlow::Continue(())
    }
}
