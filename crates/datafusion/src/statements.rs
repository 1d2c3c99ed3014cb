//! A text of SQL statements run in a session one at a time, as `vshred
//! sql` and the Python module run it: parsed in the session's dialect
//! (`datafusion.sql_parser.dialect`), each then planned and run in turn,
//! so that a `CREATE` is seen by the statements after it. A `COPY` to a
//! directory writes Parquet unless it says otherwise
//! ([`copy::parquet_by_default`]), Spark's `v:a.b` is `variant_get(v,
//! '$.a.b')` ([`colon`]), and the text is read as SQL ranks its operators
//! ([`distinct_from`]) and as DuckDB reads a percentile's inline `ORDER
//! BY` ([`quantile_order`]).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> datafusion::common::Result<()> {
//! use vshred_datafusion::statements::{execute, parse_statements};
//! let ctx = vshred_datafusion::context(Default::default());
//! let text = "CREATE VIEW seven AS SELECT 7 AS n; SELECT n * 6 AS answer FROM seven";
//! let mut answers = Vec::new();
//! for statement in parse_statements(&ctx, text)? {
//!     answers = execute(&ctx, statement).await?.collect().await?;
//! }
//! assert_eq!(answers[0].num_rows(), 1);
//! # Ok(()) }
//! ```

use std::ops::ControlFlow;

use datafusion::common::{DataFusionError, Result, plan_datafusion_err, plan_err};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{CopyToSource, DFParserBuilder, Statement};
use datafusion::sql::sqlparser::ast::{
    Query, SetExpr, SetOperator, SetQuantifier, Visit, VisitMut, Visitor, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::dialect_from_str;

use crate::{colon, copy, distinct_from, quantile_order};

/// A statement parsed and rewritten by [`parse_statements`], to
/// [`execute`].
pub struct ParsedStatement {
    /// Its columns that hold an `x:path` named as written
    /// ([`colon::ExtractionNames`]).
    named: Statement,
    /// The same without those names, if it had any: planned where `named`
    /// does not plan.
    unnamed: Option<Statement>,
}

/// The statements of `text`, separated by `;`, in the session's dialect.
pub fn parse_statements(ctx: &SessionContext, text: &str) -> Result<Vec<ParsedStatement>> {
    let dialect = ctx.state().config().options().sql_parser.dialect;
    let dialect = dialect_from_str(dialect)
        .ok_or_else(|| plan_datafusion_err!("unsupported SQL dialect {dialect}"))?;
    let statements = DFParserBuilder::new(text)
        .with_dialect(dialect.as_ref())
        .build()?
        .parse_statements()?;
    statements
        .into_iter()
        .map(|mut statement| {
            copy::parquet_by_default(&mut statement);
            copy::unquote_partition_columns(&mut statement);
            let mut named = statement.clone();
            let mut names = colon::ExtractionNames::default();
            rewrite_expressions(&mut named, &mut names)?;
            Ok(ParsedStatement {
                named: rewritten(named)?,
                unnamed: names.found.then(|| rewritten(statement)).transpose()?,
            })
        })
        .collect()
}

/// `statement` with Spark's `x:path` ([`colon`]), the operands of `IS
/// [NOT] DISTINCT FROM` ([`distinct_from`]) and a percentile's inline
/// `ORDER BY` ([`quantile_order`]) rewritten.
fn rewritten(mut statement: Statement) -> Result<Statement> {
    rewrite_expressions(&mut statement, &mut colon::Colons)?;
    rewrite_expressions(&mut statement, &mut distinct_from::DistinctFromOperands)?;
    rewrite_expressions(&mut statement, &mut quantile_order::QuantileOrder)?;
    Ok(statement)
}

/// `statement`'s expressions, those of the query an `EXPLAIN` or a `COPY`
/// holds included, rewritten by `visitor`.
pub(crate) fn rewrite_expressions(
    statement: &mut Statement,
    visitor: &mut impl VisitorMut<Break = Box<DataFusionError>>,
) -> Result<()> {
    let visited = match statement {
        Statement::Statement(statement) => statement.visit(visitor),
        Statement::CopyTo(copy) => match &mut copy.source {
            CopyToSource::Query(query) => query.visit(visitor),
            CopyToSource::Relation(_) => ControlFlow::Continue(()),
        },
        Statement::Explain(explain) => return rewrite_expressions(&mut explain.statement, visitor),
        Statement::CreateExternalTable(_) | Statement::Reset(_) => ControlFlow::Continue(()),
    };
    match visited {
        ControlFlow::Break(e) => Err(*e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// `e`, of statement `index` (from 0) of `count`, saying which one when
/// there are several ([`error_message`](crate::functions::error_message)
/// prints it before the error).
pub fn in_statement(e: DataFusionError, index: usize, count: usize) -> DataFusionError {
    match count {
        0 | 1 => e,
        _ => e.context(format!("statement {} of {count}", index + 1)),
    }
}

/// Plans `statement` and runs it as far as DataFusion runs a statement
/// before its rows are asked for (DDL and `SET` take effect here).
///
/// A statement whose extractions' names do not plan is planned with the
/// names DataFusion gives them, which name the relation read: `SELECT *,
/// v:k FROM (SELECT v, v:k FROM t) c` would have two columns `v:k`, and
/// has `variant_get(t.v,Utf8("$.k"))` and `variant_get(c.v,Utf8("$.k"))`.
/// One that plans neither way is refused as DataFusion refuses it.
pub async fn execute(ctx: &SessionContext, statement: ParsedStatement) -> Result<DataFrame> {
    refuse_miscounted_set_operations(&statement.named)?;
    let state = ctx.state();
    let plan = match (
        state.statement_to_plan(statement.named).await,
        statement.unnamed,
    ) {
        (Err(_), Some(unnamed)) => state.statement_to_plan(unnamed).await?,
        (planned, _) => planned?,
    };
    ctx.execute_logical_plan(plan).await
}

/// Refuses `INTERSECT ALL` and `EXCEPT ALL`, anywhere in `statement`:
/// DataFusion 55 gives a row the wrong number of times (every copy on the
/// left for `INTERSECT ALL`, none of a row the right has for `EXCEPT
/// ALL`), a wrong answer without a word.
fn refuse_miscounted_set_operations(statement: &Statement) -> Result<()> {
    /// Stops at the first such operation: its name and DataFusion's issue.
    struct Miscounted;

    impl Visitor for Miscounted {
        type Break = (&'static str, &'static str);

        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<Self::Break> {
            match miscounted(&query.body) {
                Some(found) => ControlFlow::Break(found),
                None => ControlFlow::Continue(()),
            }
        }
    }

    fn miscounted(body: &SetExpr) -> Option<(&'static str, &'static str)> {
        let SetExpr::SetOperation {
            op,
            set_quantifier,
            left,
            right,
        } = body
        else {
            return None;
        };
        let all = matches!(
            set_quantifier,
            SetQuantifier::All | SetQuantifier::AllByName
        );
        match op {
            SetOperator::Intersect if all => Some(("INTERSECT", "12955")),
            SetOperator::Except | SetOperator::Minus if all => Some(("EXCEPT", "12956")),
            _ => miscounted(left).or_else(|| miscounted(right)),
        }
    }

    let found = match statement {
        Statement::Statement(statement) => statement.visit(&mut Miscounted),
        Statement::CopyTo(copy) => match &copy.source {
            CopyToSource::Query(query) => query.visit(&mut Miscounted),
            CopyToSource::Relation(_) => ControlFlow::Continue(()),
        },
        Statement::Explain(explain) => return refuse_miscounted_set_operations(&explain.statement),
        Statement::CreateExternalTable(_) | Statement::Reset(_) => ControlFlow::Continue(()),
    };
    match found {
        ControlFlow::Break((op, issue)) => plan_err!(
            "{op} ALL is refused: DataFusion 55 gives rows the wrong number of times (apache/datafusion#{issue}); {op} without ALL gives each row once"
        ),
        ControlFlow::Continue(()) => Ok(()),
    }
}
