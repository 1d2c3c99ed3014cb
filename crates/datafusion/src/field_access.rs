//! `s['a']`, a struct's field by name, read as `s.a` is (`get_field`):
//! DataFusion plans brackets through its nested functions, which this
//! build leaves out, and refused them naming its own internals. A list's
//! element by index (`l[1]`, `l[1:2]`) is refused, naming what reads one.

use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawFieldAccessExpr};
use datafusion::logical_expr::{Expr, GetFieldAccess};

/// Plans `s['a']` as `get_field(s, 'a')` and refuses `l[i]`.
#[derive(Debug)]
pub struct FieldAccess;

impl ExprPlanner for FieldAccess {
    fn plan_field_access(
        &self,
        expr: RawFieldAccessExpr,
        _schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        match expr.field_access {
            GetFieldAccess::NamedStructField { name } => Ok(PlannerResult::Planned(
                datafusion::functions::core::get_field()
                    .call(vec![expr.expr, Expr::Literal(name, None)]),
            )),
            GetFieldAccess::ListIndex { .. } | GetFieldAccess::ListRange { .. } => plan_err!(
                "a list's elements by index ([1], [1:2]) are not in this build of vshred sql; of a Variant, variant_get(v, '$.tags[0]', 'string') reads one"
            ),
        }
    }
}
