//! A rewritten key of `GROUP BY ROLLUP`, `CUBE` or `GROUPING SETS` keeps
//! its name.
//!
//! DataFusion keeps an expression's name across a rewrite by aliasing the
//! rewritten expression to the old name, whole: a grouping set so aliased
//! groups as one key named `ROLLUP (...)`, and planning fails with `No field
//! named ...`. Two of vshred's rewrites change a key's name: a cast of a
//! Variant ([`crate::cast`], `ROLLUP(v:a::string)`) and a conversion that
//! may fail, written as two calls ([`crate::defer`]). Here each key of a set
//! keeps its own name (`map_keeping_names`), and a `grouping(...)` call
//! names a renamed key as the set holds it (`grouping_args_as_keys`).

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::GroupingSet;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan};

/// `node` with `rewrite` applied to every part of each of its expressions,
/// from the leaves up, given the schema of the node's inputs, each
/// expression keeping its name ([`map_keeping_names`]): how vshred's
/// analyzer rules rewrite a node.
pub(crate) fn rewrite_keeping_names(
    node: LogicalPlan,
    rewrite: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    let schema = merge_schema(&node.inputs());
    map_keeping_names(node, |expr| expr.transform_up(|e| rewrite(e, &schema)))
}

/// `plan` with `rewrite` applied to each of its expressions, each keeping
/// its name; a grouping set's keys each keep theirs.
pub(crate) fn map_keeping_names(
    plan: LogicalPlan,
    mut rewrite: impl FnMut(Expr) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    let names = NamePreserver::new(&plan);
    let mut keeping_name = |expr: Expr| {
        let name = names.save(&expr);
        Ok(rewrite(expr)?.update_data(|e| name.restore(e)))
    };
    plan.map_expressions(|expr| match expr {
        Expr::GroupingSet(set) => map_keys(set, &mut keeping_name),
        expr => keeping_name(expr),
    })
}

/// `set` with `rewrite` applied to each of its keys.
fn map_keys(
    set: GroupingSet,
    rewrite: &mut impl FnMut(Expr) -> Result<Transformed<Expr>>,
) -> Result<Transformed<Expr>> {
    let mut changed = false;
    let mut keys = |keys: Vec<Expr>| {
        keys.into_iter()
            .map(|key| {
                let key = rewrite(key)?;
                changed |= key.transformed;
                Ok(key.data)
            })
            .collect::<Result<Vec<_>>>()
    };
    let set = match set {
        GroupingSet::Rollup(k) => GroupingSet::Rollup(keys(k)?),
        GroupingSet::Cube(k) => GroupingSet::Cube(keys(k)?),
        GroupingSet::GroupingSets(sets) => {
            GroupingSet::GroupingSets(sets.into_iter().map(&mut keys).collect::<Result<_>>()?)
        }
    };
    Ok(Transformed::new_transformed(
        Expr::GroupingSet(set),
        changed,
    ))
}

/// `plan`'s `grouping(...)` calls with each argument that is a key,
/// renamed, as that key is written: DataFusion finds the keys that
/// `grouping` names by the expressions themselves.
pub(crate) fn grouping_args_as_keys(plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Aggregate(aggregate) = &plan else {
        return Ok(Transformed::no(plan));
    };
    let renamed: Vec<(&Expr, &Expr)> = aggregate
        .group_expr
        .iter()
        .flat_map(|e| match e {
            Expr::GroupingSet(set) => set.distinct_expr(),
            key => vec![key],
        })
        .filter_map(|key| match key {
            Expr::Alias(alias) => Some((alias.expr.as_ref(), key)),
            _ => None,
        })
        .collect();
    if renamed.is_empty() {
        return Ok(Transformed::no(plan));
    }
    let mut changed = false;
    let aggr_expr = aggregate
        .aggr_expr
        .iter()
        .map(|expr| {
            expr.clone()
                .transform_up(|e| match e {
                    Expr::AggregateFunction(mut call) if call.func.name() == "grouping" => {
                        for arg in &mut call.params.args {
                            if let Some((_, key)) = renamed.iter().find(|(inner, _)| *inner == arg)
                            {
                                *arg = (*key).clone();
                                changed = true;
                            }
                        }
                        Ok(Transformed::yes(Expr::AggregateFunction(call)))
                    }
                    e => Ok(Transformed::no(e)),
                })
                .map(|t| t.data)
        })
        .collect::<Result<Vec<_>>>()?;
    if !changed {
        return Ok(Transformed::no(plan));
    }
    let aggregate = Aggregate::try_new(
        aggregate.input.clone(),
        aggregate.group_expr.clone(),
        aggr_expr,
    )?;
    Ok(Transformed::yes(LogicalPlan::Aggregate(aggregate)))
}
