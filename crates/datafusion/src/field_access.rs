//! `s['a']`, a struct's field by name, read as `s.a` is (`get_field`):
//! DataFusion plans brackets through its nested functions, which this
//! build leaves out, and refused them naming its own internals. A list's
//! element by index (`l[1]`, `l[1:2]`) is refused, naming what reads one,
//! and so is a Variant's field by name (`v['a']` would read the struct
//! that holds the Variant, its `metadata` bytes or nothing), naming
//! `variant_get`.

use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawFieldAccessExpr};
use datafusion::logical_expr::{Expr, ExprSchemable, GetFieldAccess};
use vshred::parquet::is_variant_field;

/// Plans `s['a']` as `get_field(s, 'a')` and refuses `l[i]`.
#[derive(Debug)]
pub struct FieldAccess;

impl ExprPlanner for FieldAccess {
    fn plan_field_access(
        &self,
        expr: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        let variant = expr
            .expr
            .to_field(schema)
            .is_ok_and(|(_, field)| is_variant_field(&field));
        match expr.field_access {
            GetFieldAccess::NamedStructField { name } if variant => {
                let name = name.try_as_str().flatten().unwrap_or_default();
                plan_err!(
                    "{}['{name}']: a Variant's field is read by variant_get(x, '$.{name}') (or with a type, variant_get(x, '$.{name}', 'bigint')); brackets would read the Variant's own encoding",
                    expr.expr
                )
            }
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
