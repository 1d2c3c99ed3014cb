//! `nvl(a, b)` and `ifnull(a, b)` as `coalesce(a, b)`, which they are.
//! DataFusion 55's own take only numbers, booleans and strings, so Spark's
//! `nvl(v, parse_json('0'))` of a Variant (or of a date, a decimal, a
//! struct) failed to plan, where `coalesce` takes any type. (They also
//! take more than two arguments now, as `coalesce` does.)

use std::sync::Arc;

use datafusion::logical_expr::ScalarUDF;

/// `coalesce` under the names `nvl` and `ifnull`, in place of DataFusion's
/// (registered by [`crate::context`]).
pub fn nvl() -> Arc<ScalarUDF> {
    let coalesce = datafusion::functions::core::coalesce();
    Arc::new(coalesce.as_ref().clone().with_aliases(["nvl", "ifnull"]))
}
