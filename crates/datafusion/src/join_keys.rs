//! A join on an expression over a path (`ON a.v:id::int + 1 = b.v:id::int`)
//! plans.
//!
//! DataFusion 55 moves `variant_get` (and `get_field`) out of a join's keys
//! into a projection below the join, named `__datafusion_extracted_N`, then
//! moves that projection below the join input's alias (`a`). The key is
//! left naming the column without the alias, `__datafusion_extracted_1 +
//! Int64(0)`, while the physical planner, which computes a key that is not
//! a bare column in a projection of its own, names that projection's column
//! after the key with the alias resolved: planning then fails with `Schema
//! error: No field named "__datafusion_extracted_1 + Int64(0)"`, for a
//! struct's `s['id']` as for a Variant's path. [`QualifyJoinKeys`] gives
//! each column of a join's keys the qualifier its input's schema has for
//! it, so the two names agree.

use datafusion::common::Result;
use datafusion::common::tree_node::Transformed;
use datafusion::logical_expr::expr_rewriter::normalize_col;
use datafusion::logical_expr::{Join, LogicalPlan};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

/// The rewrite the module's documentation describes, run after DataFusion
/// moves the keys' extracted expressions below the joins' aliases.
#[derive(Debug)]
pub struct QualifyJoinKeys;

impl OptimizerRule for QualifyJoinKeys {
    fn name(&self) -> &str {
        "qualify_join_keys"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let LogicalPlan::Join(join) = plan else {
            return Ok(Transformed::no(plan));
        };
        let on: Vec<_> = join
            .on
            .iter()
            .map(|(l, r)| {
                Ok((
                    normalize_col(l.clone(), &join.left)?,
                    normalize_col(r.clone(), &join.right)?,
                ))
            })
            .collect::<Result<_>>()?;
        if on == join.on {
            return Ok(Transformed::no(LogicalPlan::Join(join)));
        }
        Ok(Transformed::yes(LogicalPlan::Join(Join { on, ..join })))
    }
}
