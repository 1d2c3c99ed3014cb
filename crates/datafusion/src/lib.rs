//! Parquet Variant in DataFusion, over the `vshred` core library.
//!
//! - [`functions`]: Spark's Variant functions (`variant_get`,
//!   `try_variant_get`, `parse_json`, `to_json`, ...), vectorized over
//!   whole Arrow arrays by the core's kernels.
//! - [`cast`]: `CAST(v AS BIGINT)` and `TRY_CAST` of a Variant, as Spark
//!   casts one (`variant_get(v, '$', 'bigint')`).
//! - [`compare`]: `=`, `<`, `IN`, ..., `GROUP BY`, `DISTINCT`, `UNION`,
//!   ... of Variant values refused while planning, as Spark refuses them,
//!   rather than going by their bytes.
//! - [`explode`]: `variant_explode`, a Variant's fields or elements as
//!   rows (of a constant in `FROM`, of a column through `unnest`).
//! - [`colon`]: Spark's `v:a.b` as `variant_get(v, '$.a.b')`;
//!   [`distinct_from`]: `a IS DISTINCT FROM b AND c` as SQL reads it.
//! - [`field_access`]: brackets and dotted names on a Variant refused,
//!   naming `variant_get`.
//! - [`jsonl`]: `read_jsonl('in.jsonl')`, JSON Lines as a table of
//!   Variants.
//! - [`nvl`]: `nvl` and `ifnull` of any type, as Spark's.
//! - [`table`]: files and datasets as tables (`SELECT ... FROM 'dir/'`,
//!   `CREATE EXTERNAL TABLE ... STORED AS PARQUET`), Variant columns typed
//!   `arrow.parquet.variant` whatever each file's layout.
//! - [`scan`]: the scan, which reads a `variant_get` path's leaves alone and
//!   prunes files, row groups and pages by the filters DataFusion pushes to
//!   it ([`filter`]); [`row_filter`] has it run the filter above it
//!   before it computes the outputs the filter does not read.
//! - [`overflow`]: integer `+`, `-`, `*` and `sum` fail on overflow,
//!   where DataFusion's wrap.
//! - [`defer`]: a value that does not convert fails only a row the query
//!   keeps; [`join_keys`]: a join on an expression over a path plans;
//!   [`grouping_sets`]: `ROLLUP(v:a::string)` does too.
//!
//! - [`copy`]: `COPY ... TO` writes Variant columns shredded by our
//!   inference, through the core's writer; [`write_partitions`] writes
//!   each partition of a query to its own file, where its rows are (a
//!   distributed `COPY`); [`whole_files`] keeps DataFusion's own Parquet
//!   writer, for a `COPY` without Variant columns, from leaving a failed
//!   query's rows at the target.
//!
//! - [`store`]: datasets in object stores, named by URL; with the `s3`
//!   feature, [`s3`] makes an `s3://` bucket's store from the
//!   environment when a query first names it ([`runtime_env`]).
//!
//! [`settings`] holds vshred's own (`SET vshred.inexact_numbers =
//! 'double'`). [`context`] makes a `SessionContext` with all of it
//! registered;
//! [`statements`] runs a text of several statements in it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> datafusion::common::Result<()> {
//! let ctx = vshred_datafusion::context(Default::default());
//! let batches = ctx
//!     .sql(r#"SELECT variant_get(parse_json('{"a": {"b": 7}}'), '$.a.b', 'bigint') AS b"#)
//!     .await?
//!     .collect()
//!     .await?;
//! let b = batches[0].column(0).as_any().downcast_ref::<arrow::array::Int64Array>().unwrap();
//! assert_eq!(b.value(0), 7);
//! # Ok(()) }
//! ```

pub mod aggregate_order;
pub mod cast;
pub mod colon;
pub mod compare;
pub mod copy;
pub mod decimal_double;
pub mod defer;
pub mod distinct_from;
pub mod explode;
pub mod field_access;
pub mod filter;
pub mod functions;
pub mod grouping_sets;
pub mod join_keys;
pub mod jsonl;
pub mod nvl;
pub mod operators;
pub mod overflow;
pub mod process_runtime;
pub mod quantile_order;
pub mod row_filter;
#[cfg(feature = "s3")]
pub mod s3;
pub mod scan;
pub mod schema_of;
pub mod settings;
pub mod statements;
pub mod store;
pub mod table;
pub mod truth_tests;
pub mod whole_files;
pub mod write_partitions;

use std::sync::Arc;

use datafusion::catalog::DynamicFileCatalog;
use datafusion::catalog::UrlTableFactory;
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
#[cfg(not(feature = "s3"))]
use datafusion::execution::object_store::DefaultObjectStoreRegistry;
use datafusion::execution::object_store::ObjectStoreRegistry;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::{FunctionRegistry, SessionStateBuilder};
use datafusion::logical_expr::planner::ExprPlanner;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_session::SessionStore;

use settings::VshredSettings;
use table::{VariantTableFactory, VariantUrlTables};

/// Most distinct keys of a hash join's build side pushed to the probe
/// side's scan as an `IN` list, unless a session sets
/// `datafusion.optimizer.hash_join_inlist_pushdown_max_distinct_values`.
pub const RUNTIME_FILTER_KEYS: usize = 10_000;

/// DataFusion's default configuration with vshred's settings registered
/// ([`settings::VshredSettings`]), so that `vshred.*` keys can be set on
/// it before it makes a [`context`].
pub fn session_config() -> SessionConfig {
    SessionConfig::new().with_option_extension(VshredSettings::default())
}

/// DataFusion's runtime, whose object stores, with the `s3` feature,
/// include a store made from the environment for an `s3://` bucket none
/// was registered for ([`s3::StoresFromEnv`]): [`context`]'s. A
/// distributed worker's holds [`object_store_registry`] to its data roots.
pub fn runtime_env() -> Arc<RuntimeEnv> {
    RuntimeEnvBuilder::new()
        .with_object_store_registry(object_store_registry())
        .build_arc()
        .expect("a runtime of DataFusion's defaults builds")
}

/// The object stores of [`runtime_env`]: DataFusion's registry, and with
/// the `s3` feature a bucket's store made from the environment
/// ([`s3::StoresFromEnv`]).
pub fn object_store_registry() -> Arc<dyn ObjectStoreRegistry> {
    #[cfg(feature = "s3")]
    return Arc::new(s3::StoresFromEnv::default());
    #[cfg(not(feature = "s3"))]
    return Arc::new(DefaultObjectStoreRegistry::new());
}

/// A session with the Variant functions, Parquet tables read by
/// [`table::VariantTable`] (by `CREATE EXTERNAL TABLE ... STORED AS
/// PARQUET` and by `FROM 'path'`), and DataFusion's defaults otherwise.
pub fn context(config: SessionConfig) -> SessionContext {
    context_with(config, |state| state)
}

/// [`context`], its session state first passed through `customize` (a
/// distributed engine's planner and codec, say).
pub fn context_with(
    mut config: SessionConfig,
    customize: impl FnOnce(SessionStateBuilder) -> SessionStateBuilder,
) -> SessionContext {
    // A configuration not made by `session_config` gets vshred's settings
    // at their defaults.
    if config
        .options()
        .extensions
        .get::<VshredSettings>()
        .is_none()
    {
        config = config.with_option_extension(VshredSettings::default());
    }
    // A join's keys reach the scan as an IN list (which prunes by each key)
    // only up to this many distinct values; DataFusion's 150 leaves a
    // thousand keys as a hash table, which prunes by their bounds alone.
    let joins = &mut config.options_mut().optimizer;
    let defaults = datafusion::config::OptimizerOptions::default();
    if joins.hash_join_inlist_pushdown_max_distinct_values
        == defaults.hash_join_inlist_pushdown_max_distinct_values
    {
        joins.hash_join_inlist_pushdown_max_distinct_values = RUNTIME_FILTER_KEYS;
    }
    let mut builder = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime_env())
        .with_default_features()
        .with_type_planner(Arc::new(cast::SparkTypeNames));
    // Ahead of DataFusion's own, which plan comparisons and brackets on a
    // Variant as on any struct.
    let ours: [Arc<dyn ExprPlanner>; 3] = [
        Arc::new(compare::VariantComparisonPlanner),
        Arc::new(decimal_double::DecimalDoubleComparison),
        Arc::new(field_access::FieldAccess),
    ];
    builder
        .expr_planners()
        .get_or_insert_default()
        .splice(0..0, ours);
    let mut state = customize(builder).build();
    for function in scalar_functions() {
        state
            .register_udf(function)
            .expect("registering a function does not fail");
    }
    for function in aggregate_functions() {
        state
            .register_udaf(function)
            .expect("registering a function does not fail");
    }
    state
        .register_file_format(Arc::new(copy::VariantParquetFactory), true)
        .expect("registering a file format does not fail");
    for format in whole_files::WholeFilesFactory::csv_and_json() {
        state
            .register_file_format(format, true)
            .expect("registering a file format does not fail");
    }
    state
        .table_factories_mut()
        .insert("PARQUET".into(), Arc::new(VariantTableFactory));
    let others = Arc::new(DynamicListTableFactory::new(SessionStore::new()));
    let catalogs = Arc::new(DynamicFileCatalog::new(
        state.catalog_list().clone(),
        Arc::new(VariantUrlTables::new(others.clone())) as Arc<dyn UrlTableFactory>,
    ));
    let mut builder = SessionStateBuilder::new_from_existing(state).with_catalog_list(catalogs);
    // Ahead of type coercion, which may wrap a Variant in a cast to a
    // struct type that no longer says it is one.
    if let Some(analyzer) = builder.analyzer() {
        // First, where DataFusion runs its function rewrites.
        analyzer.rules.insert(0, Arc::new(cast::VariantCast));
        let rules: [Arc<dyn datafusion::optimizer::AnalyzerRule + Send + Sync>; 6] = [
            Arc::new(field_access::VariantEncoding),
            Arc::new(copy::VariantCopyChecks),
            Arc::new(compare::VariantComparisons),
            Arc::new(decimal_double::DecimalDoubleRanges),
            Arc::new(aggregate_order::AggregateOrder),
            Arc::new(truth_tests::AggregateTruthTests),
        ];
        for rule in rules {
            insert_before(&mut analyzer.rules, "type_coercion", |r| r.name(), rule);
        }
        // Last, once each operand has its type.
        analyzer
            .rules
            .push(Arc::new(overflow::CheckedIntegerArithmetic));
        analyzer
            .rules
            .push(Arc::new(decimal_double::ExactDecimalDoubles));
    }
    // Ahead of DataFusion's move of cheap expressions toward the scans.
    if let Some(optimizer) = builder.optimizer() {
        let rule = Arc::new(defer::DeferVariantFailures);
        insert_before(
            &mut optimizer.rules,
            "extract_leaf_expressions",
            |r| r.name(),
            rule,
        );
    }
    // Once DataFusion has moved the joins' extracted keys below their
    // inputs' aliases, ahead of its pruning of projections.
    if let Some(optimizer) = builder.optimizer() {
        let rule = Arc::new(join_keys::QualifyJoinKeys);
        insert_before(
            &mut optimizer.rules,
            "optimize_projections",
            |r| r.name(),
            rule,
        );
    }
    // Ahead of the repartitions DataFusion adds to spread the work.
    if let Some(optimizer) = builder.physical_optimizers() {
        let rule = Arc::new(scan::ProjectionsIntoScans);
        insert_before(
            &mut optimizer.rules,
            "EnsureRequirements",
            |r| r.name(),
            rule,
        );
    }
    // Last but DataFusion's check, once filters, projections and
    // partitions are where they stay.
    if let Some(optimizer) = builder.physical_optimizers() {
        let rule = Arc::new(row_filter::RowFiltersIntoScans);
        insert_before(&mut optimizer.rules, "SanityCheckPlan", |r| r.name(), rule);
    }
    let ctx: SessionContext = builder.build().into();
    others.session_store().with_state(ctx.state_weak_ref());
    ctx.register_udtf("read_jsonl", Arc::new(jsonl::ReadJsonl));
    for outer in [false, true] {
        let table = explode::VariantExplodeTable { outer };
        ctx.register_udtf(table.name(), Arc::new(table));
    }
    ctx
}

/// The scalar functions a [`context`] has beside DataFusion's, or in
/// place of them: a distributed worker registers them too, to run the
/// plans that call them.
pub fn scalar_functions() -> Vec<Arc<ScalarUDF>> {
    let mut all = functions::all();
    all.extend([
        Arc::new(ScalarUDF::from(nvl::Nvl::default())),
        cast::TO_TIMESTAMP_NTZ.clone(),
        cast::TRY_TO_TIMESTAMP_NTZ.clone(),
        decimal_double::DECIMAL_TO_DOUBLE.clone(),
    ]);
    all.extend(overflow::checked_functions());
    all
}

/// The aggregate functions a [`context`] has beside DataFusion's, or in
/// place of them (`sum`), as [`scalar_functions`].
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    vec![schema_of::schema_of_variant_agg(), overflow::checked_sum()]
}

/// Puts `rule` ahead of the rule named `before` in `rules`, or first if
/// there is none so named.
fn insert_before<R: ?Sized>(
    rules: &mut Vec<Arc<R>>,
    before: &str,
    name: impl Fn(&R) -> &str,
    rule: Arc<R>,
) {
    let at = rules.iter().position(|r| name(r) == before).unwrap_or(0);
    rules.insert(at, rule);
}
