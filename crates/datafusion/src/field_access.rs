//! `v['a']` and `v[0]` on a Variant are refused, naming `variant_get`:
//! brackets would read the struct that holds the Variant (its `metadata`
//! bytes, or a field it does not have). Other brackets, a struct's field (`s['a']`)
//! and a list's elements (`l[1]`, `l[1:2]`), are DataFusion's own.

use datafusion::common::{DFSchema, Result, plan_err};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawFieldAccessExpr};
use datafusion::logical_expr::{ExprSchemable, GetFieldAccess};
use vshred::parquet::is_variant_field;

/// Refuses brackets on a Variant; leaves other brackets to DataFusion.
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
        match &expr.field_access {
            GetFieldAccess::NamedStructField { name } if variant => {
                let name = name.try_as_str().flatten().unwrap_or_default();
                plan_err!(
                    "{}['{name}']: a Variant's field is read by variant_get(x, '$.{name}') (or with a type, variant_get(x, '$.{name}', 'bigint')); brackets would read the Variant's own encoding",
                    expr.expr
                )
            }
            GetFieldAccess::ListIndex { .. } | GetFieldAccess::ListRange { .. } if variant => {
                plan_err!(
                    "{}[...]: a Variant array's element is read by variant_get(x, '$[0]') (or with a type, variant_get(x, '$[0]', 'bigint'))",
                    expr.expr
                )
            }
            _ => Ok(PlannerResult::Original(expr)),
        }
    }
}
