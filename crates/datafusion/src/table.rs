//! Parquet files and datasets as DataFusion tables.
//!
//! A [`VariantTable`] is any input the core's [`Dataset::find`] accepts (a
//! file, a directory of `*.parquet` files, a glob), read as one table of
//! the columns its files have: ordinary columns in the type the files agree
//! on, Variant columns as the canonical `arrow.parquet.variant` extension
//! type over an unshredded struct (`metadata`, `value`), whatever each
//! file's layout. It is what `SELECT ... FROM 'path/'` reads
//! ([`VariantUrlTables`]) and what `CREATE EXTERNAL TABLE t STORED AS
//! PARQUET LOCATION 'path/'` creates ([`VariantTableFactory`]). A URL
//! (`s3://bucket/logs/`, `file:///data/`) is read from the session's
//! object store for it ([`crate::store`]).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory, UrlTableFactory};
use datafusion::common::{Result, plan_err};
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use vshred::dataset::Dataset;
use vshred::dataset::hive::HiveType;
use vshred::dataset::storage::is_glob;
use vshred::parquet::{Projected, Projection, is_parquet_by_content};

use crate::filter::{combine, to_predicate};
use crate::functions::external;
use crate::scan::VariantScanExec;
use crate::store::{storage_of, store_url};

/// A dataset of Parquet files with Variant columns, as a table.
pub struct VariantTable {
    dataset: Mutex<Arc<Dataset>>,
    /// What a table that lasts past a query (`CREATE EXTERNAL TABLE`) was
    /// found from: each scan finds its files again, so that a query reads
    /// and counts them as they are then, not as they were (a file
    /// rewritten meanwhile was read anew while `count(*)` gave its old
    /// rows from the footer read before).
    location: Option<std::path::PathBuf>,
    /// Every column, whole.
    columns: Projection,
    schema: SchemaRef,
}

impl VariantTable {
    /// The table of the files `input` names ([`Dataset::find`]); their
    /// footers are read here, once, to know the columns.
    pub fn open(input: &Path) -> Result<VariantTable> {
        VariantTable::new(Dataset::find(input).map_err(external)?)
    }

    /// The table of the files `location` names: a local path as
    /// [`open`](Self::open) takes, or a URL of an object store `runtime`
    /// has registered ([`StoreFiles`](crate::store::StoreFiles)).
    pub fn open_location(location: &str, runtime: &RuntimeEnv) -> Result<VariantTable> {
        let dataset = Dataset::find_in(Path::new(location), storage_of(location, runtime)?);
        VariantTable::new(dataset.map_err(external)?)
    }

    /// What the glob `location` matches: the table of its files if every
    /// one is Parquet (named `.parquet`, or on a local disk starting as
    /// one); an error naming the pattern if it matches none.
    fn of_parquet_glob(location: &str, runtime: &RuntimeEnv) -> Result<GlobMatches> {
        use std::path::PathBuf;
        let storage = storage_of(location, runtime)?;
        let files = storage.find(Path::new(location)).map_err(external)?;
        let local = store_url(location).is_none();
        let parquet = |f: &PathBuf| {
            f.extension().is_some_and(|e| e == "parquet") || (local && is_parquet_by_content(f))
        };
        let (parquet_files, others): (Vec<&PathBuf>, Vec<&PathBuf>) =
            files.iter().partition(|f| parquet(f));
        let Some(&other) = others.first() else {
            let dataset = Dataset::of_found(Path::new(location), files, storage);
            let table = VariantTable::new(dataset.map_err(external)?)?;
            return Ok(GlobMatches::Parquet(Box::new(table)));
        };
        if let Some(&parquet) = parquet_files.first() {
            return Ok(GlobMatches::Kinds(parquet.clone(), other.clone()));
        }
        // DataFusion would read the files of the first one's extension
        // alone.
        let first = other.extension();
        Ok(match others.iter().find(|f| f.extension() != first) {
            Some(&another) => GlobMatches::Kinds(other.clone(), another.clone()),
            None => GlobMatches::OneKind(other.clone()),
        })
    }

    /// The table of `dataset`.
    pub fn new(dataset: Dataset) -> Result<VariantTable> {
        let columns = Projection {
            outputs: dataset
                .columns()
                .map_err(external)?
                .all
                .iter()
                .map(|name| (name.clone(), Projected::Column(name.clone())))
                .collect(),
            ..Projection::default()
        };
        // Columns the files disagree on are in the table, as the first
        // file has them: a scan of one fails (`scan`), a scan of others
        // reads.
        let known = dataset.columns().map_err(external)?;
        let schema = columns.schema(|name| known.plain_type(name));
        Ok(VariantTable {
            dataset: Mutex::new(Arc::new(dataset)),
            location: None,
            columns,
            schema,
        })
    }

    /// The dataset a scan reads: found again where the table has a
    /// location.
    fn dataset(&self) -> Result<Arc<Dataset>> {
        let lock = || self.dataset.lock().unwrap_or_else(PoisonError::into_inner);
        let current = lock().clone();
        let Some(location) = &self.location else {
            return Ok(current);
        };
        // Found without the lock held: listing and opening files take a
        // while.
        let again = Arc::new(current.found_again(location).map_err(external)?);
        *lock() = again.clone();
        Ok(again)
    }
}

/// What a glob whose last part has no extension (`logs/*`) matches.
enum GlobMatches {
    /// Parquet files alone, the table of them.
    Parquet(Box<VariantTable>),
    /// Files of two kinds (or more), one of each.
    Kinds(std::path::PathBuf, std::path::PathBuf),
    /// Files of one kind, not Parquet (CSV, say): the first.
    OneKind(std::path::PathBuf),
}

impl std::fmt::Debug for VariantTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dataset = self.dataset.lock().unwrap_or_else(PoisonError::into_inner);
        write!(f, "VariantTable({} files)", dataset.files().len())
    }
}

#[async_trait]
impl TableProvider for VariantTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let chosen: Vec<usize> = match projection {
            Some(indices) => indices.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let scan = Projection {
            outputs: chosen
                .iter()
                .map(|&i| self.columns.outputs[i].clone())
                .collect(),
            filter: combine(filters),
            ..Projection::default()
        };
        let schema = Arc::new(self.schema.project(&chosen)?);
        let dataset = self.dataset()?;
        dataset.projection_schema(&scan).map_err(external)?;
        Ok(Arc::new(VariantScanExec::new(dataset, scan, schema)))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        // The scan prunes by what translates; DataFusion filters the rows.
        Ok(filters
            .iter()
            .map(|f| match to_predicate(f) {
                Some(_) => TableProviderFilterPushDown::Inexact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }
}

/// `CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 'path'` as a
/// [`VariantTable`].
#[derive(Debug, Default)]
pub struct VariantTableFactory;

#[async_trait]
impl TableProviderFactory for VariantTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let [location] = cmd.locations.as_slice() else {
            return plan_err!("a Variant table has one location (a file, a directory or a glob)");
        };
        let mut table = VariantTable::open_location(location, state.runtime_env())?;
        check_partition_columns(cmd, &table, location)?;
        table.location = Some(location.into());
        Ok(Arc::new(table))
    }
}

/// The directories' columns are found, not declared: `PARTITIONED BY` may
/// only name them, all and as they nest, with their types if it gives any.
fn check_partition_columns(
    cmd: &CreateExternalTable,
    table: &VariantTable,
    location: &str,
) -> Result<()> {
    if cmd.table_partition_cols.is_empty() {
        return Ok(());
    }
    // DataFusion 55 keeps a quoted name's quotes.
    let declared: Vec<&str> = cmd
        .table_partition_cols
        .iter()
        .map(|name| {
            name.strip_prefix('"')
                .and_then(|n| n.strip_suffix('"'))
                .unwrap_or(name)
        })
        .collect();
    let listed = declared.join(", ");
    let dataset = table.dataset()?;
    let found = dataset.hive_columns().map_or(&[][..], |h| h.columns());
    if found.is_empty() {
        return plan_err!("PARTITIONED BY ({listed}): {location} has no key=value directories");
    }
    if found
        .iter()
        .map(|(n, _)| n.as_str())
        .ne(declared.iter().copied())
    {
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        return plan_err!(
            "PARTITIONED BY ({listed}): the key=value directories of {location} are {}, which the table has as its last columns; name them all, in order, or none",
            names.join(", ")
        );
    }
    for (name, hive_type) in found {
        use datafusion::arrow::datatypes::DataType;
        let fits = |declared: &DataType| match hive_type {
            HiveType::Int64 => *declared == DataType::Int64,
            // VARCHAR is Utf8View in DataFusion 55.
            HiveType::String => {
                matches!(
                    declared,
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                )
            }
        };
        if let Ok(field) = cmd.schema.field_with_unqualified_name(name)
            && !fits(field.data_type())
        {
            return plan_err!(
                "PARTITIONED BY ({listed}): {name} is declared {}, and its directories hold {} values",
                field.data_type(),
                hive_type.name()
            );
        }
    }
    Ok(())
}

/// `SELECT ... FROM 'path'`: a Parquet file, directory or glob as a
/// [`VariantTable`]; other files as DataFusion reads them.
#[derive(Debug)]
pub struct VariantUrlTables {
    others: Arc<DynamicListTableFactory>,
}

impl VariantUrlTables {
    /// Files other than Parquet go to `others`.
    pub fn new(others: Arc<DynamicListTableFactory>) -> VariantUrlTables {
        VariantUrlTables { others }
    }
}

#[async_trait]
impl UrlTableFactory for VariantUrlTables {
    async fn try_new(&self, url: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let is_parquet = match store_url(url) {
            // A store has no directories to look at: a prefix ends in `/`.
            Some(_) => url.ends_with(".parquet") || url.ends_with('/'),
            None => {
                let path = Path::new(url);
                let extension = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .map(str::to_ascii_lowercase);
                match extension.as_deref() {
                    Some("parquet") => true,
                    Some("jsonl" | "ndjson") if path.is_file() => {
                        return plan_err!(
                            "{url} is JSON Lines, which read_jsonl('{url}') reads (FROM reads Parquet files and what DataFusion reads)"
                        );
                    }
                    // A name ending in `/` is a directory, there or not: one
                    // that is not there is named as missing, not as an
                    // unknown table. A file of another name is Parquet if
                    // it starts as one, as `vshred cat` takes it.
                    _ => path.is_dir() || url.ends_with('/') || is_parquet_by_content(path),
                }
            }
        };
        let runtime = || -> Result<Arc<RuntimeEnv>> {
            match self.others.session_store().get_session().upgrade() {
                Some(session) => Ok(session.read().runtime_env().clone()),
                None => plan_err!("the session of {url} has ended"),
            }
        };
        if is_parquet || (is_glob(url) && url.ends_with(".parquet")) {
            return Ok(Some(Arc::new(VariantTable::open_location(
                url,
                runtime()?.as_ref(),
            )?)));
        }
        // A glob whose last part has no extension (`logs/*`, `logs/day=*`)
        // is ours when it matches Parquet files alone, and DataFusion's
        // when it matches files of one other kind (CSV files, say).
        let last = url.rsplit('/').next().unwrap_or(url);
        let mut one_kind = None;
        if is_glob(url) && !last.contains('.') {
            match VariantTable::of_parquet_glob(url, runtime()?.as_ref())? {
                GlobMatches::Parquet(table) => return Ok(Some(Arc::new(*table))),
                GlobMatches::Kinds(one, another) => {
                    return plan_err!(
                        "{url} matches files of more than one kind, {} and {} (FROM reads a glob that matches Parquet files alone, or files of one kind that DataFusion reads by their extension)",
                        one.display(),
                        another.display()
                    );
                }
                GlobMatches::OneKind(first) => one_kind = Some(first),
            }
        }
        let other = self.others.try_new(url).await?;
        if let (None, Some(first)) = (&other, one_kind) {
            return plan_err!(
                "{url} matches {}, which is not a Parquet file (FROM reads a glob that matches Parquet files alone, or files of one kind that DataFusion reads by their extension)",
                first.display()
            );
        }
        if other.is_none() && store_url(url).is_none() && Path::new(url).is_file() {
            return plan_err!(
                "{url} is not a Parquet file (FROM reads Parquet files, and CSV, JSON, Avro and Arrow files by their extension)"
            );
        }
        Ok(other)
    }
}
